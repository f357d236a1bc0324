"""What the run records about its steps, and what a resumed run reads back.

Each step's outcome is an entry of the run's journal (saved by the session's hooks). A
few entries are not a step's: a failure a `catch` took, the item a loop iteration ran
for, a failed attempt of a `retry-block` (ir/journal.py names them); a resume needs
them to go on exactly where the run stopped.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from catalyst_dsl.actions.control import CONTROL
from catalyst_dsl.actions.control.for_each import list_changed
from catalyst_dsl.ir.journal import CAUGHT, LOOP_ITEM, caught_errors
from catalyst_dsl.runtime.engine import paths
from catalyst_dsl.runtime.engine.frames import Hooks
from catalyst_dsl.runtime.engine.step_run import StepRun
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.values.jsvalues import as_json_data

#: Actions re-run on resume instead of restored: cheap, no effect, and their results
#: may hold file contents, which the snapshot never stores. (The control actions always
#: run again: they restore the steps they hold, and their own results are small.)
RERUN_ON_RESUME = frozenset({"file-read", "file-exists", "file-list", "json-read"})


class Journal:
    def __init__(self, hooks: Hooks, replay: dict[str, dict], lock: threading.RLock) -> None:
        self.hooks = hooks
        #: path -> journal entry of a run being resumed.
        self.replay = replay
        self._lock = lock
        #: Failures a `catch` handled before the run stopped, by the path of the step that
        #: failed: on resume that step fails the same way again instead of running, so the
        #: same handler picks up where it paused and nothing the body did runs twice.
        self.caught: dict[str, tuple[StepError, int]] = {}  # failing path -> (error, journal position)
        for entry in self.replay.values():
            if entry.get("action") == CAUGHT:
                for kept in caught_errors(entry.get("result")):
                    self.caught[kept["path"]] = (StepError.from_record(kept), entry.get("seq", 0))
        #: The prompt each AI step sent, by its journal path, until the step is journaled.
        self._prompts: dict[str, str] = {}

    def step(self, run: StepRun, status: str, attempts: int, started: float, result: Any, reason: str | None) -> None:
        """The step's outcome, unless it is there already (a step re-run on resume)."""
        path, step = run.path, run.step
        if status == "completed" and path in self.caught:
            del self.caught[path]  # a later attempt succeeded: the old failure is not replayed
        if path in self.replay:
            return  # a step re-run on resume (a `var`, a read, a loop) is in the journal already
        control = CONTROL.get(step.action)
        keep = step.action not in RERUN_ON_RESUME and (control is None or control.KEEPS_RESULT)
        with self._lock:
            prompt = self._prompts.pop(path, None)
        entry = {
            "path": path,
            "name": step.name,
            "action": step.action,
            "status": status,
            "attempts": attempts,
            "startedAt": _wall_time_of(started),
            "duration": round(time.monotonic() - started, 6),
            "result": self.hooks.mask(as_json_data(result)) if keep else None,
            "reason": reason,
            "fingerprint": paths.fingerprint(step),
            "prompt": prompt,
            "label": run.label,
        }
        with self._lock:
            self.hooks.record_step(entry)

    def sent(self, path: str, prompt: str) -> None:
        """The prompt an AI step sent, journaled with the step."""
        with self._lock:
            self._prompts[path] = prompt  # the last attempt's, when a step is retried

    def bookkeep(
        self, path: str, action: str, result: dict, reason: str | None, save: bool = True, label: str | None = None
    ) -> None:
        """A journal entry that is not a step's (CAUGHT, LOOP_ITEM): what resume needs to know.
        `label` names it as the run shows the step it belongs to (`runs show` says it)."""
        entry = {
            "path": path,
            "name": None,
            "action": action,
            "status": "completed",
            "attempts": 1,
            "startedAt": _wall_time_of(time.monotonic()),
            "duration": 0.0,
            "result": result,
            "reason": reason,
            "fingerprint": None,
            "label": label,
        }
        with self._lock:
            self.hooks.record_step(entry, save=save)

    def catching(self, where: str, error: StepError, label: str) -> None:
        """Journal that a `catch` took `error` (at `where`/caught), before its handler runs."""
        if error.path is None:
            return
        entry_path = paths.join(where, "caught")
        if entry_path in self.replay:
            return
        # Branches of a parallel group that failed beside it are kept too: on resume they
        # fail the same way instead of running again.
        also = [self.hooks.mask(as_json_data(other.as_record())) for other in error.also if other.path]
        self.bookkeep(
            entry_path,
            CAUGHT,
            {"error": self.hooks.mask(as_json_data(error.as_record())), "also": also},
            f"{error.code} from {paths.step_label(error.step, error.path)}",
            label=label,
        )

    def same_item(self, engine: Any, path: str, index: int, item: Any) -> None:
        """Journal which item iteration `index` of the loop at `path` ran for; on resume,
        refuse when the list changed under it. Completed steps are restored by position, so
        an iteration restored for another item would skip that item's work (or redo one)."""
        marker = paths.join(path, "each", index, "item")
        digest = paths.value_digest(self.hooks.mask(as_json_data(item)))
        recorded = self.replay.get(marker)
        if recorded is None:
            # Saved with the iteration's first step or in-flight mark: until then there is
            # nothing of the iteration to restore.
            self.bookkeep(marker, LOOP_ITEM, {"item": digest}, None, save=False)
            return
        was = recorded["result"].get("item") if isinstance(recorded.get("result"), dict) else None
        if was != digest:
            raise list_changed(engine, path, f"item {index + 1} is not the one iteration {index + 1} ran for")


def _wall_time_of(monotonic: float) -> str:
    """The UTC time at which `time.monotonic()` read `monotonic`."""
    import datetime

    moment = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=time.monotonic() - monotonic)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
