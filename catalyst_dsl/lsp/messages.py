"""What the server does with a message it cannot read: a request always gets an answer.

pygls turns each JSON object of a message into its LSP type while the body is decoded
(`structure_message`, json's object hook). When that fails (a hover whose `position` is
"x", a completion without `textDocument`, params that are an array), pygls raises from
inside the decoder and the request is dropped, so the client waits for ever. Here such a
message becomes an `Unreadable` instead, and `handle_message` answers it: a request gets
the JSON-RPC error -32602 (invalid params) naming what is wrong, a notification is logged
and ignored. A body that is not JSON gets -32700 (parse error) and one that is JSON but
no message -32600 (invalid request), both with a null id, as JSON-RPC says when the id
cannot be known.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote

import attrs
from cattrs.errors import ClassValidationError
from cattrs.v import format_exception, transform_error
from lsprotocol.types import (
    CANCEL_REQUEST,
    EXIT,
    INITIALIZE,
    TEXT_DOCUMENT_DID_CHANGE,
    WORKSPACE_EXECUTE_COMMAND,
    DidChangeTextDocumentParams,
    ResponseErrorMessage,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage

from catalyst_dsl._internal.records import record
from catalyst_dsl._internal.serialization import JSON_WORDS
from catalyst_dsl.lsp import documents

log = logging.getLogger("catalyst.lsp")

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
#: LSP's code for a request that comes before `initialize`.
SERVER_NOT_INITIALIZED = -32002


@record(frozen=False)
class Unreadable:
    """A message whose fields do not have the shape its method needs."""

    data: dict
    problems: list[str]

    @property
    def method(self) -> str:
        method = self.data.get("method")
        return method if isinstance(method, str) else repr(method)


@record(frozen=False)
class Misnamed:
    """A message whose method is not a name: JSON-RPC wants a string, and pygls would
    look anything else up among its features (and fail on a list or an object, answering
    with its own traceback)."""

    data: dict

    @property
    def problem(self) -> str:
        method = self.data["method"]
        # A JSON value, or a message nested in it (the hook has made that a message already).
        found = JSON_WORDS.kind(method) if type(method) in JSON_WORDS.kinds else JSON_WORDS.object
        return f"the method must be a string, not {found}"


def _whole_number(value, kind) -> int:
    """An LSP integer: a JSON number without a fraction. The converter's own hook is `int()`,
    which took `4.5` for 4, `true` for 1 and `"4"` for 4, and answered a position that is
    none as if it were one."""
    if type(value) is int or (type(value) is float and value.is_integer()):
        # The hook, registered for `int`, also gets its subclasses: LSP's enumerations (a
        # severity), which stay members of their enumeration.
        return int(value) if kind is int else kind(int(value))
    raise ValueError(f"{value!r:.30} is not a whole number")


def _boolean(value, _type) -> bool:
    """An LSP boolean: `true` or `false` (a boolean is an `int` to Python, and would else
    take the whole-number hook)."""
    if type(value) is bool:
        return value
    raise ValueError(f"{value!r:.30} is not true or false")


class CatalystProtocol(LanguageServerProtocol):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._converter.register_structure_hook(int, _whole_number)
        self._converter.register_structure_hook(bool, _boolean)

    def structure_message(self, data: dict):
        if "jsonrpc" not in data:
            return data  # a nested object (the hook sees every one), or no message at all
        if "method" in data and not isinstance(data["method"], str):
            return Misnamed(data)
        try:
            return self._converter.structure(data, self._type_of(data))
        except Exception as error:  # noqa: BLE001 - any failure to read it is the sender's
            return Unreadable(data, _problems(error))

    def _type_of(self, data: dict) -> type:
        """The LSP type of a message, as pygls picks it (`data` completed when a message of
        a method LSP does not define leaves its params out, as JSON-RPC lets it)."""
        if "method" in data:
            known = self.get_message_type(data["method"]) if isinstance(data["method"], str) else None
            if known is None:
                data.setdefault("params", None)
            return known or (JsonRPCRequestMessage if "id" in data else JsonRPCNotification)
        if "error" in data:
            return ResponseErrorMessage
        return self._result_types.pop(data.get("id"), None) or JsonRPCResponseMessage  # to a request of ours

    def handle_message(self, message) -> None:
        if isinstance(message, Misnamed):
            if "id" in message.data:
                self.answer_error(message.data["id"], INVALID_REQUEST, message.problem)
            else:
                log.warning("notification ignored: %s", message.problem)
            return
        if isinstance(message, Unreadable):
            where = f"{message.method}: invalid params: {'; '.join(message.problems)}"
            if "method" not in message.data:
                log.warning("a response that cannot be read was ignored: %s", "; ".join(message.problems))
            elif "id" in message.data:
                log.warning("request %.50r answered with an error, %s", message.data["id"], where)
                self.answer_error(message.data["id"], INVALID_PARAMS, where)
            else:
                log.warning("notification ignored, %s", where)
            return
        # pygls makes every message it reads an attrs class (lsprotocol's and its own types);
        # anything else is JSON, but not a JSON-RPC message.
        if not attrs.has(type(message)):
            log.warning("not a JSON-RPC message, ignored: %.200r", message)
            if isinstance(message, dict) and not ("method" in message and "id" in message):
                return  # no request (a notification or a response without "jsonrpc"): nothing to answer
            identifier = message.get("id") if isinstance(message, dict) else None
            self.answer_error(
                identifier,
                INVALID_REQUEST,
                "not a JSON-RPC 2.0 message: an object with \"jsonrpc\": \"2.0\" and a \"method\" was expected",
            )
            return
        if hasattr(message, "method") and self._workspace is None and message.method not in (INITIALIZE, EXIT):
            # LSP: before `initialize`, a request is answered "not initialized" and a
            # notification dropped (pygls would run it, with no workspace to run on).
            if hasattr(message, "id"):
                self.answer_error(
                    message.id,
                    SERVER_NOT_INITIALIZED,
                    f"{message.method}: the server is not initialized yet: the first request is initialize",
                )
            else:
                log.warning("%s before initialize, ignored", message.method)
            return
        if hasattr(message, "method") and hasattr(message, "id"):
            if message.jsonrpc != self.VERSION:
                self.answer_error(
                    message.id,
                    INVALID_REQUEST,
                    f"{message.method}: \"jsonrpc\" must be \"2.0\", not {message.jsonrpc!r:.20}",
                )
                return
            if not _usable_id(message.id):
                self.answer_error(
                    None,
                    INVALID_REQUEST,
                    f"{message.method}: the id must be a number or a string, not {message.id!r:.50}",
                )
                return
            if self._shutdown and message.method != EXIT:
                self.answer_error(message.id, INVALID_REQUEST, f"{message.method}: the server is shutting down")
                return
            if message.method == WORKSPACE_EXECUTE_COMMAND and message.params.command not in self.fm.commands:
                # pygls answers the same, after logging its own exception as the server's error.
                self.answer_error(
                    message.id,
                    INVALID_PARAMS,
                    f"{message.method}: the server has no command {message.params.command!r:.80}",
                )
                return
        elif getattr(message, "method", None) == CANCEL_REQUEST and not _usable_id(message.params.id):
            # pygls looks the id up among the requests under way: a list or an object fails there.
            log.warning("%s ignored: the id must be a number or a string, not %.50r", CANCEL_REQUEST, message.params.id)
            return
        super().handle_message(message)

    @lsp_method(INITIALIZE)
    def lsp_initialize(self, params):
        answer = yield from super().lsp_initialize(params)
        # The workspace is made now, before any document is opened in it.
        documents.count_lines_as_lsp(self._workspace)
        return answer

    @lsp_method(TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: DidChangeTextDocumentParams):
        # A change to a document never opened (or closed since) has nothing to apply to:
        # pygls would fail on it and show the editor's user an error for the client's slip.
        if self._workspace is None or unquote(params.text_document.uri) not in self._workspace.text_documents:
            log.warning("a change to %s, which is not open, was ignored", params.text_document.uri)
            return
        yield from super().lsp_text_document__did_change(params)

    def answer_error(self, identifier, code: int, text: str) -> None:
        """An error response, written as a plain object so a null id stays in it."""
        self._send_data(
            {
                "jsonrpc": "2.0",
                "id": identifier if _usable_id(identifier) else None,
                "error": {"code": code, "message": text},
            }
        )

    def answer_unparsable(self, error: Exception) -> None:
        """A body that could not be decoded as JSON (pygls's reading loop reports it)."""
        log.warning("a message that is not JSON was answered with a parse error: %s", error)
        self.answer_error(None, PARSE_ERROR, f"the message is not JSON: {error}")


class UnparsableLoggedOnce(logging.Filter):
    """pygls logs a body it could not decode with a traceback, a client's error as if it
    were the server's; `answer_unparsable` logs it in one line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (record.msg == "Unable to handle message" and isinstance(error, (ValueError, RecursionError)))


def _usable_id(identifier) -> bool:
    return isinstance(identifier, (int, str)) and not isinstance(identifier, bool)


def _problems(error: Exception) -> list[str]:
    """What is wrong, one line each, at the message's own (camelCase) field names."""
    if not isinstance(error, ClassValidationError):
        return [f"{type(error).__name__}: {error}"]
    lines = []
    for line in transform_error(error, path="$", format_exception=_describe)[:5]:
        what, _, where = line.rpartition(" @ ")
        where = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), where).removeprefix("$.").replace("$", "the message")
        lines.append(f"{what} at {where}")
    return lines


def _describe(error: BaseException, expected) -> str:
    # A value refused by lsprotocol's own check (a negative line) says why; cattrs's
    # wording for it would be only "invalid value".
    if type(error) is ValueError:
        return str(error).rstrip(".")
    return format_exception(error, expected)
