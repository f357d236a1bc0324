"""Steps: which key of a step names its action, the action's config, and the keys a step
holds beside it (name, condition, timeout, checkpoint, writes, ...); `catch:` clauses.
"""

from __future__ import annotations

import re
import sys

from catalyst_dsl.actions.catalog import RESERVED_STEP_KEYS, ActionSpec, Effect
from catalyst_dsl.diagnostics.ids import (
    INVALID_VALUE,
    NOT_KEBAB_CASE,
    NO_ACTION,
    STEP_NOT_MAPPING,
    TWO_ACTIONS,
    UNKNOWN_ACTION,
    WRITES_NOT_SHELL,
    WRONG_TYPE,
)
from catalyst_dsl.diagnostics.model import Label
from catalyst_dsl.dialects.native.checks import lower_checks
from catalyst_dsl.dialects.native.part import LoweringPart
from catalyst_dsl.dialects.native.vocabulary import BINDINGS, GATE, KEBAB
from catalyst_dsl.dialects.values import kind_of, parse_duration, suggest, warn_milliseconds
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.syntax.source import Span
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq, head_span


#: RESERVED_STEP_KEYS as a set, for the question asked of every key of every step.
_RESERVED = frozenset(RESERVED_STEP_KEYS)
_new = object.__new__


