"""AI adapters' interface: the protocol `ai-prompt` talks to, its errors, and how an
answer streamed as chunks is collected.

An adapter streams text chunks for a prompt; `collect` joins them while passing each one
on (to the log, as it arrives). Every adapter module (the mock, the built-in real ones,
the choice among them) depends on this one and on nothing else of the package.
"""

from __future__ import annotations

from typing import Callable, Iterator, Mapping, Protocol, Sequence, runtime_checkable

from catalyst_dsl._internal.records import record
from catalyst_dsl.runtime.errors import StepError

AI_ADAPTER_ERROR = "AIAdapterError"
AI_ADAPTER_UNAVAILABLE = "AIAdapterUnavailable"

MOCK = "mock"
SCRIPT_ENV = "CATALYST_MOCK_AI_SCRIPT"


@runtime_checkable
class AIAdapter(Protocol):
    name: str

    def invoke(self, prompt: str, tools: Sequence[str], options: Mapping[str, object]) -> Iterator[str]:
        """Stream the answer to `prompt` as text chunks; raise AdapterError on failure."""
        ...


#: Makes an adapter from the step's options (provider settings, model, ...).
AdapterFactory = Callable[[Mapping[str, object]], AIAdapter]


class AdapterError(StepError):
    """An AI adapter failed (`AIAdapterError`, or a scripted code) or is missing (`AIAdapterUnavailable`)."""


def collect(chunks: Iterator[str], on_chunk: Callable[[str], None] | None = None) -> str:
    """The whole answer of a stream, calling `on_chunk` with each chunk as it arrives."""
    parts = []
    for chunk in chunks:
        if not isinstance(chunk, str):
            raise AdapterError(AI_ADAPTER_ERROR, f"the AI adapter sent {type(chunk).__name__} instead of text")
        if on_chunk is not None:
            on_chunk(chunk)
        parts.append(chunk)
    return "".join(parts)


@record
class Unusable:
    """Why an adapter the settings configure cannot be used, and where to fix that."""

    problem: str
    fix: str
