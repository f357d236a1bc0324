"""A small fake of GitHub's REST API on 127.0.0.1, for the github-* tests.

It serves the endpoints the actions use, with GitHub's shapes and status codes:

- `GET /repos/O/R`
- `GET|POST /repos/O/R/issues` (issues and pull requests share numbers, as on GitHub)
- `GET|POST /repos/O/R/issues/N/comments` (paged: `per_page`, `page`, a `Link` header)
- `PATCH /repos/O/R/issues/comments/ID` (a comment's new body)
- `GET /repos/O/R/branches/B` (`protected`: B is in `protected[repo]`)
- `GET|POST /repos/O/R/pulls` (`head`, `base`, `state` filters)

Requests need `Authorization: Bearer TOKEN` (or `token TOKEN`): a wrong token is a 401,
a missing one a 401 for writes and a 404 for a private repository. Switches:
`unauthorized` (401 always), `rate_limited` (403 with `X-RateLimit-Remaining: 0`),
`too_many` (429 with `Retry-After`), `invalid` (422 with that message on writes),
`lose_next_answer` (do the next write, then close the connection without answering),
`failures` (answer the next N requests with 502).
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

TOKEN = "ghp_fake_token_0123456789"
RESET_AT = 4102444800  # 2100-01-01T00:00:00Z


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "FakeGitHub"

    def log_message(self, format, *args):  # noqa: A002
        pass

    def do_GET(self):
        self._handle()

    do_POST = do_PATCH = do_GET

    def _handle(self) -> None:
        fake = self.server
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        with fake.lock:
            fake.requests.append(
                {
                    "method": self.command,
                    "path": parts.path,
                    "query": query,
                    "headers": dict(self.headers.items()),
                    "body": json.loads(raw) if raw else None,
                }
            )
            status, value, extra = fake.answer(self.command, parts.path, query, raw, self.headers.get("Authorization"))
        if status == 0:  # lose the answer
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        data = json.dumps(value).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-RateLimit-Limit", "5000")
        for key, item in extra.items():
            self.send_header(key, item)
        if "X-RateLimit-Remaining" not in extra:
            self.send_header("X-RateLimit-Remaining", "4999")
            self.send_header("X-RateLimit-Reset", str(RESET_AT))
        self.end_headers()
        self.wfile.write(data)


class FakeGitHub(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, token: str = TOKEN) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.token = token
        self.lock = threading.Lock()
        self.requests: list[dict] = []
        self.repos = {
            "acme/widgets": {"private": False, "default_branch": "main", "description": "Widgets", "topics": ["tools"]},
            "acme/vault": {"private": True, "default_branch": "trunk", "description": None, "topics": []},
        }
        self.branches = {"acme/widgets": {"main", "feature", "other"}, "acme/vault": {"trunk"}}
        #: The branches GitHub's branch protection covers (`GET .../branches/B` says `protected`).
        self.protected: dict[str, set[str]] = {name: set() for name in self.repos}
        #: repo -> issues and pull requests, in creation order
        self.items: dict[str, list[dict]] = {name: [] for name in self.repos}
        #: (repo, number) -> comments
        self.comments: dict[tuple[str, int], list[dict]] = {}
        self._next_id = 1000
        # switches
        self.unauthorized = False
        self.rate_limited = False
        self.too_many = False
        self.invalid: str | None = None
        self.lose_next_answer = False
        self.failures = 0
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    # -- lifecycle

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> "FakeGitHub":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)

    def handle_error(self, request, client_address) -> None:
        pass

    # -- test set-up and inspection

    def add_issue(self, repo: str, title: str, body: str = "") -> dict:
        with self.lock:
            return self._new_item(repo, {"title": title, "body": body})

    def add_comments(self, repo: str, number: int, bodies: list[str]) -> None:
        with self.lock:
            for body in bodies:
                self._new_comment(repo, number, body)

    def issues(self, repo: str = "acme/widgets") -> list[dict]:
        return [i for i in self.items[repo] if "head" not in i]

    def pulls(self, repo: str = "acme/widgets") -> list[dict]:
        return [i for i in self.items[repo] if "head" in i]

    def writes(self) -> list[dict]:
        return [r for r in self.requests if r["method"] != "GET"]

    # -- the API

    def answer(self, method: str, path: str, query: dict, raw: bytes, authorization: str | None):
        if self.failures > 0:
            self.failures -= 1
            return 502, {"message": "Server Error"}, {}
        if self.unauthorized or (
            authorization is not None and authorization not in (f"Bearer {self.token}", f"token {self.token}")
        ):
            return 401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}, {}
        if self.rate_limited:
            return (
                403,
                {"message": "API rate limit exceeded for user ID 1."},
                {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(RESET_AT)},
            )
        if self.too_many:
            return 429, {"message": "You have exceeded a secondary rate limit."}, {"Retry-After": "30"}
        segments = [s for s in path.split("/") if s]
        if len(segments) < 3 or segments[0] != "repos":
            return 404, {"message": "Not Found"}, {}
        repo = f"{segments[1]}/{segments[2]}"
        known = self.repos.get(repo)
        if known is None or (known["private"] and authorization is None):
            return 404, {"message": "Not Found"}, {}
        if method != "GET":
            if authorization is None:
                return 401, {"message": "Requires authentication"}, {}
            if self.invalid is not None:
                return 422, {"message": self.invalid, "errors": []}, {}
        rest = segments[3:]
        try:
            payload = json.loads(raw) if raw else {}
        except ValueError:
            return 400, {"message": "Problems parsing JSON"}, {}
        if not rest and method == "GET":
            return 200, self._repo(repo), {}
        if rest == ["issues"]:
            return self._issues(repo, method, query, payload)
        if rest == ["pulls"]:
            return self._pulls(repo, method, query, payload)
        if len(rest) == 2 and rest[0] == "branches" and method == "GET":
            if rest[1] not in self.branches.get(repo, ()):
                return 404, {"message": "Branch not found"}, {}
            return 200, {"name": rest[1], "protected": rest[1] in self.protected[repo]}, {}
        if len(rest) == 3 and rest[:2] == ["issues", "comments"] and rest[2].isdigit() and method == "PATCH":
            return self._edit_comment(repo, int(rest[2]), payload)
        if len(rest) == 3 and rest[0] == "issues" and rest[1].isdigit() and rest[2] == "comments":
            return self._comments(repo, int(rest[1]), method, query, payload, path)
        return 404, {"message": "Not Found"}, {}

    def _repo(self, repo: str) -> dict:
        owner, name = repo.split("/")
        known = self.repos[repo]
        return {
            "id": 1,
            "name": name,
            "full_name": repo,
            "owner": {"login": owner},
            "private": known["private"],
            "visibility": "private" if known["private"] else "public",
            "html_url": f"https://github.com/{repo}",
            "description": known["description"],
            "fork": False,
            "archived": False,
            "default_branch": known["default_branch"],
            "clone_url": f"https://github.com/{repo}.git",
            "ssh_url": f"git@github.com:{repo}.git",
            "topics": known["topics"],
        }

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _new_item(self, repo: str, fields: dict) -> dict:
        number = len(self.items[repo]) + 1
        kind = "pull" if "head" in fields else "issues"
        item = {
            "id": self._id(),
            "number": number,
            "state": "open",
            "html_url": f"https://github.com/{repo}/{kind}/{number}",
            **fields,
        }
        self.items[repo].append(item)
        return item

    def _new_comment(self, repo: str, number: int, body: str) -> dict:
        comment_id = self._id()
        comment = {
            "id": comment_id,
            "body": body,
            "html_url": f"https://github.com/{repo}/issues/{number}#issuecomment-{comment_id}",
        }
        self.comments.setdefault((repo, number), []).append(comment)
        return comment

    def _lose(self) -> bool:
        if self.lose_next_answer:
            self.lose_next_answer = False
            return True
        return False

    def _issues(self, repo: str, method: str, query: dict, payload: dict):
        if method == "GET":
            listed = [
                self._as_issue(i) for i in self.items[repo] if query.get("state") == "all" or i["state"] == "open"
            ]
            if query.get("direction", "desc") == "desc":
                listed.reverse()
            return 200, listed[: int(query.get("per_page", "30"))], {}
        title = payload.get("title")
        if not isinstance(title, str) or not title:
            return (
                422,
                {
                    "message": "Validation Failed",
                    "errors": [{"resource": "Issue", "code": "missing_field", "field": "title"}],
                },
                {},
            )
        fields = {
            "title": title,
            "body": payload.get("body"),
            "labels": [{"name": n} for n in payload.get("labels", [])],
            "assignees": [{"login": n} for n in payload.get("assignees", [])],
        }
        item = self._new_item(repo, fields)
        return (0, None, {}) if self._lose() else (201, item, {})

    def _as_issue(self, item: dict) -> dict:
        if "head" in item:
            return {
                **{k: v for k, v in item.items() if k not in ("head", "base")},
                "pull_request": {"url": item["html_url"]},
            }
        return item

    def _pulls(self, repo: str, method: str, query: dict, payload: dict):
        owner = repo.split("/")[0]
        if method == "GET":
            listed = [i for i in self.pulls(repo) if query.get("state", "open") in ("all", i["state"])]
            if "head" in query:
                listed = [i for i in listed if i["head"]["label"] == query["head"]]
            if "base" in query:
                listed = [i for i in listed if i["base"]["ref"] == query["base"]]
            return 200, listed, {}
        head, base = payload.get("head"), payload.get("base")
        errors = []
        branch = head.split(":", 1)[-1] if isinstance(head, str) else None
        if branch not in self.branches[repo]:
            errors.append({"resource": "PullRequest", "field": "head", "code": "invalid"})
        if base not in self.branches[repo]:
            errors.append({"resource": "PullRequest", "field": "base", "code": "invalid"})
        if errors:
            return 422, {"message": "Validation Failed", "errors": errors}, {}
        label = head if ":" in head else f"{owner}:{head}"
        if any(
            i["head"]["label"] == label and i["base"]["ref"] == base and i["state"] == "open" for i in self.pulls(repo)
        ):
            return (
                422,
                {
                    "message": "Validation Failed",
                    "errors": [
                        {
                            "resource": "PullRequest",
                            "code": "custom",
                            "message": f"A pull request already exists for {label}.",
                        }
                    ],
                },
                {},
            )
        item = self._new_item(
            repo,
            {
                "title": payload.get("title"),
                "body": payload.get("body"),
                "draft": bool(payload.get("draft")),
                "head": {"ref": branch, "label": label},
                "base": {"ref": base},
            },
        )
        return (0, None, {}) if self._lose() else (201, item, {})

    def _comments(self, repo: str, number: int, method: str, query: dict, payload: dict, path: str):
        if not any(i["number"] == number for i in self.items[repo]):
            return 404, {"message": "Not Found"}, {}
        if method == "GET":
            every = self.comments.get((repo, number), [])
            per_page = int(query.get("per_page", "30"))
            page = int(query.get("page", "1"))
            pages = max(1, -(-len(every) // per_page))
            links = []
            if page < pages:
                links.append(f'<{self.url}{path}?{urlencode({"per_page": per_page, "page": page + 1})}>; rel="next"')
                links.append(f'<{self.url}{path}?{urlencode({"per_page": per_page, "page": pages})}>; rel="last"')
            return 200, every[(page - 1) * per_page : page * per_page], ({"Link": ", ".join(links)} if links else {})
        body = payload.get("body")
        if not isinstance(body, str) or not body:
            return (
                422,
                {
                    "message": "Validation Failed",
                    "errors": [{"resource": "IssueComment", "code": "missing_field", "field": "body"}],
                },
                {},
            )
        comment = self._new_comment(repo, number, body)
        return (0, None, {}) if self._lose() else (201, comment, {})

    def _edit_comment(self, repo: str, comment_id: int, payload: dict):
        body = payload.get("body")
        if not isinstance(body, str) or not body:
            return (
                422,
                {
                    "message": "Validation Failed",
                    "errors": [{"resource": "IssueComment", "code": "missing_field", "field": "body"}],
                },
                {},
            )
        for (where, _), comments in self.comments.items():
            for comment in comments:
                if where == repo and comment["id"] == comment_id:
                    comment["body"] = body
                    return 200, comment, {}
        return 404, {"message": "Not Found"}, {}
