"""Running a Python snippet against the live page: the escape hatch to raw Playwright."""

from __future__ import annotations

import ast
import asyncio
import builtins
import functools
import inspect
import json
import re
import traceback
import weakref
from types import CodeType
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple

from pydantic import Field, StringConstraints

from ..call.errors import InvalidParams, ToolFailure
from ..call.registry import tool
from ..call.util import first_lines
from .images import image_size, mime_type
from .models import REF_PATTERN, ActionData, PageParams
from .snapshot import SnapshotData, SnapshotParams
from .snapshot import snapshot as snapshot_tool

if TYPE_CHECKING:
    from playwright.async_api import ConsoleMessage, Locator

    from ..browsers.pages import PageState
    from ..call.context import CallContext

FILENAME = "<execute>"
_RESULT = "__execute_result__"
_REF = re.compile(REF_PATTERN)
_HELPERS = (
    "`page`, `context`, `browser` (the instance's Playwright objects), `state` (a dict per instance), "
    "`snapshot()` (the browser_snapshot text) and `ref('e12')` / `ref('Add Banana', role='button')` (a Locator)"
)


class ExecuteParams(PageParams):
    code: Annotated[str, StringConstraints(min_length=1, max_length=100_000)] = Field(
        description="Top-level await; never block (time.sleep)."
    )
    timeout_s: float | None = Field(None, gt=0, description="Default and maximum: the operation timeout.")


class ExecuteData(ActionData):
    value: Any = Field(None, description="The result, when it is JSON (null when the snippet ends without a value).")
    repr: str | None = Field(None, description="repr() of a result that is neither JSON nor an image.")
    image: bytes | None = Field(None, description="A PNG or JPEG result (base64 in JSON).")
    mime_type: Literal["image/png", "image/jpeg"] | None = None
    width: int | None = None
    height: int | None = None
    logs: list[str] = Field(
        default_factory=list,
        description="What the snippet printed and what the page logged to its console during the call, in order "
        "('print: ...', 'console.error: ...').",
    )


@tool(
    name="browser_execute",
    title="Execute Python",
    description=f"Run async Python with {_HELPERS}; returns the last expression's value (JSON, an image for "
    "PNG/JPEG bytes, or its repr) and the logs. Playwright calls wait at most the action (navigation) timeout "
    "unless given their own.",
    params=ExecuteParams,
    data=ExecuteData,
    target="page",
    group="code",
    destructive=True,  # Python in the kernel process: anything the kernel can do
    open_world=True,
    structured_output=False,
    too_large_hint="Return or print less.",
)
async def execute(ctx: CallContext, p: ExecuteParams) -> ExecuteData:
    limit = ctx.engine.limits.operation_timeout_s
    if p.timeout_s is not None and p.timeout_s > limit:
        raise InvalidParams(
            f"timeout_s={p.timeout_s:g} is over the operation timeout of {limit:g} s "
            f"({ctx.engine.limits.source('operation_timeout_s')}); give at most that."
        )
    snippet = compile_snippet(p.code)
    logs = Logs()
    page = ctx.page
    page.set_default_timeout(ctx.engine.limits.action_timeout_s * 1000)
    page.set_default_navigation_timeout(ctx.engine.limits.navigation_timeout_s * 1000)
    namespace = snippet_globals(ctx, logs)
    timer = asyncio.timeout(p.timeout_s)  # without timeout_s, the engine's operation deadline applies
    tap = console_tap(ctx.require_page())
    tap.logs = logs
    # A failure keeps what the snippet printed and the page logged (the engine's deadline too).
    ctx.cut_off = lambda error_type, message: ToolFailure(error_type, message, context=logs.context())
    try:
        async with timer:
            value = await run_snippet(snippet, namespace, p.code, ctx)
    except TimeoutError:
        if not timer.expired():
            raise
        raise ToolFailure(
            "operation_timeout",
            f"The snippet did not finish within timeout_s={p.timeout_s:g} s and was stopped; "
            "what it did until then stays done.",
            context=logs.context(),
        ) from None
    except ToolFailure as failure:
        failure.context = {**(failure.context or {}), **logs.context()} or None
        raise
    finally:
        tap.logs = None
    return ExecuteData(url=page.url, logs=logs.finish(), **result_fields(value))


