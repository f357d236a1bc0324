"""The kai dialect: playbooks of the kai supervisor (`.playbooks/playbooks/*.yaml`), checked
and lowered into the IR.

Reading keeps kai's meaning (names as written, strings as their source text, `{{ name }}`
only in a step's `args`) and reports every mistake in one pass (rules KAI-01 to KAI-19 of
A3.3): `reader` (the registry's entry: `sniff`, `compile_document`), over `step_reading`
and `pieces`. The lowering (A5, `lowering` and `conditions`) uses the language's step
checks (conditions as `requires:`/`ensures:`), checkpoints before a step with a `human`
policy (`gate_always`), slash-command AI steps and per-code error policies (triggers);
nothing of it is kai-only. `model` holds kai's vocabulary and what a read file says.
Library-level rules (the command files of KAI-13, the index of KAI-20) are in
`checks/kai.py`; kai's session files, which a run keeps, in `integrations/`.
"""
