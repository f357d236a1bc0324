"""The native lowerer: a playbook's YAML (or a Markdown playbook's front matter and body)
into the IR. It checks structure as it goes (keys, required keys, literal types, names,
the action-key rule); references and expression types are checked afterwards, on the IR.
"""

from __future__ import annotations

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.diagnostics.ids import EMPTY_FILE, MISSING_KEY, NOT_A_PLAYBOOK, NO_STEPS, UNKNOWN_KEY
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.dialects.native.functions import FunctionLowering
from catalyst_dsl.dialects.native.header import HeaderLowering
from catalyst_dsl.dialects.native.inputs import InputLowering
from catalyst_dsl.dialects.native.policies import PolicyLowering
from catalyst_dsl.dialects.native.steps import StepLowering
from catalyst_dsl.dialects.native.vocabulary import MARKDOWN_NEEDS, TOP_LEVEL_KEYS
from catalyst_dsl.dialects.values import ValueLowerer, kind_of, suggest
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.syntax.source import SourceFile
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span


class CatalystLowerer(HeaderLowering, InputLowering, PolicyLowering, StepLowering, FunctionLowering):
    """The parts (one module each) joined over one file, one sink and one catalog."""

    def __init__(
        self, source: SourceFile, sink: DiagnosticSink, catalog: Catalog, dialect: str = "catalyst-yaml"
    ) -> None:
        self.source = source
        self.sink = sink
        self.catalog = catalog
        self.dialect = dialect
        self.values = ValueLowerer(sink, self.steps, self.inputs_value)
        #: Functions defined so far, in document order: name -> their input declarations.
        self.functions: dict[str, tuple[ir.InputDecl, ...]] = {}

    # -- the playbook --------------------------------------------------------------------

    def playbook(
        self,
        root: YNode | None,
        *,
        defaults: dict[str, str] | None = None,
        extra_steps: tuple[ir.Step, ...] = (),
        calls=(),
        markdown_inputs=(),
    ) -> ir.Playbook | None:
        defaults = defaults or {}
        markdown = self.dialect == "markdown"
        # The one place that tells a file with no playbook in it (C014) from a playbook
        # that lacks something: no YAML document (no front matter), or one that is only
        # `---`, and for Markdown no body either. (compile_bytes skips the loader for YAML
        # text that is blank or comments only, with the same diagnostic.)
        if root is None or _empty_document(root):
            if not markdown:
                self.sink.report(
                    EMPTY_FILE,
                    "the file is empty",
                    self.source.span(0),
                    help="a playbook needs at least name, description, owner and steps",
                )
                return None
            if not extra_steps:
                self.sink.report(EMPTY_FILE, "the file is empty", self.source.span(0), help=MARKDOWN_NEEDS)
                return None
            root = YMap([], 0, 0, self.source)
        if not isinstance(root, YMap):
            self.sink.report(
                NOT_A_PLAYBOOK,
                f"a playbook is a mapping of keys, not {kind_of(root)}",
                head_span(root),
                help="start the file with `name:`, `description:`, `owner:` and `steps:`",
            )
            return None
        keys = {k.text: (k, v) for k, v in root.pairs}
        for k, _ in root.pairs:
            if k.text not in TOP_LEVEL_KEYS and not (self.dialect == "markdown" and k.text == "steps"):
                hint = suggest(k.text, TOP_LEVEL_KEYS)
                self.sink.report(
                    UNKNOWN_KEY,
                    f"unknown top-level key '{k.text}'",
                    k.span,
                    help=hint or f"top-level keys are: {', '.join(TOP_LEVEL_KEYS)}",
                )

        name = self._name(keys, defaults.get("name"), root)
        description = self._text(keys, "description", defaults.get("description"), root)
        owner = self._text(keys, "owner", defaults.get("owner"), root, required=self.dialect != "markdown")
        language = self._language(keys)
        reviewers = self._reviewers(keys.get("reviewers"))
        triggers = self._triggers(keys.get("triggers"))
        inputs = self.inputs_value(keys["inputs"][1]).inputs if "inputs" in keys else ()
        inputs = (*inputs, *[i for i in markdown_inputs if i.name not in {x.name for x in inputs}])
        outputs, artifacts = self._outputs(keys.get("outputs"))
        artifacts = (*artifacts, *self._path_list(keys.get("artifacts"), "artifacts"))
        allowed = (
            self._path_list(keys.get("allowedWritePaths"), "allowedWritePaths") if "allowedWritePaths" in keys else None
        )
        policy = self.error_policy(keys["errorPolicy"][1]) if "errorPolicy" in keys else None
        one_run_per = self._one_run_per(keys["oneRunPer"][1], inputs) if "oneRunPer" in keys else ()

        steps: tuple[ir.Step, ...] = ()
        if "steps" in keys:
            steps_key, steps_node = keys["steps"]
            # C204 means there is really no step written: an empty list, or `steps:` with
            # no value. Steps that were written but are wrong (C401, C402) are not "no steps".
            if isinstance(steps_node, YScalar) and steps_node.value is None:
                if not extra_steps:
                    self.sink.report(
                        NO_STEPS,
                        "a playbook needs at least one step; `steps` has no value",
                        steps_key.span,
                        help="write the steps below `steps:`, for example `  - display: \"hello\"`",
                    )
            else:
                steps = self.steps(steps_node).steps
                if isinstance(steps_node, YSeq) and not steps_node.items and not extra_steps:
                    self.sink.report(
                        NO_STEPS,
                        "a playbook needs at least one step; `steps` is empty",
                        steps_key.span,
                        help="add a step, for example `- display: \"hello\"`",
                    )
        elif markdown and not extra_steps:
            # A Markdown playbook's steps come from its body, so "missing `steps:`" would
            # send the user the wrong way. Point at where the body should start: the last
            # line written, which is the front matter's closing ---.
            end = len(self.source.text.rstrip())
            at = self.source.span(self.source.text.rfind("\n", 0, end) + 1, end)
            self.sink.report(
                NO_STEPS,
                "the Markdown playbook has no body: the text after the front matter is what it runs",
                at,
                help=MARKDOWN_NEEDS,
            )
        elif not extra_steps:
            self.sink.report(
                MISSING_KEY,
                "the playbook is missing the required key 'steps'",
                head_span(root),
                help="add `steps:` with at least one step",
            )
        steps = (*steps, *extra_steps)
        catch = self.catch_clauses(keys["catch"][1], "the playbook's catch") if "catch" in keys else ()
        final = self.steps(keys["finally"][1]).steps if "finally" in keys else ()
        return ir.Playbook(
            name=name,
            description=description or "",
            owner=owner,
            dialect=self.dialect,
            file=self.source.path,
            language=language,
            reviewers=reviewers,
            triggers=triggers,
            inputs=inputs,
            outputs=outputs,
            artifacts=artifacts,
            allowed_write_paths=allowed,
            error_policy=policy,
            steps=steps,
            catch=catch,
            finally_=final,
            calls=tuple(calls),
            one_run_per=one_run_per,
            span=root.span,
        )


def _empty_document(root: YNode) -> bool:
    """A document with nothing in it: `---` alone gives an empty, untagged plain scalar.

    `~` or `null` written out are values (not a playbook: C201), not an empty file.
    """
    return isinstance(root, YScalar) and root.is_plain and root.text == "" and root.tag is None
