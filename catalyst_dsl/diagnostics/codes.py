"""The registry of diagnostic codes: stable, each with a name, a severity and a summary.

Codes never change meaning; a retired code is kept and marked so. docs/diagnostics.md is
generated from this table and the golden cases (tests/golden/check/CXXX-*.yaml|md). The
checks name a code by its constant in ids.py, which this table uses too.
"""

from __future__ import annotations

from catalyst_dsl.diagnostics import ids
from catalyst_dsl.diagnostics.dialect_codes import CLEO_CODES, KAI_CODES
from catalyst_dsl.diagnostics.severity import Severity
from catalyst_dsl._internal.records import record

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
        ids.UNREADABLE_FILE,
        "unreadable-file",
        E,
        "The file is not UTF-8 text: binary, UTF-16, invalid bytes or control characters.",
    ),
    Code(ids.YAML_SYNTAX, "yaml-syntax", E, "The YAML does not parse."),
    Code(ids.BYTE_ORDER_MARK, "byte-order-mark", W, "The file starts with a UTF-8 byte-order mark."),
    Code(ids.MULTIPLE_DOCUMENTS, "multiple-documents", E, "A playbook file holds more than one YAML document."),
    Code(ids.TAB_INDENTATION, "tab-indentation", E, "A tab is used for indentation."),
    Code(ids.DUPLICATE_KEY, "duplicate-key", E, "A key appears twice in one mapping (YAML would keep only the last)."),
    Code(ids.ALIAS_BOMB, "alias-bomb", E, "Aliases expand to far more nodes than the file holds."),
    Code(ids.BAD_ALIAS, "bad-alias", E, "An alias has no anchor before it, or refers to its own ancestor."),
    Code(ids.TOO_DEEP, "too-deep", E, "Collections are nested deeper than any playbook needs."),
    Code(
        ids.UNSUPPORTED_TAG,
        "unsupported-tag",
        E,
        "A YAML tag other than the standard ones, or a value its tag does not fit.",
    ),
    Code(ids.NON_STRING_KEY, "non-string-key", W, "A key that YAML reads as something other than text (on, yes, 1)."),
    Code(ids.COMPLEX_KEY, "complex-key", E, "A collection used as a mapping key."),
    Code(ids.YAML11_VALUE, "yaml11-value", W, "A plain value that YAML 1.1 tools read as a boolean, number or date."),
    Code(ids.EMPTY_FILE, "empty-file", E, "The file is empty."),
    Code(ids.FILE_TOO_LARGE, "file-too-large", E, "The file is larger than a playbook can reasonably be."),
    Code(ids.NUMBER_TOO_LARGE, "number-too-large", E, "A number with more digits than any playbook needs (over 100)."),
    Code(
        ids.MERGE_KEY,
        "merge-key",
        W,
        "A YAML merge key (<<): a YAML 1.1 extension that YAML 1.2 tools read as an ordinary key.",
    ),
    Code(
        ids.NOT_A_PLAYBOOK_FILE,
        "not-a-playbook",
        E,
        "A YAML file that is not a playbook (none of a playbook's keys) was named to be checked; directory scans skip "
        "such files.",
    ),
    # C1xx: templates and expressions
    Code(ids.EXPRESSION_SYNTAX, "expression-syntax", E, "A ${{ }} expression does not parse."),
    Code(
        ids.REFERENCE_SYNTAX,
        "reference-syntax",
        E,
        "A {{ }} holds something other than a name, a dotted path or a protocol path.",
    ),
    Code(
        ids.OUTSIDE_SUBSET,
        "outside-subset",
        E,
        "An expression uses a construct the safe expression language leaves out.",
    ),
    Code(ids.UNCLOSED_TEMPLATE, "unclosed-template", E, "A {{ or ${{ is never closed."),
    Code(ids.NESTED_TEMPLATE, "nested-template", E, "A {{ }} inside another template."),
    Code(ids.PROTOCOL_PATH, "protocol-path", E, "A protocol path is unknown, absolute or climbs out of its base."),
    Code(
        ids.NOT_ALLOWED_CALL, "not-allowed-call", E, "A function or method that the expression language does not allow."
    ),
    # C2xx: the playbook's structure
    Code(ids.NOT_A_PLAYBOOK, "not-a-playbook", E, "The document is not a mapping of playbook keys."),
    Code(ids.UNKNOWN_KEY, "unknown-key", E, "A key that is not part of the language at this place."),
    Code(ids.MISSING_KEY, "missing-key", E, "A required key is missing."),
    Code(ids.NO_STEPS, "no-steps", E, "The playbook has no steps."),
    Code(ids.NAME_ID_CONFLICT, "name-id-conflict", E, "`name` and its alias `id` are both given and differ."),
    Code(ids.NOT_KEBAB_CASE, "not-kebab-case", E, "A playbook, step or function name is not kebab-case."),
    Code(ids.LANGUAGE_VERSION, "language-version", E, "The `catalyst` language version is not supported."),
    # C3xx: values and declarations
    Code(ids.WRONG_TYPE, "wrong-type", E, "A value of the wrong type for its key."),
    Code(
        ids.INVALID_VALUE, "invalid-value", E, "A value outside the allowed set (enum, policy, transform, type name)."
    ),
    Code(
        ids.BAD_REGEX,
        "bad-regex",
        E,
        "A validation regex does not compile, or uses what linear-time matching (RE2) lacks: backreferences, "
        "lookaround.",
    ),
    Code(ids.MIN_ABOVE_MAX, "min-above-max", E, "A minimum above its maximum: no value can pass."),
    Code(ids.DUPLICATE_INPUT, "duplicate-input", E, "Two inputs with the same name."),
    Code(ids.TWO_INPUT_TYPES, "two-input-types", E, "An input declaration with two type keys."),
    Code(ids.ENUM_WITHOUT_VALUES, "enum-without-values", E, "An enum input without `allowed` values."),
    Code(ids.ERROR_CODE_CASE, "error-code-case", W, "An error code that is not PascalCase."),
    # C4xx: steps and actions
    Code(ids.STEP_NOT_MAPPING, "step-not-mapping", E, "A step that is not a mapping."),
    Code(ids.NO_ACTION, "no-action", E, "A step with no action key."),
    Code(ids.TWO_ACTIONS, "two-actions", E, "A step with two action keys."),
    Code(
        ids.UNKNOWN_ACTION,
        "unknown-action",
        E,
        "An action that is neither built in, defined by a function earlier, nor registered by a plugin.",
    ),
    Code(
        ids.WRITES_NOT_SHELL,
        "writes-not-shell",
        W,
        "`writes:` on a step that is not shell-like: its action declares its own writes, or writes nothing a step "
        "declares.",
    ),
    Code(
        ids.TIMEOUT_MILLISECONDS,
        "timeout-milliseconds",
        W,
        "A bare-number timeout so large it was probably meant in milliseconds.",
    ),
    Code(
        ids.FUNCTION_SHADOWS_ACTION,
        "function-shadows-action",
        E,
        "A function named like an action (a built-in one or one an installed plugin provides).",
    ),
    Code(ids.DUPLICATE_STEP_NAME, "duplicate-step-name", E, "Two steps with one name, or a step named like an input."),
    # C5xx: references and types
    Code(
        ids.UNDEFINED_REFERENCE, "undefined-reference", E, "A reference to a name that is not defined anywhere visible."
    ),
    Code(ids.TYPE_MISMATCH, "type-mismatch", E, "A template whose type does not fit where it is used."),
    Code(
        ids.USED_BEFORE_DEFINED,
        "used-before-defined",
        E,
        "A reference to a name defined only later, or only inside another block.",
    ),
    Code(ids.NO_SUCH_MEMBER, "no-such-member", E, "A member that the value's type does not have."),
    Code(ids.MEMBER_OF_NON_OBJECT, "member-of-non-object", E, "Member access on a value that has no members."),
    Code(ids.OPERAND_TYPE, "operand-type", E, "An operator or loop given a value of the wrong type."),
    Code(ids.ALWAYS_TRUE_CONDITION, "always-true-condition", E, "A condition that can never be false."),
    Code(
        ids.MAYBE_UNDEFINED,
        "maybe-undefined",
        W,
        "A name defined only on some paths through an earlier block (one branch of an `if`, a loop that may not run, "
        "a `try` that may fail) is read where it may be missing.",
    ),
    # C6xx: outputs and artifacts
    Code(
        ids.OUTPUTS_AS_ARTIFACTS,
        "outputs-as-artifacts",
        INFO,
        "`outputs` written as a list of paths: read as artifacts.",
    ),
    Code(ids.OUTPUT_NEVER_SET, "output-never-set", E, "A declared output that no `return` sets."),
    Code(ids.UNDECLARED_RETURN, "undeclared-return", W, "A `return` key that is not a declared output."),
    Code(
        ids.UNKNOWN_CHECK,
        "unknown-check",
        E,
        "A step's `requires:` or `ensures:` names a predicate that does not exist.",
    ),
    Code(
        ids.CHECK_FORM,
        "check-form",
        E,
        "A check of `requires:` or `ensures:` that is not `- predicate: argument` or a `${{ }}` expression, or lacks "
        "what its predicate needs.",
    ),
    Code(
        ids.CHECK_PATTERN,
        "check-pattern",
        E,
        "A check's regular expression does not compile, or uses what linear-time matching (RE2) lacks.",
    ),
    Code(
        ids.RETRY_BLOCK_ATTEMPTS,
        "retry-block-attempts",
        E,
        "A `retry-block` whose `maxAttempts` is not a whole number from 1 to 10.",
    ),
    Code(
        ids.BINDINGS_NAME,
        "bindings-name",
        E,
        "An input or a step named `bindings`, the name of the object steps merge values into.",
    ),
    Code(
        ids.RETRY_FROM_UNKNOWN_STEP,
        "retry-from-unknown-step",
        E,
        "A `retry-block`'s `retryFrom` names a step that is not in the block.",
    ),
    Code(ids.ONE_RUN_PER_INPUT, "one-run-per-input", E, "`oneRunPer` names something other than a declared input."),
    # C7xx: Markdown playbooks
    Code(ids.UNCLOSED_FRONT_MATTER, "unclosed-front-matter", E, "Front matter opened with --- and never closed."),
    Code(ids.EMPTY_INPUT_NAME, "empty-input-name", E, "An `## Inputs` list item with no input name."),
    # C8xx: the library as a whole: settings, calls, cycles, permissions
    Code(ids.BAD_SETTINGS, "bad-settings", E, "The project settings (catalyst.toml or [tool.catalyst]) are not valid."),
    Code(ids.DUPLICATE_PLAYBOOK, "duplicate-playbook", E, "Two playbooks in the library have the same name."),
    Code(
        ids.FILE_NAME_MISMATCH,
        "file-name-mismatch",
        W,
        "A playbook's file name differs from its `name`, so calls by name cannot find it by location.",
    ),
    Code(
        ids.UNKNOWN_PLAYBOOK, "unknown-playbook", E, "A call or `@` reference to a playbook that is not in the library."
    ),
    Code(ids.MISSING_CALL_INPUT, "missing-call-input", E, "A call leaves out an input the called playbook requires."),
    Code(
        ids.UNKNOWN_CALL_INPUT, "unknown-call-input", E, "A call passes an input the called playbook does not declare."
    ),
    Code(
        ids.CALL_INPUT_TYPE,
        "call-input-type",
        E,
        "A call passes a value whose type the called playbook's input cannot take.",
    ),
    Code(ids.DYNAMIC_CALL, "dynamic-call", INFO, "A call whose target is computed at run time: it is not checked."),
    Code(ids.CALL_CYCLE, "call-cycle", E, "Playbooks that call each other in a cycle."),
    Code(
        ids.CONDITIONAL_SELF_CALL,
        "conditional-self-call",
        W,
        "A playbook that calls itself under a condition: the run's depth limit applies.",
    ),
    Code(
        ids.UNCONDITIONAL_SELF_CALL,
        "unconditional-self-call",
        E,
        "A playbook that calls itself unconditionally: it can never finish.",
    ),
    Code(
        ids.BAD_PATH,
        "bad-path",
        E,
        "A write path or pattern that is absolute, climbs out of the project, or is not a valid pattern.",
    ),
    Code(
        ids.WRITE_NOT_ALLOWED,
        "write-not-allowed",
        E,
        "A write to a path outside the playbook's `allowedWritePaths` and `artifacts`.",
    ),
    Code(
        ids.WRITES_ANYWHERE,
        "writes-anywhere",
        INFO,
        "A playbook that writes but declares no `allowedWritePaths`: it may write anywhere in the project.",
    ),
    Code(
        ids.CHILD_WRITES_READ_ONLY,
        "child-writes-read-only",
        E,
        "A called playbook that writes, called without `inheritPermissions: true`, so it runs read-only.",
    ),
    Code(
        ids.CHILD_WRITES_BEYOND_PARENT,
        "child-writes-beyond-parent",
        E,
        "A called playbook that writes where its caller may not.",
    ),
    Code(
        ids.UNCHECKED_SHELL_WRITES,
        "unchecked-shell-writes",
        INFO,
        "A shell-like step without `writes:`: its program may write only scratch and the temp folder (where Landlock "
        "confines it; elsewhere what it writes is not checked).",
    ),
    Code(
        ids.PARALLEL_WRITE_OVERLAP,
        "parallel-write-overlap",
        E,
        "Steps of one `parallel` group that may write the same paths.",
    ),
    Code(
        ids.PROGRAM_NOT_INSTALLED,
        "program-not-installed",
        INFO,
        "A step whose action needs a program (node for `script`, pwsh for `powershell`, git for `git-*`) that is not "
        "on this machine's PATH: it fails here with ActionUnavailable.",
    ),
    Code(
        ids.AI_WRITE_TOOLS_UNBOUNDED,
        "ai-write-tools-unbounded",
        E,
        "An AI step granted tools that change things (any but the read-only ones of docs/running.md) in a playbook "
        "with no `allowedWritePaths`.",
    ),
    Code(
        ids.RAW_UNTRUSTED_IN_SCRIPT,
        "raw-untrusted-in-script",
        W,
        "An input, a step result (an AI answer too) or another outside value reaches a script through raw(), "
        "unescaped.",
    ),
    Code(
        ids.UNESCAPABLE_SCRIPT_VALUE,
        "unescapable-script-value",
        E,
        "A value in a script stands where bash or a program reads it as code: arithmetic, a variable name, the "
        "program position, eval or bash -c.",
    ),
    Code(
        ids.UNESCAPED_JAVASCRIPT_VALUE,
        "unescaped-javascript-value",
        W,
        "A template pasted into a `script` step's JavaScript, which is not escaped: read values with get().",
    ),
    Code(
        ids.PROGRAM_WRITES_PROTECTED,
        "program-writes-protected",
        E,
        "A shell-like step that declares it writes inside `.git/` or the state directory, which the confinement of "
        "programs never grants.",
    ),
    Code(
        ids.UNKNOWN_ROLE,
        "unknown-role",
        E,
        "A playbook's `owner` or reviewer role that the settings' `roles` do not list.",
    ),
    Code(
        ids.ROLE_WITHOUT_APPROVER,
        "role-without-approver",
        E,
        "A required reviewer role nobody in the settings' `approvers` holds: no approval could release the playbook's "
        "checkpoints.",
    ),
    Code(
        ids.UNSIGNABLE_APPROVAL,
        "unsignable-approval",
        E,
        "`signed-approvals` is on but nobody could sign for a required reviewer role: no `approvers`, no "
        "allowed-signers file, or no key in it for a holder of the role.",
    ),
    Code(
        ids.ROUTE_BRANCHES_OVERLAP,
        "route-branches-overlap",
        W,
        "Two branches of a `route` whose conditions can both hold, as their text proves: the same condition, one "
        "that asks more than the other, or comparisons of one value that a value meets together.",
    ),
    Code(
        ids.UNTESTED_CODE_ARTIFACTS,
        "untested-code-artifacts",
        W,
        "The playbook's artifacts include code or tests, but no `test` step runs the tests before the run ends.",
    ),
    Code(
        ids.UNCACHEABLE_STEP,
        "uncacheable-step",
        E,
        "`cache:` on a step whose result cannot stand in for running it: it changes files, runs a program, sends a "
        "change or waits for a person.",
    ),
    Code(
        ids.UNREACHABLE_CATCH_CLAUSE,
        "unreachable-catch-clause",
        W,
        "A `catch` clause that never runs: an earlier clause of the same `try` (or of the playbook's `catch`) takes "
        "the same code, or is `default`, and a run takes the first clause that matches.",
    ),
    # C04x: suppression comments (`# catalyst: ignore[…]`)
    Code(
        ids.UNUSED_SUPPRESSION,
        "unused-suppression",
        W,
        "A `catalyst: ignore[…]` comment names a code that nothing on its line (or in its file, for ignore-file) "
        "reports.",
    ),
    Code(
        ids.UNKNOWN_SUPPRESSION_CODE,
        "unknown-suppression-code",
        W,
        "A `catalyst: ignore[…]` comment names a code that does not exist.",
    ),
    *(Code(*entry) for entry in CLEO_CODES),
    # C63x: gates, approval policies and agent identity
    Code(
        ids.GATE_OPTIONS,
        "gate-options",
        E,
        "A `checkpoint:` on a step whose answers make no sense: `skip` after the step ran, no `yes`, or an answer "
        "twice.",
    ),
    Code(
        ids.APPROVED_NOT_AI,
        "approved-not-ai",
        E,
        "`approved: true` on a step that is not an AI step: only an AI step's effects can be pre-approved by the "
        "author.",
    ),
    Code(
        ids.APPROVED_NOTHING,
        "approved-nothing",
        W,
        "`approved: true` on an AI step granted no tool that changes things: there is nothing to pre-approve.",
    ),
    Code(
        ids.POLICY_RULE_PATTERN,
        "policy-rule-pattern",
        E,
        "An approval-policy rule whose `pattern` is not a usable regular expression.",
    ),
    Code(
        ids.SLASH_COMMAND_FORM,
        "slash-command-form",
        E,
        "An `ai-prompt` `command` that is not a slash command (`/name` and its arguments).",
    ),
    Code(
        ids.SLASH_COMMAND_MISSING,
        "slash-command-missing",
        W,
        "An `ai-prompt` slash command with no `.claude/commands/<name>.md` in the project.",
    ),
    # C64x: ShellCheck on bash scripts
    Code(
        ids.SHELLCHECK_ERROR,
        "shellcheck-error",
        E,
        "ShellCheck finds an error in a `bash` or `test` script (its SC code leads the message).",
    ),
    Code(
        ids.SHELLCHECK_WARNING,
        "shellcheck-warning",
        W,
        "ShellCheck warns about a `bash` or `test` script (its SC code leads the message).",
    ),
    Code(
        ids.SHELLCHECK_INFO,
        "shellcheck-info",
        INFO,
        "ShellCheck's information on a script; reported when the `shellcheck` setting is `info` or `style`.",
    ),
    Code(
        ids.SHELLCHECK_STYLE,
        "shellcheck-style",
        INFO,
        "ShellCheck's style advice on a script; reported when the `shellcheck` setting is `style`.",
    ),
    Code(
        ids.SHELLCHECK_UNAVAILABLE,
        "shellcheck-unavailable",
        INFO,
        "The bash scripts were not checked by ShellCheck: it is not installed, or it failed.",
    ),
    *(Code(*entry) for entry in KAI_CODES),
]

CODES: dict[str, Code] = {c.code: c for c in _TABLE}
assert len(CODES) == len(_TABLE), "a diagnostic code is declared twice"
assert set(CODES) == {v for k, v in vars(ids).items() if k.isupper()}, "a code without a name, or a name without a code"
