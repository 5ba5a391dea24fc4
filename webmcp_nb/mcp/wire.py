"""JSON-RPC text as it arrives, before the SDK parses it: every request gets an answer.

The SDK's parsers stop at a nesting depth (pydantic's at 200 levels, Python's `json` at
its recursion limit) and answer -32700 without the request's id, or, over stdio, not at
all. `shallow` cuts nesting beyond `WIRE_DEPTH` to ``null``: arguments that deep are far
over `MAX_ARGUMENT_DEPTH`, so the tool call still reaches the engine and is refused as too
deep (``invalid_params``), as a shallower one would be. `stdio_lines` stands between stdin
and the SDK's stdio reader: a line the SDK could not read is answered here, with the id
when one can be found (`request_id`), and never reaches the SDK.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import mcp_types as types
import pydantic
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from ..core.call.bounds import MAX_ARGUMENT_DEPTH

WIRE_DEPTH = 100
"""Deepest nesting handed to the SDK's parsers, the message itself being level 1 (a tool
call's arguments are level 3). Below what they can parse, above `MAX_ARGUMENT_DEPTH`."""
assert MAX_ARGUMENT_DEPTH + 3 < WIRE_DEPTH < 200

# a string (skipped whole: it may hold brackets) or a bracket
_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}]', re.DOTALL)


def shallow(text: str) -> str:
    """`text` with every object or array nested deeper than `WIRE_DEPTH` replaced by ``null``
    (unchanged if none is; text that is not JSON stays what it was, not JSON)."""
    if text.count("{") + text.count("[") <= WIRE_DEPTH:
        return text
    parts: list[str] = []
    depth, kept, cut = 0, 0, -1
    for token in _TOKEN.finditer(text):
        bracket = token.group()
        if bracket[0] == '"':
            continue
        if bracket in "[{":
            depth += 1
            if depth == WIRE_DEPTH + 1:
                cut = token.start()
        else:
            if depth == WIRE_DEPTH + 1 and cut >= 0:
                parts += [text[kept:cut], "null"]
                kept, cut = token.end(), -1
            depth -= 1
    return "".join([*parts, text[kept:]]) if parts else text


def shallow_bytes(body: bytes) -> bytes:
    """`shallow` for an HTTP body, whatever its encoding (bytes that are not UTF-8 survive)."""
    if body.count(b"{") + body.count(b"[") <= WIRE_DEPTH:
        return body
    return shallow(body.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def request_id(text: str | bytes) -> str | int | None:
    """The id of the JSON-RPC request `text`, read leniently (Python's parser takes lone
    surrogates), or None when there is none to find."""
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return None
    found = message.get("id") if isinstance(message, dict) else None
    return found if isinstance(found, (str, int)) and not isinstance(found, bool) else None


def answer(line: str) -> types.JSONRPCError | None:
    """What a stdin line the SDK cannot read gets, or None when the SDK reads it."""
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except pydantic.ValidationError as exc:
        problem = exc.errors()[0]
    try:
        json.loads(line)
        parses = True
    except (ValueError, RecursionError):
        parses = False
    if problem["type"] == "json_invalid" or not parses:
        code, message = types.PARSE_ERROR, f"Parse error: {problem['msg']}"
    else:
        code, message = types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message"
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id(line), error=types.ErrorData(code=code, message=message[:300])
    )


class StdioLines:
    """Lines for the SDK's stdio reader (its `stdin`): the ones it can read, shallowed; the
    others are answered on `write` (set once the transport is up) and dropped."""

    def __init__(self, source: Any) -> None:
        self._source = source
        self.write: Any = None

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._source:
            if not line.strip():
                continue
            line = shallow(line)
            error = answer(line)
            if error is None:
                yield line
            elif self.write is not None:
                await self.write.send(SessionMessage(error))


@asynccontextmanager
async def stdio_transport() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport, reading stdin through `StdioLines`: (read, write) streams."""
    with _claimed_stdin() as lines:
        async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
            lines.write = write
            yield read, write


@contextmanager
def _claimed_stdin() -> Iterator[StdioLines]:
    """This process's stdin, as the SDK's stdio transport would claim it: the wire is read
    from a private descriptor while fd 0 points at the null device (children read EOF);
    fd 0 is restored on exit. Then `stdio_server(stdin=...)` takes our reader."""
    try:
        private = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
    except OSError:  # no descriptor to claim: read the stream in place
        yield StdioLines(anyio.wrap_file(sys.stdin))
        return
    os.dup2(null, 0)
    os.close(null)
    wire = open(private, encoding="utf-8", errors="replace", closefd=False)
    try:
        yield StdioLines(anyio.wrap_file(wire))
    finally:
        os.dup2(private, 0)  # `private` stays open: a reader thread may still be blocked on it
