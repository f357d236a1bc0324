"""Sticky pull-request comments: the what-if report of each golden plan a change touches or makes stale.

Every golden plan (`golden/NAME.plan.json`) is planned again with the inputs it records
(as the golden test does, `golden.replan`): what a plan does can change with files it is
not named by (a playbook it calls, a file it reads, the settings), so a change to one of
those makes it stale as surely as a change to its playbook. A comment is posted for each
golden plan whose playbook, or the plan itself, is among the files the pull request
changes, and for each stale one. The report starts with a hidden marker naming the golden
plan's file (`<!-- catalyst-plan FILE -->`), so the next push updates that comment instead
of adding another: one comment per golden plan (a playbook may have several, one for each
set of inputs), always the latest plan.

Each comment compares the plan with its golden plan, the one approved when it was
committed: it leads with what the plan does (its labels: writes, network, programs,
approvals, or nothing), then what changed against the golden plan, step by step (plan_diff.py), then the
plan. A golden plan that no longer matches is stale: the command fails on it unless told
not to, as the golden test would. A comment stays within GitHub's limit (COMMENT_CHARS):
the sections that do not fit are left out, last first, and it says so.

Only GitHub's REST API is spoken, with the token given, to the API address given; nothing
from the playbooks or plans is sent anywhere but in a comment's body.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator, Mapping
from urllib.parse import urlsplit

from catalyst_dsl._internal.records import record

from catalyst_dsl.report import plan as plan_report
from catalyst_dsl.report import plan_diff
from catalyst_dsl.runtime.lifecycle import golden as golden_plans
from catalyst_dsl.runtime.lifecycle.plan_data import canonical_json, walk, with_hash

#: Lines of the changes against the golden plan a comment shows (the summary line is always kept).
MD_CHANGE_LINES = 80
#: Characters of one of those lines (a step's address is its names, as long as an author made them).
MD_CHANGE_LINE_CHARS = 300
#: Characters of a reason a plan could not be made (an error may quote a long value).
MD_REASON_CHARS = 4000
#: GitHub refuses a comment longer than this.
COMMENT_CHARS = 65_536
#: What the job summary is given at most (GitHub keeps 1 MiB of a step's summary; the rest
#: is room for what other steps wrote, counted in characters, which UTF-8 may make longer).
SUMMARY_CHARS = 800_000
#: Each page of comments read while looking for the one to update.
PER_PAGE = 100
#: Comments are read up to this many pages (10,000 comments) before a new one is posted.
MAX_PAGES = 100
TIMEOUT = 30


class CommentError(Exception):
    """A request GitHub refused or that could not be made: its message says which and why."""


@record
class Report:
    playbook: str  # the playbook's file, relative to the project root (the golden plan's when unknown)
    body: str
    golden: str = ""  # the golden plan's file, relative to the project root: the comment's marker
    stale: bool = True  # the plan today is not the golden plan (or cannot be made)
    labels: tuple[str, ...] = ()  # what the plan does (LABELS), none when it could not be made
    #: A golden plan that matches and that nothing in the change touches: its comment, if
    #: an earlier push made one (when it was stale), is brought up to date; none is posted.
    refresh_only: bool = False


#: What a plan may do, in the order the labels are shown; `nothing` when it does none.
LABELS = ("writes", "network", "programs", "approvals", "nothing")
#: The write places every program's confinement names, which are not the project's files.
_SCRATCH = frozenset({"temp://", "$TMPDIR"})


def plan_labels(plan: dict) -> tuple[str, ...]:
    """What the plan does, for a reviewer at a glance and for a workflow's labels: it writes
    the project's files (a file change, a refused write, a program allowed to write), it
    reaches the network (an action that talks to a remote service), it runs programs or AI
    agents (whose effects a plan cannot show: what they may write is confined, and labelled
    `writes` when that is the project's files, but their network use is not restricted, so
    a plan that runs one never says `nothing`), it waits for approvals."""
    from catalyst_dsl.actions.catalog import Effect
    from catalyst_dsl.actions.installed import builtin_catalog

    catalog = builtin_catalog()  # the built-in actions, then the installed plugins'
    found = set()
    for step, _depth in walk(plan.get("steps") or ()):
        if step.get("change") == "skipped":
            continue  # a step the plan knows will not run does nothing
        action = step.get("action")
        spec = catalog.get(action) if isinstance(action, str) else None
        effect = spec.effect if spec is not None else None
        confined = (step.get("confinement") or {}).get("mayWrite") or ()
        if step.get("effects") or step.get("writes") or any(place not in _SCRATCH for place in confined):
            found.add("writes")
        if effect is Effect.NETWORK or step.get("request"):
            found.add("network")
        if effect is Effect.EXTERNAL or step.get("confinement") is not None:
            found.add("programs")
        if step.get("change") == "would-pause":
            found.add("approvals")
    return tuple(label for label in LABELS if label in found) or ("nothing",)


_MARKER_START = "<!-- catalyst-plan "


def marker(golden_file: str) -> str:
    """The first line of a golden plan's comment, by which the comment is found again."""
    return f"{_MARKER_START}{plan_report.marker_text(golden_file)} -->"


