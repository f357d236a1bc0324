"""The fold: a snapshot's JSON data with the changes of the records after it applied.

The fold works on JSON data, before anything is read as a `RunState`, so that the folded
state is read and checked exactly as a snapshot file is (snapshot_codec.structured): a
folded value of the wrong type is named by its JSON path, like one written in the file.
A change the data cannot take (an index past the approvals, a list that is not one) is
left out here and, where it matters, reported by that reading.
"""

from __future__ import annotations

from typing import Any

_APPENDED = ("steps", "approvals", "failures", "trustedEdits")


def apply(data: dict[str, Any], changes: dict[str, Any]) -> None:
    """Apply one record's changes (record.CHANGES) to the snapshot data `data`, in place."""
    data.update(changes.get("set", {}))
    drop = changes.get("drop")
    if drop and type(data.get("steps")) is list:
        gone = {path for path in drop if type(path) is str}
        data["steps"] = [e for e in data["steps"] if not (type(e) is dict and e.get("path") in gone)]
    for key in _APPENDED:
        added = changes.get(key)
        if added and type(data.get(key)) is list:
            data[key].extend(added)
    approvals = data.get("approvals")
    for index, approval in changes.get("approvalsChanged", {}).items():
        # ASCII digits only: str.isdigit() also passes "²", which int() refuses.
        if type(approvals) is list and index.isascii() and index.isdigit() and int(index) < len(approvals):
            approvals[int(index)] = approval
