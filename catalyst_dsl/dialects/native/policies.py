"""`errorPolicy:` on a playbook or a step: a policy name, or a mapping of error codes to
actions with retries and messages.
"""

from __future__ import annotations

from catalyst_dsl.diagnostics.ids import ERROR_CODE_CASE, INVALID_VALUE, MISSING_KEY, UNKNOWN_KEY, WRONG_TYPE
from catalyst_dsl.dialects.native.part import LoweringPart
from catalyst_dsl.dialects.native.vocabulary import PASCAL, POLICY_ACTIONS
from catalyst_dsl.dialects.values import kind_of, suggest
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, head_span


class PolicyLowering(LoweringPart):
    """`errorPolicy:` values, wherever they are written."""

    def error_policy(self, node: YNode) -> ir.ErrorPolicy | None:
        if isinstance(node, YScalar):
            action = self._policy_action(node)
            return ir.ErrorPolicy(default=action, span=node.span) if action else None
        if not isinstance(node, YMap):
            self.sink.report(
                WRONG_TYPE,
                f"'errorPolicy' expects a policy name or a mapping, got {kind_of(node)}",
                head_span(node),
                help="write `errorPolicy: Continue` or `errorPolicy: {default: {action: Stop}}`",
            )
            return None
        if node.get("action") is not None:
            return ir.ErrorPolicy(default=self._policy_entry(node), span=node.span)
        default = None
        by_code = []
        for k, v in node.pairs:
            entry = self._policy_entry(v)
            if entry is None:
                continue
            if k.text == "default":
                default = entry
            else:
                if not PASCAL.match(k.text):
                    self.sink.report(
                        ERROR_CODE_CASE,
                        f"the error code '{k.text}' is not PascalCase",
                        k.span,
                        help="error codes look like RateLimitExceeded; `default` matches any code",
                    )
                by_code.append((k.text, entry))
        return ir.ErrorPolicy(default=default, by_code=tuple(by_code), span=node.span)

    def _policy_entry(self, node: YNode) -> ir.PolicyAction | None:
        if isinstance(node, YScalar):
            return self._policy_action(node)
        if not isinstance(node, YMap):
            self.sink.report(
                WRONG_TYPE, f"a policy is a name or a mapping with `action`, got {kind_of(node)}", head_span(node)
            )
            return None
        retry, message = 0, None
        for k, v in node.pairs:
            if k.text not in ("action", "retryCount", "message"):
                self.sink.report(
                    UNKNOWN_KEY,
                    f"unknown key '{k.text}' in an error policy",
                    k.span,
                    help=suggest(k.text, ("action", "retryCount", "message"))
                    or "policy keys are action, retryCount and message",
                )
        mnode = node.get("message")
        if mnode is not None:
            if isinstance(mnode, YScalar) and isinstance(mnode.value, str):
                message = mnode.value
            else:
                self.sink.report(WRONG_TYPE, "'message' in an error policy expects text", head_span(mnode))
        rnode = node.get("retryCount")
        if rnode is not None:
            if (
                isinstance(rnode, YScalar)
                and isinstance(rnode.value, int)
                and not isinstance(rnode.value, bool)
                and rnode.value >= 0
            ):
                retry = rnode.value
            else:
                self.sink.report(WRONG_TYPE, "'retryCount' expects a whole number of retries", head_span(rnode))
        anode = node.get("action")
        if anode is None:
            self.sink.report(
                MISSING_KEY,
                "the error policy is missing the required key 'action'",
                head_span(node),
                help=f"add `action:` ({', '.join(POLICY_ACTIONS)})",
            )
            return None
        action = self._policy_action(anode)
        return ir.PolicyAction(action.action, retry, span=action.span, message=message) if action else None

    def _policy_action(self, node: YNode) -> ir.PolicyAction | None:
        text = node.text if isinstance(node, YScalar) else ""
        by_lower = {a.lower(): a for a in POLICY_ACTIONS}
        action = by_lower.get(str(text).lower())
        if action is None:
            hint = suggest(str(text), POLICY_ACTIONS)
            self.sink.report(
                INVALID_VALUE,
                f"unknown error policy action '{text}'",
                head_span(node),
                help=hint or f"use one of: {', '.join(POLICY_ACTIONS)}",
            )
            return None
        return ir.PolicyAction(action, span=node.span)