class Snippet(NamedTuple):
    program: CodeType
    statements: bool  # a module of statements (its value is left in `_RESULT`), not a lone expression


async def run_snippet(snippet: Snippet, namespace: dict[str, Any], code: str, ctx: CallContext) -> Any:
    """Run the compiled snippet and return its value; anything it raises becomes `evaluation_failed`
    (one that failed to find an element marks `ctx.element_failed`, for the failure's hints)."""
    try:
        value = eval(snippet.program, namespace)  # running the caller's code is this tool's job
        if snippet.program.co_flags & inspect.CO_COROUTINE:
            value = await value
    except asyncio.CancelledError as exc:
        if asyncio.current_task().cancelling():  # type: ignore[union-attr]
            raise  # stopped from outside (timeout_s, the operation deadline)
        raise ToolFailure("evaluation_failed", snippet_error(exc, code)) from None
    except BaseException as exc:  # noqa: BLE001 - even SystemExit in a snippet must not end the runtime
        ctx.element_failed = looked_for_element(exc)
        raise ToolFailure("evaluation_failed", snippet_error(exc, code)) from None
    return namespace.pop(_RESULT, None) if snippet.statements else value


def looked_for_element(exc: BaseException) -> bool:
    """Whether the snippet failed to find an element: a Playwright locator or selector that timed out
    or matched nothing, or a `ref()` that is gone."""
    from playwright.async_api import Error as PlaywrightError

    from ..evidence.failure import LOCATOR_FAILURES

    if isinstance(exc, ToolFailure):
        return exc.error_type in LOCATOR_FAILURES
    return isinstance(exc, PlaywrightError) and ("waiting for locator(" in exc.message or "Locator." in exc.message)


@functools.lru_cache(maxsize=64)  # agents repeat snippets (polling); a code object runs any number of times
def compile_snippet(code: str) -> Snippet:
    """The snippet as one code object that gives its value: a lone expression is compiled as such
    (the common one-liner, in a fifth of the time); statements as a module whose last expression
    statement is stored in `_RESULT`. A syntax error is `invalid_params` (nothing run), at its line
    and column."""
    try:
        return Snippet(compile(code, FILENAME, "eval", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), statements=False)
    except SyntaxError:
        pass  # not a lone expression
    try:
        tree = ast.parse(code, FILENAME, "exec")
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = tree.body[-1]
            target = ast.copy_location(ast.Name(id=_RESULT, ctx=ast.Store()), last)
            tree.body[-1] = ast.copy_location(ast.Assign(targets=[target], value=last.value), last)
        return Snippet(compile(tree, FILENAME, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), statements=True)
    except SyntaxError as exc:
        where = f"{FILENAME}:{exc.lineno or '?'}:{exc.offset or '?'}"
        line = f": {exc.text.strip()}" if exc.text and exc.text.strip() else ""
        raise InvalidParams(f"The snippet does not compile: {exc.msg} at {where}{line}") from None


def snippet_globals(ctx: CallContext, logs: Logs) -> dict[str, Any]:
    """The names a snippet sees; `print` is its own, so other threads' stdout stays untouched."""
    instance, page_state = ctx.require_instance(), ctx.require_page()

    async def snapshot(ref: str | None = None, depth: int | None = None) -> str:
        """The page's AI snapshot with refs, as browser_snapshot returns it (and makes its refs current)."""
        data = await snapshot_tool(ctx, SnapshotParams.model_validate({"ref": ref, "depth": depth}))
        assert isinstance(data, SnapshotData) and data.snapshot is not None
        return data.snapshot

    def ref(target: str, role: str | None = None, exact: bool = False) -> Locator:
        """A Locator: for a snapshot ref ('e12'), or for the element with this accessible name and role."""
        if role is not None:
            return page_state.page.get_by_role(role, name=target, exact=exact)  # type: ignore[arg-type]
        if _REF.match(target):
            return page_state.ref_locator(target)
        raise ValueError(
            f"ref({target!r}) is not a snapshot ref such as 'e12'; to find it by name, give its role: "
            f"ref({target!r}, role='button')"
        )

    def print(
        *values: Any, sep: str | None = " ", end: str | None = "\n", file: Any = None, flush: bool = False
    ) -> None:
        if file is not None:
            builtins.print(*values, sep=sep, end=end, file=file, flush=flush)
            return
        logs.printed((" " if sep is None else sep).join(map(str, values)) + ("\n" if end is None else end))

    return {
        "__name__": "__execute__",
        "__builtins__": builtins,
        "page": page_state.page,
        "context": instance.context,
        "browser": instance.browser,
        "state": instance.code_state,
        "snapshot": snapshot,
        "ref": ref,
        "print": print,
    }


