"""The diagnostic codes of the foreign dialects (kai playbooks, cleo `.cantbook` graphs),
each as codes.Code takes it (code, name, severity, summary, and True when retired):
codes.py places them in its table, in the order docs/diagnostics.md lists them."""

from __future__ import annotations

from catalyst_dsl.diagnostics import ids
from catalyst_dsl.diagnostics.severity import Severity

E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


CLEO_CODES = [
    # C940-C979: foreign dialects, cleo `.cantbook`
    (
        ids.CLEO_VERSION,
        "cleo-version",
        E,
        "A cantbook's `version` is not the string \"1.0\" (an unquoted 1.0 is a number).",
    ),
    (ids.CLEO_UNKNOWN_NODE, "cleo-unknown-node", E, "An edge end or a `depends` entry names no node of the cantbook."),
    (
        ids.CLEO_DUPLICATE_EDGE,
        "cleo-duplicate-edge",
        E,
        "The same edge, or the same `depends` entry, is written twice.",
    ),
    (
        ids.CLEO_EDGE_REPEATS_DEPENDS,
        "cleo-edge-repeats-depends",
        W,
        "A `depends` entry repeats an edge written under `edges`.",
    ),
    (ids.CLEO_CYCLE, "cleo-cycle", E, "The nodes' edges and `depends` form a cycle (the message names it in order)."),
    (
        ids.CLEO_SEVERAL_ENTRIES,
        "cleo-several-entries",
        E,
        "More than one node has no predecessor: cleo runs only the first, the others never.",
    ),
    (ids.CLEO_UNREACHABLE_NODE, "cleo-unreachable-node", E, "A node no path from the entry reaches: it never runs."),
    (
        ids.CLEO_ROUTING,
        "cleo-routing",
        E,
        "A node's out-edges cannot choose one successor: several unguarded, or unguarded mixed with guarded.",
    ),
    (
        ids.CLEO_GUARDS_NOT_EXHAUSTIVE,
        "cleo-guards-not-exhaustive",
        W,
        "A node's guards are not provably exclusive and exhaustive (a lone guard, unrelated guards, or a list "
        "compared by identity).",
    ),
    (ids.CLEO_ZERO_ITERATIONS, "cleo-zero-iterations", INFO, "`max_iterations: 0` means one attempt, the same as 1."),
    (ids.CLEO_UNKNOWN_INJECT_TARGET, "cleo-unknown-inject-target", E, "`on_failure.inject_into` names no node."),
    (
        ids.CLEO_LOOP_BACK,
        "cleo-loop-back",
        W,
        "`on_failure.inject_into` loops back (cleo never ends that loop; catalyst bounds it) or names a node that is "
        "not earlier.",
    ),
    (
        ids.CLEO_INJECT_INTO_SELF,
        "cleo-inject-into-self",
        INFO,
        "`on_failure.inject_into` names the node itself: the same as leaving it out.",
    ),
    (
        ids.CLEO_REQUIRES_FROM,
        "cleo-requires-from",
        E,
        "`requires.from` names no node, or a node that does not run before this one.",
    ),
    (ids.CLEO_UNKNOWN_SCHEMA, "cleo-unknown-schema", E, "`ensures.schema` is not one of the schemas cleo knows."),
    (
        ids.CLEO_UNDECLARED_KEY,
        "cleo-undeclared-key",
        W,
        "A `{{ }}` template names neither a declared input nor a key an earlier node declares, or is no template in "
        "cleo (a '-' in the name).",
    ),
    (
        ids.CLEO_REQUIRED_WITH_DEFAULT,
        "cleo-required-with-default",
        W,
        "An input is required and has a default, which is then never used.",
    ),
    (
        ids.CLEO_COMMAND_FORM,
        "cleo-command-form",
        E,
        "A deterministic `command` holds spaces or a template: it names the program only, with no shell.",
    ),
    (
        ids.CLEO_DENIED_COMMAND,
        "cleo-denied-command",
        E,
        "A deterministic `command` is on cleo's deny list (rm, dd, kill, …).",
    ),
    (
        ids.CLEO_POLICY_UNGUARDED,
        "cleo-policy-unguarded",
        W,
        "A command that cleo's default policy gives to a person (git push, npm publish, …) with no approval node "
        "before it on every path.",
    ),
    (ids.CLEO_TIMEOUT, "cleo-timeout", W, "`timeout_ms` is zero (no time limit) or has a fraction of a millisecond."),
    (
        ids.CLEO_DUPLICATE_HANDLER,
        "cleo-duplicate-handler",
        W,
        "Two error handlers for the same `on`: only the first is used.",
    ),
    (
        ids.CLEO_CONTEXT_FILE_OUTSIDE,
        "cleo-context-file-outside",
        E,
        "A `context_files` entry is absolute or climbs out of the project.",
    ),
    (
        ids.CLEO_NO_EFFECT,
        "cleo-no-effect",
        INFO,
        "A key cleo reads but that changes nothing here (contracts on an approval node), or a `policy` catalyst gives "
        "its own meaning.",
    ),
    (ids.CLEO_NAME_STYLE, "cleo-name-style", W, "A cantbook's `name` is not kebab-case."),
    (
        ids.CLEO_NODE_ID_STYLE,
        "cleo-node-id-style",
        W,
        "A node id that references cannot name (it must start with a letter or '_' and hold letters, digits, '_' and "
        "'-').",
    ),
    (
        ids.CLEO_IRREDUCIBLE_GRAPH,
        "cleo-irreducible-graph",
        E,
        "A cantbook graph that does not reduce to nested if/else (a node reached by two branches before they join), "
        "or nests too deep.",
    ),
    (
        ids.CLEO_PROJECT_WRITE_GRANT,
        "cleo-project-write-grant",
        INFO,
        "cleo declares no writes: the cantbook's nodes may write anywhere in the project except .git/ and the state "
        "directory.",
    ),
    (
        ids.CLEO_AMBIGUOUS_FILE,
        "cleo-ambiguous-file",
        W,
        "A YAML file with cleo's `nodes` and `version` and the native `steps`: it is read as a native playbook.",
    ),
]

