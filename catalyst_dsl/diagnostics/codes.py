"""The registry of diagnostic codes: stable, each with a name, a severity and a summary.

Codes never change meaning; a retired code is kept and marked so. docs/diagnostics.md is
generated from this table and the golden cases (tests/golden/check/CXXX-*.yaml|md).
"""

from __future__ import annotations

from catalyst_dsl.diagnostics.model import Severity
from catalyst_dsl.records import record

E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


@record
class Code:
    code: str
    name: str
    severity: Severity
    summary: str
    #: No longer reported: kept so that its number is never given another meaning.
    retired: bool = False


_TABLE = [
    # C0xx: the file and its YAML
    Code(
        "C001", "unreadable-file", E, "The file is not UTF-8 text: binary, UTF-16, invalid bytes or control characters."
    ),
    Code("C002", "yaml-syntax", E, "The YAML does not parse."),
    Code("C003", "byte-order-mark", W, "The file starts with a UTF-8 byte-order mark."),
    Code("C004", "multiple-documents", E, "A playbook file holds more than one YAML document."),
    Code("C005", "tab-indentation", E, "A tab is used for indentation."),
    Code("C006", "duplicate-key", E, "A key appears twice in one mapping (YAML would keep only the last)."),
    Code("C007", "alias-bomb", E, "Aliases expand to far more nodes than the file holds."),
    Code("C008", "bad-alias", E, "An alias has no anchor before it, or refers to its own ancestor."),
    Code("C009", "too-deep", E, "Collections are nested deeper than any playbook needs."),
    Code("C010", "unsupported-tag", E, "A YAML tag other than the standard ones, or a value its tag does not fit."),
    Code("C011", "non-string-key", W, "A key that YAML reads as something other than text (on, yes, 1)."),
    Code("C012", "complex-key", E, "A collection used as a mapping key."),
    Code("C013", "yaml11-value", W, "A plain value that YAML 1.1 tools read as a boolean, number or date."),
    Code("C014", "empty-file", E, "The file is empty."),
    Code("C015", "file-too-large", E, "The file is larger than a playbook can reasonably be."),
    Code("C016", "number-too-large", E, "A number with more digits than any playbook needs (over 100)."),
    Code(
        "C017",
        "merge-key",
        W,
        "A YAML merge key (<<): a YAML 1.1 extension that YAML 1.2 tools read as an ordinary key.",
    ),
    Code(
        "C018",
        "not-a-playbook",
        E,
        "A YAML file that is not a playbook (none of a playbook's keys) was named to be checked; directory scans skip such files.",
    ),
    # C1xx: templates and expressions
    Code("C101", "expression-syntax", E, "A ${{ }} expression does not parse."),
    Code("C102", "reference-syntax", E, "A {{ }} holds something other than a name, a dotted path or a protocol path."),
    Code("C103", "outside-subset", E, "An expression uses a construct the safe expression language leaves out."),
    Code("C104", "unclosed-template", E, "A {{ or ${{ is never closed."),
    Code("C105", "nested-template", E, "A {{ }} inside another template."),
    Code("C106", "protocol-path", E, "A protocol path is unknown, absolute or climbs out of its base."),
    Code("C107", "not-allowed-call", E, "A function or method that the expression language does not allow."),
    # C2xx: the playbook's structure
    Code("C201", "not-a-playbook", E, "The document is not a mapping of playbook keys."),
    Code("C202", "unknown-key", E, "A key that is not part of the language at this place."),
    Code("C203", "missing-key", E, "A required key is missing."),
    Code("C204", "no-steps", E, "The playbook has no steps."),
    Code("C205", "name-id-conflict", E, "`name` and its alias `id` are both given and differ."),
    Code("C206", "not-kebab-case", E, "A playbook, step or function name is not kebab-case."),
    Code("C207", "language-version", E, "The `catalyst` language version is not supported."),
    # C3xx: values and declarations
    Code("C302", "wrong-type", E, "A value of the wrong type for its key."),
    Code("C303", "invalid-value", E, "A value outside the allowed set (enum, policy, transform, type name)."),
    Code(
        "C304",
        "bad-regex",
        E,
        "A validation regex does not compile, or uses what linear-time matching (RE2) lacks: backreferences, lookaround.",
    ),
    Code("C305", "min-above-max", E, "A minimum above its maximum: no value can pass."),
    Code("C306", "duplicate-input", E, "Two inputs with the same name."),
    Code("C307", "two-input-types", E, "An input declaration with two type keys."),
    Code("C308", "enum-without-values", E, "An enum input without `allowed` values."),
    Code("C309", "error-code-case", W, "An error code that is not PascalCase."),
    # C4xx: steps and actions
    Code("C401", "step-not-mapping", E, "A step that is not a mapping."),
    Code("C402", "no-action", E, "A step with no action key."),
    Code("C403", "two-actions", E, "A step with two action keys."),
    Code(
        "C404",
        "unknown-action",
        E,
        "An action that is neither built in, defined by a function earlier, nor registered by a plugin.",
    ),
    Code(
        "C408",
        "writes-not-shell",
        W,
        "`writes:` on a step that is not shell-like: its action declares its own writes, or writes nothing a step declares.",
    ),
    Code("C409", "timeout-milliseconds", W, "A bare-number timeout so large it was probably meant in milliseconds."),
    Code(
        "C410",
        "function-shadows-action",
        E,
        "A function named like an action (a built-in one or one an installed plugin provides).",
    ),
    Code("C411", "duplicate-step-name", E, "Two steps with one name, or a step named like an input."),
    # C5xx: references and types
    Code("C501", "undefined-reference", E, "A reference to a name that is not defined anywhere visible."),
    Code("C502", "type-mismatch", E, "A template whose type does not fit where it is used."),
    Code("C503", "used-before-defined", E, "A reference to a name defined only later, or only inside another block."),
    Code("C504", "no-such-member", E, "A member that the value's type does not have."),
    Code("C505", "member-of-non-object", E, "Member access on a value that has no members."),
    Code("C506", "operand-type", E, "An operator or loop given a value of the wrong type."),
    Code("C507", "always-true-condition", E, "A condition that can never be false."),
    Code(
        "C508",
        "maybe-undefined",
        W,
        "A name defined only on some paths through an earlier block (one branch of an `if`, a loop that may not run, a `try` that may fail) is read where it may be missing.",
    ),
    # C6xx: outputs and artifacts
    Code("C601", "outputs-as-artifacts", INFO, "`outputs` written as a list of paths: read as artifacts."),
    Code("C602", "output-never-set", E, "A declared output that no `return` sets."),
    Code("C603", "undeclared-return", W, "A `return` key that is not a declared output."),
    Code("C610", "unknown-check", E, "A step's `requires:` or `ensures:` names a predicate that does not exist."),
    Code(
        "C611",
        "check-form",
        E,
        "A check of `requires:` or `ensures:` that is not `- predicate: argument` or a `${{ }}` expression, or lacks what its predicate needs.",
    ),
    Code(
        "C612",
        "check-pattern",
        E,
        "A check's regular expression does not compile, or uses what linear-time matching (RE2) lacks.",
    ),
    Code("C613", "retry-block-attempts", E, "A `retry-block` whose `maxAttempts` is not a whole number from 1 to 10."),
    Code(
        "C614",
        "bindings-name",
        E,
        "An input or a step named `bindings`, the name of the object steps merge values into.",
    ),
    Code("C615", "retry-from-unknown-step", E, "A `retry-block`'s `retryFrom` names a step that is not in the block."),
    Code("C616", "one-run-per-input", E, "`oneRunPer` names something other than a declared input."),
    # C7xx: Markdown playbooks
    Code("C701", "unclosed-front-matter", E, "Front matter opened with --- and never closed."),
    Code("C702", "empty-input-name", E, "An `## Inputs` list item with no input name."),
    # C8xx: the library as a whole: settings, calls, cycles, permissions
    Code("C801", "bad-settings", E, "The project settings (catalyst.toml or [tool.catalyst]) are not valid."),
    Code("C802", "duplicate-playbook", E, "Two playbooks in the library have the same name."),
    Code(
        "C803",
        "file-name-mismatch",
        W,
        "A playbook's file name differs from its `name`, so calls by name cannot find it by location.",
    ),
    Code("C804", "unknown-playbook", E, "A call or `@` reference to a playbook that is not in the library."),
    Code("C805", "missing-call-input", E, "A call leaves out an input the called playbook requires."),
    Code("C806", "unknown-call-input", E, "A call passes an input the called playbook does not declare."),
    Code("C807", "call-input-type", E, "A call passes a value whose type the called playbook's input cannot take."),
    Code("C808", "dynamic-call", INFO, "A call whose target is computed at run time: it is not checked."),
    Code("C809", "call-cycle", E, "Playbooks that call each other in a cycle."),
    Code(
        "C810",
        "conditional-self-call",
        W,
        "A playbook that calls itself under a condition: the run's depth limit applies.",
    ),
    Code("C811", "unconditional-self-call", E, "A playbook that calls itself unconditionally: it can never finish."),
    Code(
        "C812",
        "bad-path",
        E,
        "A write path or pattern that is absolute, climbs out of the project, or is not a valid pattern.",
    ),
    Code(
        "C813", "write-not-allowed", E, "A write to a path outside the playbook's `allowedWritePaths` and `artifacts`."
    ),
    Code(
        "C814",
        "writes-anywhere",
        INFO,
        "A playbook that writes but declares no `allowedWritePaths`: it may write anywhere in the project.",
    ),
    Code(
        "C815",
        "child-writes-read-only",
        E,
        "A called playbook that writes, called without `inheritPermissions: true`, so it runs read-only.",
    ),
    Code("C816", "child-writes-beyond-parent", E, "A called playbook that writes where its caller may not."),
    Code(
        "C817",
        "unchecked-shell-writes",
        INFO,
        "A shell-like step without `writes:`: its program may write only scratch and the temp folder (where Landlock confines it; elsewhere what it writes is not checked).",
    ),
    Code("C818", "parallel-write-overlap", E, "Steps of one `parallel` group that may write the same paths."),
    Code(
        "C819",
        "program-not-installed",
        INFO,
        "A step whose action needs a program (node for `script`, pwsh for `powershell`, git for `git-*`) that is not on this machine's PATH: it fails here with ActionUnavailable.",
    ),
    Code(
        "C820",
        "ai-write-tools-unbounded",
        E,
        "An AI step granted tools that change things (any but the read-only ones of docs/running.md) in a playbook with no `allowedWritePaths`.",
    ),
    Code(
        "C821",
        "raw-untrusted-in-script",
        W,
        "An input, a step result (an AI answer too) or another outside value reaches a script through raw(), unescaped.",
    ),
    Code(
        "C822",
        "unescapable-script-value",
        E,
        "A value in a script stands where bash or a program reads it as code: arithmetic, a variable name, the program position, eval or bash -c.",
    ),
    Code(
        "C823",
        "unescaped-javascript-value",
        W,
        "A template pasted into a `script` step's JavaScript, which is not escaped: read values with get().",
    ),
    Code(
        "C824",
        "program-writes-protected",
        E,
        "A shell-like step that declares it writes inside `.git/` or the state directory, which the confinement of programs never grants.",
    ),
    Code("C826", "unknown-role", E, "A playbook's `owner` or reviewer role that the settings' `roles` do not list."),
    Code(
        "C827",
        "role-without-approver",
        E,
        "A required reviewer role nobody in the settings' `approvers` holds: no approval could release the playbook's checkpoints.",
    ),
    Code(
        "C828",
        "unsignable-approval",
        E,
        "`signed-approvals` is on but nobody could sign for a required reviewer role: no `approvers`, no allowed-signers file, or no key in it for a holder of the role.",
    ),
    # C04x: suppression comments (`# catalyst: ignore[…]`)
    Code(
        "C040",
        "unused-suppression",
        W,
        "A `catalyst: ignore[…]` comment names a code that nothing on its line (or in its file, for ignore-file) reports.",
    ),
    Code("C041", "unknown-suppression-code", W, "A `catalyst: ignore[…]` comment names a code that does not exist."),
    # C940-C979: foreign dialects, cleo `.cantbook` (DIALECTS.md B3.3)
    Code("C940", "cleo-version", E, "A cantbook's `version` is not the string \"1.0\" (an unquoted 1.0 is a number)."),
    Code("C941", "cleo-unknown-node", E, "An edge end or a `depends` entry names no node of the cantbook."),
    Code("C942", "cleo-duplicate-edge", E, "The same edge, or the same `depends` entry, is written twice."),
    Code("C943", "cleo-edge-repeats-depends", W, "A `depends` entry repeats an edge written under `edges`."),
    Code("C944", "cleo-cycle", E, "The nodes' edges and `depends` form a cycle (the message names it in order)."),
    Code(
        "C945",
        "cleo-several-entries",
        E,
        "More than one node has no predecessor: cleo runs only the first, the others never.",
    ),
    Code("C946", "cleo-unreachable-node", E, "A node no path from the entry reaches: it never runs."),
    Code(
        "C947",
        "cleo-routing",
        E,
        "A node's out-edges cannot choose one successor: several unguarded, or unguarded mixed with guarded.",
    ),
    Code(
        "C948",
        "cleo-guards-not-exhaustive",
        W,
        "A node's guards are not provably exclusive and exhaustive (a lone guard, unrelated guards, or a list compared by identity).",
    ),
    Code("C949", "cleo-zero-iterations", INFO, "`max_iterations: 0` means one attempt, the same as 1."),
    Code("C950", "cleo-unknown-inject-target", E, "`on_failure.inject_into` names no node."),
    Code(
        "C951",
        "cleo-loop-back",
        W,
        "`on_failure.inject_into` loops back (cleo never ends that loop; catalyst bounds it) or names a node that is not earlier.",
    ),
    Code(
        "C952",
        "cleo-inject-into-self",
        INFO,
        "`on_failure.inject_into` names the node itself: the same as leaving it out.",
    ),
    Code(
        "C953", "cleo-requires-from", E, "`requires.from` names no node, or a node that does not run before this one."
    ),
    Code("C954", "cleo-unknown-schema", E, "`ensures.schema` is not one of the schemas cleo knows."),
    Code(
        "C955",
        "cleo-undeclared-key",
        W,
        "A `{{ }}` template names neither a declared input nor a key an earlier node declares, or is no template in cleo (a '-' in the name).",
    ),
    Code("C956", "cleo-required-with-default", W, "An input is required and has a default, which is then never used."),
    Code(
        "C957",
        "cleo-command-form",
        E,
        "A deterministic `command` holds spaces or a template: it names the program only, with no shell.",
    ),
    Code("C958", "cleo-denied-command", E, "A deterministic `command` is on cleo's deny list (rm, dd, kill, …)."),
    Code(
        "C959",
        "cleo-policy-unguarded",
        W,
        "A command that cleo's default policy gives to a person (git push, npm publish, …) with no approval node before it on every path.",
    ),
    Code("C960", "cleo-timeout", W, "`timeout_ms` is zero (no time limit) or has a fraction of a millisecond."),
    Code("C961", "cleo-duplicate-handler", W, "Two error handlers for the same `on`: only the first is used."),
    Code("C962", "cleo-context-file-outside", E, "A `context_files` entry is absolute or climbs out of the project."),
    Code(
        "C963",
        "cleo-no-effect",
        INFO,
        "A key cleo reads but that changes nothing here (contracts on an approval node), or a `policy` catalyst gives its own meaning.",
    ),
    Code("C964", "cleo-name-style", W, "A cantbook's `name` is not kebab-case."),
    Code(
        "C965",
        "cleo-node-id-style",
        W,
        "A node id that references cannot name (it must start with a letter or '_' and hold letters, digits, '_' and '-').",
    ),
    Code(
        "C966",
        "cleo-irreducible-graph",
        E,
        "A cantbook graph that does not reduce to nested if/else (a node reached by two branches before they join), or nests too deep.",
    ),
    Code(
        "C967",
        "cleo-project-write-grant",
        INFO,
        "cleo declares no writes: the cantbook's nodes may write anywhere in the project except .git/ and the state directory.",
    ),
    Code(
        "C968",
        "cleo-ambiguous-file",
        W,
        "A YAML file with cleo's `nodes` and `version` and the native `steps`: it is read as a native playbook.",
    ),
    # C63x: gates, approval policies and agent identity
    Code(
        "C630",
        "gate-options",
        E,
        "A `checkpoint:` on a step whose answers make no sense: `skip` after the step ran, no `yes`, or an answer twice.",
    ),
    Code(
        "C631",
        "approved-not-ai",
        E,
        "`approved: true` on a step that is not an AI step: only an AI step's effects can be pre-approved by the author.",
    ),
    Code(
        "C632",
        "approved-nothing",
        W,
        "`approved: true` on an AI step granted no tool that changes things: there is nothing to pre-approve.",
    ),
    Code(
        "C633", "policy-rule-pattern", E, "An approval-policy rule whose `pattern` is not a usable regular expression."
    ),
    Code(
        "C634",
        "slash-command-form",
        E,
        "An `ai-prompt` `command` that is not a slash command (`/name` and its arguments).",
    ),
    Code(
        "C635",
        "slash-command-missing",
        W,
        "An `ai-prompt` slash command with no `.claude/commands/<name>.md` in the project.",
    ),
    # C9xx: foreign dialects (kai: DIALECTS.md Part A)
    Code(
        "C900",
        "dialect-ambiguous",
        W,
        "A YAML file shaped both like a kai playbook and like a native one: it is read as native.",
    ),
    Code(
        "C901",
        "kai-command-form",
        E,
        "A kai step's `command` is not a literal slash command `/namespace.command` (kai does not interpolate it).",
    ),
    Code(
        "C902",
        "kai-not-interpolated",
        W,
        "A `{{ }}` in a kai value other than a step's `args`: kai leaves it as written.",
    ),
    Code("C903", "kai-parallel-group-split", E, "Steps of one kai `parallel_group` are not next to each other."),
    Code("C904", "kai-condition-order", W, "A kai precondition that only a later step lists as a postcondition."),
    Code("C905", "kai-repeated-value", W, "The same condition or trigger twice in one kai list."),
    Code("C906", "kai-no-args", W, "A kai playbook without the `args:` key its format asks for."),
    Code("C907", "kai-arg-name", W, "A kai arg name that a `{{ }}` cannot name."),
    Code("C908", "kai-trigger-never-fires", W, "`postcondition_fail` on a kai step that has no postconditions."),
    Code(
        "C909",
        "kai-skip-ignores",
        INFO,
        "Conditions, triggers, `model` or `parallel_group` on a kai step whose autonomy is `skip`: they have no effect.",
    ),
    Code(
        "C910",
        "kai-optional-arg",
        INFO,
        "An optional kai arg in a step's `args`: it renders as empty text when it is not given.",
    ),
    Code(
        "C911",
        "kai-project-grant",
        INFO,
        "A kai playbook's agents may write anywhere in the project, as kai gives them every tool.",
    ),
    Code(
        "C912",
        "kai-command-missing",
        W,
        "Retired: a kai step's missing command file is C635, as for every `ai-prompt` naming a slash command.",
        retired=True,
    ),
    Code(
        "C913",
        "kai-index-mismatch",
        W,
        "An entry of `.playbooks/_index.yaml` whose file is missing or differs from it.",
    ),
    Code("C914", "kai-index-missing-entry", INFO, "A kai playbook that `.playbooks/_index.yaml` does not list."),
]

CODES: dict[str, Code] = {c.code: c for c in _TABLE}
assert len(CODES) == len(_TABLE), "a diagnostic code is declared twice"