def reports(root: Path, golden_dir: Path, changed: list[str], playbook_dirs: list[str]) -> list[Report]:
    """The what-if report of each golden plan whose playbook (or itself) is in `changed`
    (paths relative to `root`, or absolute), and of every golden plan that is stale, changed
    or not; every other golden plan's report is `refresh_only`. A golden plan naming a file
    outside the playbook directories is not planned (it could name any file of the machine,
    whose plan would then be posted), nor is a file that is not a golden plan: their
    comments say why, and they count as stale."""
    touched = {_relative(root, path) for path in changed}
    bases = [(root / folder).resolve() for folder in playbook_dirs]
    found = []
    for golden_path in sorted(golden_dir.glob(f"*{_SUFFIX}")):
        golden_shown = _relative(root, str(golden_path))
        try:
            golden_text = golden_path.read_text(encoding="utf-8")
            golden = json.loads(golden_text)
        except (OSError, ValueError) as error:
            why = f"{golden_shown} cannot be read as a what-if plan: {error}"
            found.append(Report(golden_shown, _not_planned(golden_shown, golden_shown, why), golden_shown))
            continue
        wrong = golden_plans.problem(golden, golden_shown)
        if wrong is not None:
            found.append(Report(golden_shown, _not_planned(golden_shown, golden_shown, wrong), golden_shown))
            continue
        playbook_file = golden["playbook"]["file"]
        if not golden_plans.inside_any(root / playbook_file, bases):
            why = f"{playbook_file} is outside the playbook directories ({', '.join(playbook_dirs)})"
            found.append(Report(playbook_file, _not_planned(golden_shown, playbook_file, why), golden_shown))
            continue
        report = _report(root, golden, golden_text, playbook_file, golden_shown)
        if not report.stale and not {playbook_file, golden_shown} & touched:
            # Matching again (a called playbook changed back, say): a comment that says
            # it is stale must not stay, but a plan no one touched gets no new comment.
            report = Report(report.playbook, report.body, report.golden, False, report.labels, refresh_only=True)
        found.append(report)
    return found


def shown(reports: list[Report]) -> list[Report]:
    """The reports a change is shown: its summary, `--print` and new comments hold these."""
    return [report for report in reports if not report.refresh_only]


_SUFFIX = ".plan.json"


