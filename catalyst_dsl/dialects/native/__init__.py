"""The native dialect: Catalyst YAML and Markdown playbooks lowered into the IR.

`lowerer.CatalystLowerer` reads a playbook; it is put together from parts by concern (the
playbook's header keys, inputs, error policies, steps, functions), each in a module of its
own. `vocabulary` holds the keys and shapes the language allows, `markdown` the Markdown
form, and `checks` a step's `requires:`/`ensures:`.
"""