KAI_CODES = [
    # C9xx: foreign dialects (kai)
    (
        ids.DIALECT_AMBIGUOUS,
        "dialect-ambiguous",
        W,
        "A YAML file shaped both like a kai playbook and like a native one: it is read as native.",
    ),
    (
        ids.KAI_COMMAND_FORM,
        "kai-command-form",
        E,
        "A kai step's `command` is not a literal slash command `/namespace.command` (kai does not interpolate it).",
    ),
    (
        ids.KAI_NOT_INTERPOLATED,
        "kai-not-interpolated",
        W,
        "A `{{ }}` in a kai value other than a step's `args`: kai leaves it as written.",
    ),
    (
        ids.KAI_PARALLEL_GROUP_SPLIT,
        "kai-parallel-group-split",
        E,
        "Steps of one kai `parallel_group` are not next to each other.",
    ),
    (
        ids.KAI_CONDITION_ORDER,
        "kai-condition-order",
        W,
        "A kai precondition that only a later step lists as a postcondition.",
    ),
    (ids.KAI_REPEATED_VALUE, "kai-repeated-value", W, "The same condition or trigger twice in one kai list."),
    (ids.KAI_NO_ARGS, "kai-no-args", W, "A kai playbook without the `args:` key its format asks for."),
    (ids.KAI_ARG_NAME, "kai-arg-name", W, "A kai arg name that a `{{ }}` cannot name."),
    (
        ids.KAI_TRIGGER_NEVER_FIRES,
        "kai-trigger-never-fires",
        W,
        "`postcondition_fail` on a kai step that has no postconditions.",
    ),
    (
        ids.KAI_SKIP_IGNORES,
        "kai-skip-ignores",
        INFO,
        "Conditions, triggers, `model` or `parallel_group` on a kai step whose autonomy is `skip`: they have no "
        "effect.",
    ),
    (
        ids.KAI_OPTIONAL_ARG,
        "kai-optional-arg",
        INFO,
        "An optional kai arg in a step's `args`: it renders as empty text when it is not given.",
    ),
    (
        ids.KAI_PROJECT_GRANT,
        "kai-project-grant",
        INFO,
        "A kai playbook's agents may write anywhere in the project, as kai gives them every tool.",
    ),
    (
        ids.KAI_COMMAND_MISSING,
        "kai-command-missing",
        W,
        "Retired: a kai step's missing command file is C635, as for every `ai-prompt` naming a slash command.",
        True,  # retired
    ),
    (
        ids.KAI_INDEX_MISMATCH,
        "kai-index-mismatch",
        W,
        "An entry of `.playbooks/_index.yaml` whose file is missing or differs from it.",
    ),
    (
        ids.KAI_INDEX_MISSING_ENTRY,
        "kai-index-missing-entry",
        INFO,
        "A kai playbook that `.playbooks/_index.yaml` does not list.",
    ),
]