def _report(root: Path, golden: dict, golden_text: str, playbook_file: str, golden_shown: str) -> Report:
    try:
        plan = with_hash(golden_plans.replan(root, golden))
    except golden_plans.ReplanError as problem:
        why = f"The playbook could not be planned with the inputs of its golden plan:\n{problem}"
        return Report(playbook_file, _not_planned(golden_shown, playbook_file, why), golden_shown)
    # Compared as the golden test compares: the same bytes, whatever the checkout's line endings.
    stale = canonical_json(plan) != golden_text.replace("\r\n", "\n")
    labels = plan_labels(plan)
    from catalyst_dsl.compiler import compile_path

    playbook = compile_path(str(root / playbook_file)).playbook  # for the flows: it planned, so it compiles
    flow = _changed_flow(playbook_file, golden, plan, playbook) if stale else None
    against = _against_golden(golden_text, plan, golden_shown, stale)
    sections = comment_sections(plan, labels, against, flow, playbook)
    return Report(playbook_file, assemble(golden_shown, sections, playbook_file), golden_shown, stale, labels)


def comment_sections(
    plan: dict, labels: tuple[str, ...], against_golden: str, flow: str | None = None, playbook: Any = None
) -> list[str]:
    """The sections of a comment, in order, each Markdown ending with a newline: what the plan
    does, what changed against the golden plan, the flow of the steps that changed (`flow`,
    its section), the plan itself (with the flow of the steps it acts in in `playbook`, as
    `--what-if --format markdown` shows it)."""
    sections = [
        "Labels: " + " · ".join(f"**{label}**" for label in labels) + "\n",
        against_golden,
    ]
    if flow:
        sections.append(flow)
    sections.append(plan_report.render_markdown(plan, marker=False, playbook=playbook))
    return sections


def _changed_flow(playbook_file: str, golden: dict, plan: dict, playbook: Any) -> str | None:
    """The section with the Mermaid flow of the steps added or changed since the golden plan,
    with the control steps around them; None when none was (only removals, or plan-wide
    changes)."""
    if plan_diff.format_problem(golden, "") is not None:
        return None
    paths = [step.path for step in plan_diff.diff_plans(golden, plan).steps if step.kind != "remove"]
    if not paths or playbook is None:
        return None
    from catalyst_dsl.report.graph import mermaid_flow

    flow = mermaid_flow(playbook, only=paths)
    if flow is not None:
        return f"### Flow of what changed\n\n```mermaid\n{flow.rstrip()}\n```\n"
    return "### Flow of what changed\n\n" + plan_report.too_large_to_draw(playbook_file, len(paths))


def assemble(golden_file: str, sections: list[str], playbook_file: str = "") -> str:
    """The comment's body: the marker its next update finds it by, then the sections, as
    many as GitHub's limit takes (the first two, the labels and the changes, are bounded
    and always kept); a note names what was left out and where to see it."""
    head = marker(golden_file) + "\n"
    kept, left_out = list(sections), 0
    while len(kept) > 2 and len(head) + sum(len(section) + 1 for section in kept) + _NOTE_CHARS > COMMENT_CHARS:
        kept.pop()
        left_out += 1
    if left_out:
        command = plan_report.md_code(f"catalyst run {playbook_file or 'NAME'} --what-if --format markdown")
        kept.append(
            f"*{left_out} more section{'s' if left_out != 1 else ''} of this report (the plan, or the flow of "
            f"what changed and the plan) would pass GitHub's limit of {COMMENT_CHARS:,} characters a comment: "
            f"{command} shows the plan whole.*\n"
        )
    return head + "\n".join(kept)


#: Room kept for that note, and the marker's path.
_NOTE_CHARS = 2000


def _against_golden(golden_text: str, plan: dict, golden_shown: str, stale: bool) -> str:
    """What changed since the golden plan was approved, as a `diff` block (its lines start
    with `+`, `~` or `-`, which GitHub colours), or that nothing did."""
    name = plan_report.md_code(golden_shown)
    if not stale:
        return f"The plan matches its golden plan {name}.\n"
    changes = plan_diff.explain(golden_text, plan, golden_shown)
    lines = [plan_report.clip(line, MD_CHANGE_LINE_CHARS) for line in changes.splitlines()]
    if len(lines) > MD_CHANGE_LINES:
        cut = len(lines) - MD_CHANGE_LINES
        lines = lines[: MD_CHANGE_LINES - 2] + [f"… {cut + 1} more lines: run pytest to see them all", lines[-1]]
    text = "\n".join(lines)
    ticks = plan_report.fence(text)
    regenerate = plan_report.md_code(f"catalyst run NAME --what-if --what-if-report {golden_shown}")
    return (
        f"## Changes against the golden plan {name}\n\n"
        f"The golden plan is out of date: regenerate it with `pytest --update-golden` (or {regenerate}), "
        "review it and commit it.\n\n"
        f"{ticks}diff\n{text}\n{ticks}\n"
    )


