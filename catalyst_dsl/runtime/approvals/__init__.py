"""Approvals of paused runs: who may approve (approvers), how (tokens, SSH signatures), the
rules that approve by themselves (policy) and pull-request reviews received by webhook.

Kept together, apart from the run itself: approving is a command on a saved run, and a
what-if approves nobody, so none of this is imported by one.
"""