class ConsoleTap:
    """A page's console listener, added once: subscribing anew on every call costs two messages
    to Playwright's driver, more than the rest of a one-line snippet."""

    def __init__(self) -> None:
        self.logs: Logs | None = None

    def __call__(self, message: ConsoleMessage) -> None:
        if self.logs is not None:
            self.logs.console(message)


_taps: weakref.WeakKeyDictionary[PageState, ConsoleTap] = weakref.WeakKeyDictionary()


def console_tap(page_state: PageState) -> ConsoleTap:
    tap = _taps.get(page_state)
    if tap is None:
        tap = _taps[page_state] = ConsoleTap()
        page_state.page.on("console", tap)
    return tap


class Logs:
    """Printed lines and console messages, in the order they came."""

    def __init__(self) -> None:
        self.entries: list[str] = []
        self._partial = ""

    def printed(self, text: str) -> None:
        *lines, self._partial = (self._partial + text).split("\n")
        self.entries += [f"print: {line}" for line in lines]

    def console(self, message: ConsoleMessage) -> None:
        self.entries.append(f"console.{message.type}: {message.text}")

    def finish(self) -> list[str]:
        if self._partial:
            self.entries.append(f"print: {self._partial}")
            self._partial = ""
        return self.entries

    def context(self) -> dict[str, Any]:
        """A failure's context: the logs so far, unfinished print included (the latest are kept)."""
        entries = self.entries + ([f"print: {self._partial}"] if self._partial else [])
        return {"logs": entries} if entries else {}


def result_fields(value: Any) -> dict[str, Any]:
    """`value` as ExecuteData fields: an image, a JSON value (as JSON reads it back), or a repr."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        image = bytes(value)
        mime, size = mime_type(image), image_size(image)
        if mime and size:
            return {"image": image, "mime_type": mime, "width": size[0], "height": size[1]}
    elif value is None or type(value) in (str, bool):
        return {"value": value}  # JSON as it is (the common one-liner: a title, a text)
    else:
        try:
            return {"value": json.loads(json.dumps(value, allow_nan=False))}
        except (TypeError, ValueError, RecursionError):
            pass
    try:
        return {"repr": builtins.repr(value)}
    except Exception as exc:  # noqa: BLE001 - a broken __repr__ is still a result
        return {"repr": f"<{type(value).__name__} object; repr() raised {type(exc).__name__}: {exc}>"}


def snippet_error(exc: BaseException, code: str) -> str:
    """The exception and where in the snippet it was raised: `<execute>:LINE:COL: source`."""
    from playwright.async_api import Error as PlaywrightError

    name: str
    if isinstance(exc, ToolFailure):  # from a helper: snapshot(), ref()
        name, said = exc.error_type, exc.message
    else:
        name = type(exc).__name__
        said = first_lines(exc.message, 12) if isinstance(exc, PlaywrightError) else str(exc)
    text = f"The snippet raised {name}" + (f": {said}" if said else "")
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == FILENAME]
    if frames:
        frame = frames[-1]
        colno = getattr(frame, "colno", None)
        column = f":{colno + 1}" if colno is not None else ""
        lines = code.splitlines()
        source = lines[frame.lineno - 1].strip() if frame.lineno and frame.lineno <= len(lines) else ""
        text += f"\n  at {FILENAME}:{frame.lineno}{column}" + (f": {source}" if source else "")
    return text