class StepLowering(LoweringPart):
    """Lists of steps, each step, its action's config, and `catch:` clauses."""

    def steps(self, node: YNode) -> ir.StepsV:
        if not isinstance(node, YSeq):
            self.sink.report(
                WRONG_TYPE,
                f"steps must be a list, got {kind_of(node)}",
                head_span(node),
                help="write each step as a list item starting with '- '",
            )
            return ir.StepsV((), span=node.span)
        steps = []
        for item in node.items:
            step = self.step(item)
            if step is not None:
                steps.append(step)
        return ir.StepsV(tuple(steps), span=node.span)

    def catch_clauses(self, node: YNode, where: str) -> tuple[ir.CatchClause, ...]:
        if not isinstance(node, YSeq):
            self.sink.report(
                WRONG_TYPE,
                f"{where} expects a list of `- code: ... steps: [...]`, got {kind_of(node)}",
                head_span(node),
            )
            return ()
        clauses = []
        for item in node.items:
            if not isinstance(item, YMap):
                self.sink.report(
                    WRONG_TYPE,
                    f"a catch clause is a mapping with `code` and `steps`, got {kind_of(item)}",
                    head_span(item),
                )
                continue
            value = self.values.mapping(item, t.obj(code=t.req(t.STRING), steps=t.req(t.STEPS)), "a catch clause")
            code = value.get("code")
            steps = value.get("steps")
            clauses.append(
                ir.CatchClause(
                    code=str(code.value) if isinstance(code, ir.Lit) else "",
                    steps=steps.steps if isinstance(steps, ir.StepsV) else (),
                    span=item.span,
                )
            )
        return tuple(clauses)

    def _names_action(self, key: str, pairs) -> bool:
        """Whether a step key names an action. A key that a built-in action of the same step
        takes as config (`value` beside `var`) is config whatever a plugin is called, so only
        other keys are looked up in the installed plugins: checking a playbook of built-in
        actions never scans the installed packages."""
        if key in _RESERVED:  # `checkpoint` among them
            return False
        if key in self.functions or self.catalog.declares(key):
            return True
        for other, _ in pairs:
            spec = self.catalog.get(other.text) if self.catalog.declares(other.text) else None
            if spec is not None and spec.config.field(key) is not None:
                return False
        return key in self.catalog

    def step(self, node: YNode) -> ir.Step | None:
        if not isinstance(node, YMap):
            hint = None
            if isinstance(node, YScalar) and isinstance(node.value, str) and node.value in self.catalog:
                hint = f"write `- {node.value}: ...` with the action's value after the colon"
            self.sink.report(
                STEP_NOT_MAPPING,
                f"a step is a mapping with one action key, not {kind_of(node)}",
                head_span(node),
                help=hint or "write a step like `- display: \"hello\"`",
            )
            return None
        pairs = node.pairs
        action_keys = [(k, v) for k, v in pairs if self._names_action(k.text, pairs)]
        checkpoint_entry = None
        for k, v in pairs:
            if k.text == "checkpoint":
                checkpoint_entry = (k, v)
                break
        if not action_keys and checkpoint_entry is not None:
            action_keys = [checkpoint_entry]
            checkpoint_entry = None
        if len(action_keys) > 1:
            # A key that is a config key of another candidate is config (ai-prompt's `return`).
            narrowed = [
                (k, v)
                for k, v in action_keys
                if not any(
                    other is not k
                    and (spec := self.catalog.get(other.text)) is not None
                    and spec.config.field(k.text) is not None
                    for other, _ in action_keys
                )
            ]
            action_keys = narrowed or action_keys
        if len(action_keys) > 1:
            first, second = action_keys[0][0], action_keys[1][0]
            self.sink.report(
                TWO_ACTIONS,
                f"the step names two actions: '{first.text}' and '{second.text}'",
                second.span,
                labels=[Label(first.span, "first action here")],
                help="a step runs exactly one action; split it into two steps",
            )
        known = True
        if not action_keys:
            candidates = [(k, v) for k, v in pairs if k.text not in RESERVED_STEP_KEYS]
            if not candidates:
                self.sink.report(
                    NO_ACTION,
                    "the step has no action",
                    head_span(node),
                    help="add an action key such as `display:`, `bash:` or `ai-prompt:`",
                )
                return None
            key, value = candidates[0]
            hint = suggest(key.text, [*self.catalog.names(), *self.functions])
            broken = self.catalog.why_missing(key.text)
            if broken:
                hint = f"{broken}; fix or reinstall that plugin"
            self.sink.report(
                UNKNOWN_ACTION,
                f"unknown action '{key.text}'",
                _where(key, node),
                help=hint
                or (
                    "`catalyst actions` lists the built-in actions;"
                    " a `function` must be defined before the steps that call it"
                ),
            )
            action_keys = [(key, value)]
            known = False
        action_key, action_value = action_keys[0]
        action = sys.intern(action_key.text)  # one string per action name across a library
        spec = self.catalog.get(action) if known and action not in self.functions else None
        # One pass sorts the other keys: the step's own (reserved) and the action's config
        # written beside it (siblings); a second action key and `checkpoint` are neither.
        other_actions = action_keys[1:]
        checkpoint_key = checkpoint_entry[0] if checkpoint_entry is not None else None
        siblings = []
        reserved = {}
        for k, v in pairs:
            if k is action_key:
                continue
            if k.text in _RESERVED:
                reserved[k.text] = (k, v)
            elif k is not checkpoint_key and not (other_actions and (k, v) in other_actions):
                siblings.append((k, v))
        config = self._config(action, spec, action_key, action_value, siblings, node, known)

        name = name_span = None
        if "name" in reserved:
            nk, nv = reserved["name"]
            if isinstance(nv, YScalar) and isinstance(nv.value, str) and KEBAB.match(nv.value):
                name, name_span = nv.value, nv.span
            else:
                text = nv.text if isinstance(nv, YScalar) else ""
                fixed = re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")
                self.sink.report(
                    NOT_KEBAB_CASE,
                    f"the step name '{text}' is not kebab-case",
                    head_span(nv),
                    help="use lower-case words joined by '-'" + (f": {fixed}" if fixed else ""),
                )
                if isinstance(nv, YScalar) and nv.text:
                    name, name_span = nv.text, nv.span
        condition = None
        if "condition" in reserved:
            condition = self.values.value(reserved["condition"][1], t.BOOLEAN, "'condition'")
        policy = self.error_policy(reserved["errorPolicy"][1]) if "errorPolicy" in reserved else None
        timeout = self._timeout(reserved["timeout"][1]) if "timeout" in reserved else None
        checkpoint, gate = None, None
        if checkpoint_entry is not None:
            checkpoint, gate = self._checkpoint_flag(checkpoint_entry[1])
        approved = self._opt_bool(reserved["approved"][1], "'approved'") if "approved" in reserved else False
        cache = self._cache(reserved["cache"][1]) if "cache" in reserved else None
        writes: tuple[ir.Value, ...] = ()
        if "writes" in reserved:
            wv = self.values.value(reserved["writes"][1], t.ArrayT(t.STRING), "'writes'")
            writes = wv.items if isinstance(wv, ir.ListV) else (wv,)
            if spec is not None and not spec.shell_like:
                self._writes_not_shell(spec, reserved["writes"][0])
        isolated = self._opt_bool(reserved["isolated"][1], "'isolated'") if "isolated" in reserved else False
        if action == "function" and known:
            self._define_function(config, action_key)
        requires = lower_checks(*reserved["requires"], self.values, self.sink) if "requires" in reserved else None
        ensures = lower_checks(*reserved["ensures"], self.values, self.sink) if "ensures" in reserved else None
        bindings = (
            self.values.value(reserved["bindings"][1], BINDINGS, "'bindings'") if "bindings" in reserved else None
        )
        # Made without calling the class, its `__init__` called as a function: a class call
        # copies these twenty keyword arguments into a dict and out again (CPython 3.11),
        # which was a third of making a step, and every step of every playbook is made here.
        lowered = _new(ir.Step)
        ir.Step.__init__(
            lowered,
            action=action,
            config=config,
            name=name,
            condition=condition,
            error_policy=policy,
            timeout=timeout,
            checkpoint=checkpoint,
            writes=writes,
            writes_declared="writes" in reserved,
            isolated=isolated,
            gate=gate,
            approved=approved,
            known=known,
            span=head_span(node),
            action_span=action_key.span,
            name_span=name_span,
            requires=requires,
            ensures=ensures,
            bindings=bindings if isinstance(bindings, (ir.MapV, ir.Tmpl)) else None,
            cache=cache,
        )
        return lowered

    def _checkpoint_flag(self, node: YNode) -> tuple[bool | str | None, ir.Gate | None]:
        """`checkpoint:` next to an action: `true` or a message (a pause after the step), the
        word `before` (a gate before it, answered yes / skip / abort), `after` (as `true`),
        or the long form `{when, message, options, policy}`."""
        if isinstance(node, YScalar) and node.is_plain and node.value in ("before", "after"):
            if node.value == "after":
                return True, None
            return None, ir.Gate("before", options=ir.GATE_OPTIONS, span=node.span)
        if isinstance(node, YScalar) and isinstance(node.value, (bool, str)):
            return node.value, None
        if not isinstance(node, YMap):
            self.sink.report(
                WRONG_TYPE,
                "'checkpoint' next to an action expects true, a message, `before`,"
                f" or a mapping with when/message/options/policy, got {kind_of(node)}",
                head_span(node),
            )
            return None, None
        value = self.values.mapping(node, GATE, "'checkpoint'")
        when = value.get("when")
        when_text = when.value if isinstance(when, ir.Lit) and when.value in ("before", "after") else "after"
        written = node.get("when")
        if (
            isinstance(written, YScalar) and written.value is not None and not isinstance(written.value, str)
        ):  # text is the enum check's
            self.sink.report(
                INVALID_VALUE,
                f"'when' must be before or after, not {when.value!r}",
                when.span,
                help="write `when: before` or `when: after`",
            )
        options = value.get("options")
        if isinstance(options, ir.ListV):
            chosen = tuple(str(o.value) for o in options.items if isinstance(o, ir.Lit) and o.value in ir.GATE_OPTIONS)
        else:
            chosen = ir.GATE_OPTIONS if when_text == "before" else ("yes", "abort")
        return None, ir.Gate(
            when_text, message=value.get("message"), options=chosen, policy=value.get("policy"), span=node.span
        )

    def _writes_not_shell(self, spec: ActionSpec, key: YScalar) -> None:
        """C408: `writes:` belongs to shell-like steps only.

        Two different mistakes share the code, each with its own message: the action
        already declares what it writes (file-write's `path`), or it is not a step that
        writes through `writes:` at all (display, http-get, playbook).
        """
        if spec.writes:
            keys = " and ".join(f"`{w.key}`" for w in spec.writes)
            self.sink.report(
                WRITES_NOT_SHELL,
                f"'writes' is for shell-like steps; {spec.name} declares its own writes (its {keys})",
                key.span,
                help=f"remove `writes:`; what {spec.name} writes is checked from its {keys} already",
            )
            return
        shell = ", ".join(s.name for s in self.catalog.specs() if s.shell_like)
        if spec.effect is Effect.CONTROL:
            why = f"remove `writes:`; the steps that {spec.name} runs declare what they write"
        else:
            why = "remove `writes:`"
        self.sink.report(
            WRITES_NOT_SHELL,
            f"'writes' is only for shell-like steps ({shell}); {spec.name} is not one",
            key.span,
            help=why,
        )

    def _cache(self, node: YNode) -> float | None:
        """`cache: true` (a day), `false`, or how long a result may be reused (a duration)."""
        from catalyst_dsl.actions.caching import DEFAULT_SECONDS

        value = node.value if isinstance(node, YScalar) else None
        if value is True:
            return DEFAULT_SECONDS
        if value is False:
            return None
        seconds = parse_duration(value)
        if seconds is None or seconds == 0:
            self.sink.report(
                WRONG_TYPE,
                f"'cache' is neither true, false nor a duration: {getattr(node, 'text', kind_of(node))}",
                head_span(node),
                help="write `cache: true` (results are reused for a day), or how long: 30m, 12h",
            )
            return None
        return seconds

    def _timeout(self, node: YNode) -> float | None:
        value = node.value if isinstance(node, YScalar) else None
        seconds = parse_duration(value)
        if seconds is None:
            self.sink.report(
                WRONG_TYPE,
                f"'timeout' is not a duration: {getattr(node, 'text', kind_of(node))}",
                head_span(node),
                help="write seconds as a number, or a number with a unit: 500ms, 30s, 5m, 1h",
            )
            return None
        if isinstance(node, YScalar):
            warn_milliseconds(self.sink, node, "'timeout'")
        return seconds

    def _config(
        self,
        action: str,
        spec: ActionSpec | None,
        action_key: YScalar,
        action_value: YNode,
        siblings,
        step: YMap,
        known: bool,
    ) -> ir.MapV:
        where = f"the {action} step"
        if not known:
            # Read on as far as it can be understood, like a compiler after a syntax error:
            # lists of steps under the unknown action are steps (checked, and the names they
            # define seen by later steps); the rest is data. The action itself is not invented.
            entries = []
            if isinstance(action_value, YMap):
                entries = [
                    ir.Entry(k.text, self._unknown_value(v, f"'{k.text}'"), span=k.span) for k, v in action_value.pairs
                ]
            elif not (isinstance(action_value, YScalar) and action_value.value is None):
                entries = [ir.Entry("value", self._unknown_value(action_value, where), span=action_key.span)]
            entries += [ir.Entry(k.text, self._unknown_value(v, f"'{k.text}'"), span=k.span) for k, v in siblings]
            return ir.MapV(tuple(entries), span=step.span)
        if spec is None:  # a call of a function defined earlier in this playbook
            return self._function_call(action, action_key, action_value, siblings, step)
        schema = spec.config
        pairs: list[tuple[YScalar, YNode]] = []
        if isinstance(action_value, YMap):
            sibling_keys = {k.text for k, _ in siblings}
            pairs = [(k, v) for k, v in action_value.pairs if k.text not in sibling_keys]
        elif isinstance(action_value, YScalar) and action_value.value is None:
            pass  # `action: ~` means the sibling keys are the config
        else:
            if spec.primary is None:
                self.sink.report(
                    WRONG_TYPE,
                    f"{action} takes a mapping of settings, not {kind_of(action_value)}",
                    head_span(action_value),
                )
            else:
                pairs = [
                    (
                        YScalar(spec.primary, spec.primary, "", action_key.start, action_key.end, action_key.source),
                        action_value,
                    )
                ]
        pairs += siblings
        # Read as one mapping at the step's place (the step itself gives the positions).
        return self.values.mapping(step, schema, where, suggestions=RESERVED_STEP_KEYS, pairs=pairs)

    def _unknown_value(self, node: YNode, where: str) -> ir.Value:
        """A value under an unknown action: a list of mappings of which one names an action
        is a list of steps; anything else is data of any type."""
        if (
            isinstance(node, YSeq)
            and node.items
            and all(isinstance(i, YMap) for i in node.items)
            and any(k.text in self.catalog or k.text in self.functions for i in node.items for k, _ in i.pairs)
        ):
            return self.steps(node)
        return self.values.value(node, t.ANY, where)


def _where(inner: YNode, outer: YNode) -> Span:
    """`inner`'s span, or `outer`'s when `inner` was written elsewhere (an aliased step)."""
    if outer.start <= inner.start < max(outer.end, outer.start + 1):
        return inner.span
    return head_span(outer)