def _not_planned(golden_file: str, playbook_file: str, why: str) -> str:
    why = plan_report.clip(why, MD_REASON_CHARS)
    ticks = plan_report.fence(why)
    return (
        f"{marker(golden_file)}\n"
        f"## What-if plan for {plan_report.md_code(playbook_file)}: not made\n\n"
        f"{ticks}\n{why}\n{ticks}\n"
    )


def _relative(root: Path, path: str) -> str:
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            candidate = candidate.resolve().relative_to(root.resolve())
        except ValueError:
            return path
    return candidate.as_posix().removeprefix("./")


class PullRequest:
    """The comments of one pull request, through GitHub's REST API."""

    def __init__(self, api: str, repository: str, number: int, token: str) -> None:
        if urlsplit(api).scheme not in ("https", "http"):
            raise CommentError(f"the GitHub API address '{api}' is not an http(s) URL")
        from catalyst_dsl.project.addresses import CLEAR_TEXT_FIX, in_clear_text

        exposed = in_clear_text(api)
        if exposed:
            raise CommentError(
                f"the GitHub API at {exposed} is reached over plain http://, so the token would cross the "
                f"network unencrypted; nothing was sent ({CLEAR_TEXT_FIX})"
            )
        self.api = api.rstrip("/")
        self.repository = repository
        self.number = number
        self.token = token
        #: The report comments already there, by their first line (the marker): read once.
        self._by_marker: dict[str, dict] | None = None

    def post_or_update(self, report: Report) -> tuple[str, str]:
        """("updated", "posted", "kept" (the same body) or "" (a `refresh_only` report with no comment
        to refresh), the comment's address)."""
        if self._by_marker is None:
            self._by_marker = {}
            for comment in self._comments():
                body = comment.get("body")
                # Its id goes into the address of the PATCH: a whole number, nothing else.
                if (
                    isinstance(body, str)
                    and body.startswith(_MARKER_START)
                    and type(comment.get("id")) is int
                    and _trusted(comment)
                ):
                    # A body saved in GitHub's editor comes back with CRLF line ends.
                    self._by_marker.setdefault(body.partition("\n")[0].rstrip("\r"), comment)
        mark = marker(report.golden)
        existing = self._by_marker.get(mark)
        if existing is not None:
            if existing.get("body") == report.body:
                return "kept", str(existing.get("html_url", ""))
            answer = self._request(
                "PATCH", f"/repos/{self.repository}/issues/comments/{existing['id']}", {"body": report.body}
            )
            existing["body"] = report.body
            return "updated", str(answer.get("html_url", ""))
        if report.refresh_only:
            return "", ""
        answer = self._request("POST", f"/repos/{self.repository}/issues/{self.number}/comments", {"body": report.body})
        if isinstance(answer, dict):
            self._by_marker[mark] = {**answer, "body": report.body}
        return "posted", str(answer.get("html_url", ""))

    def _comments(self) -> Iterator[dict]:
        for page in range(1, MAX_PAGES + 1):
            listed = self._request(
                "GET", f"/repos/{self.repository}/issues/{self.number}/comments?per_page={PER_PAGE}&page={page}"
            )
            if not isinstance(listed, list):
                raise CommentError("GitHub answered the list of comments with something else than a list")
            yield from (c for c in listed if isinstance(c, dict))
            if len(listed) < PER_PAGE:
                return

    def _request(self, method: str, path: str, payload: Any = None) -> Any:
        data = json.dumps(payload).encode("utf-8") if payload is not None else None
        request = urllib.request.Request(
            self.api + path,
            data=data,
            method=method,
            headers={
                "Authorization": f"Bearer {self.token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "catalyst",
                **({"Content-Type": "application/json"} if data else {}),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                raw = response.read()
        except urllib.error.HTTPError as refused:
            message = _message(refused.read())
            raise CommentError(
                f"GitHub refused {method} {path.split('?')[0]}: {refused.code} {message}".rstrip()
            ) from None
        except (urllib.error.URLError, OSError) as failed:
            raise CommentError(f"cannot reach {self.api}: {getattr(failed, 'reason', failed)}") from None
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            raise CommentError(f"GitHub's answer to {method} {path.split('?')[0]} is not JSON") from None


#: Besides bots, who may have written a comment this command updates: an outside
#: contributor could otherwise copy the marker into a comment of theirs, which would then
#: be taken for the report (and their text replaced by it).
_TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})


