"""`function` steps: defining a function (its name and inputs), and lowering a later step
that calls one, positionally or by input name.
"""

from __future__ import annotations

from catalyst_dsl.actions.catalog import RESERVED_STEP_KEYS
from catalyst_dsl.diagnostics.ids import FUNCTION_SHADOWS_ACTION, NOT_KEBAB_CASE, WRONG_TYPE
from catalyst_dsl.dialects.native.part import LoweringPart
from catalyst_dsl.dialects.native.vocabulary import KEBAB
from catalyst_dsl.dialects.values import kind_of
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span


class FunctionLowering(LoweringPart):
    """Function definitions, and the steps that call them."""

    def _define_function(self, config: ir.MapV, key: YScalar) -> None:
        name_value = config.get("name")
        if not isinstance(name_value, ir.Lit) or not isinstance(name_value.value, str):
            return
        name = name_value.value
        if name in self.catalog:
            whose = "a built-in action" if self.catalog.declares(name) else "an action an installed plugin provides"
            self.sink.report(
                FUNCTION_SHADOWS_ACTION,
                f"the function '{name}' has the name of {whose}",
                name_value.span,
                help="give the function a name of its own",
            )
            return
        if not KEBAB.match(name):
            self.sink.report(
                NOT_KEBAB_CASE,
                f"the function name '{name}' is not kebab-case",
                name_value.span,
                help="use lower-case words joined by '-'",
            )
        inputs = config.get("inputs")
        self.functions[name] = inputs.inputs if isinstance(inputs, ir.InputsV) else ()

    def _function_call(self, action: str, key: YScalar, value: YNode, siblings, step: YMap) -> ir.MapV:
        inputs = self.functions[action]
        schema = t.ObjectT(
            tuple((i.name, t.Field(t.input_type(i), i.required and i.default is None)) for i in inputs), None
        )
        where = f"the call of {action}"
        if isinstance(value, YSeq):  # positional: mapped by index to the inputs
            if len(value.items) > len(inputs):
                self.sink.report(
                    WRONG_TYPE,
                    f"{action} takes {len(inputs)} input(s), got {len(value.items)}",
                    value.items[len(inputs)].span
                    if isinstance(value.items[len(inputs)], YScalar)
                    else head_span(value),
                    help=f"inputs in order: {', '.join(i.name for i in inputs) or 'none'}",
                )
            pairs = [(YScalar(i.name, i.name, "", n.start, n.end, n.source), n) for i, n in zip(inputs, value.items)]
        elif isinstance(value, YMap):
            pairs = list(value.pairs)
        elif isinstance(value, YScalar) and value.value is None:
            pairs = []
        elif inputs:
            pairs = [(YScalar(inputs[0].name, inputs[0].name, "", key.start, key.end, key.source), value)]
        else:
            self.sink.report(WRONG_TYPE, f"{action} takes no inputs, got {kind_of(value)}", head_span(value))
            pairs = []
        pairs += siblings
        return self.values.mapping(
            YMap(pairs, step.start, step.end, step.source), schema, where, suggestions=RESERVED_STEP_KEYS
        )