def _trusted(comment: dict) -> bool:
    """A comment by a bot (the workflow's token posts as github-actions[bot]) or by someone
    with write access; one by an outside contributor is never taken for the report's."""
    user = comment.get("user")
    if not isinstance(user, dict):
        return True  # an API that names no authors (GitHub always does)
    return user.get("type") == "Bot" or comment.get("author_association") in _TRUSTED_ASSOCIATIONS


def _message(raw: bytes) -> str:
    try:
        data = json.loads(raw)
    except ValueError:
        return ""
    return str(data.get("message", "")) if isinstance(data, dict) else ""


def pull_request_number(event_path: str | None) -> int | None:
    """The pull request's number from the workflow's event file (GITHUB_EVENT_PATH)."""
    if not event_path:
        return None
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    number = (event.get("pull_request") or {}).get("number") if isinstance(event, dict) else None
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def to_workflow(reports: list[Report], environ: Mapping[str, str]) -> None:
    """Under GitHub Actions: append the reports to the job's summary (the file named by
    GITHUB_STEP_SUMMARY), and set the step's outputs (the file named by GITHUB_OUTPUT):
    `labels`, what the plans do together (`writes,approvals`; LABELS), and `stale`, how
    many golden plans are out of date. Neither holds text from a playbook or a plan's file
    name beyond the comments themselves, so no value can forge another output."""
    summary = environ.get("GITHUB_STEP_SUMMARY")
    if summary and reports:
        shown, size = [], 0
        for report in reports:  # GitHub drops a step's summary past 1 MiB: what fits, then a word
            if size + len(report.body) + 1 > SUMMARY_CHARS:
                break
            shown.append(report.body)
            size += len(report.body) + 1
        left = len(reports) - len(shown)
        if left:
            shown.append(
                f"*{left} more report{'s' if left != 1 else ''} left out: a step's summary holds 1 MiB; "
                "each is in its pull-request comment, and `catalyst what-if-comment --print` prints them all.*"
            )
        with open(summary, "a", encoding="utf-8", newline="\n") as handle:
            handle.write("\n".join(shown) + "\n")
    outputs = environ.get("GITHUB_OUTPUT")
    if outputs:
        found = {label for r in reports for label in r.labels}
        if len(found) > 1:
            found.discard("nothing")  # nothing is said only of plans that do nothing at all
        labels = ",".join(label for label in LABELS if label in found)
        with open(outputs, "a", encoding="utf-8", newline="\n") as handle:
            handle.write(f"labels={labels}\nstale={sum(1 for r in reports if r.stale)}\n")


def environment() -> dict[str, str | None]:
    return {
        key: os.environ.get(key) for key in ("GITHUB_TOKEN", "GITHUB_REPOSITORY", "GITHUB_EVENT_PATH", "GITHUB_API_URL")
    }
