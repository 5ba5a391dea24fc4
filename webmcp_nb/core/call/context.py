"""What a tool handler sees of the call it is serving."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import ToolFailure
from .util import first_lines

T = TypeVar("T")

if TYPE_CHECKING:
    from playwright.async_api import Frame, Locator, Page

    from ..browsers.instances import Instance
    from ..browsers.pages import PageState
    from ..evidence.failure import CallMarks
    from ..guard.grants import Grant
    from .approval import Approval, Consequence, Policy
    from .engine import Engine
    from .envelope import ErrorType
    from .registry import ToolSpec


@dataclass
class CallContext:
    engine: Engine
    spec: ToolSpec
    deadline: float
    caller: str = "python"
    approval: Approval | None = None
    approve: Policy = "all"  # which calls `approval` is asked about (see webmcp_nb.core.call.approval)
    judged: Consequence | None = None  # what approval judged the call to do (None: not judged)
    grant: Grant | None = None  # what the caller may pass; None: full power (see grants)
    instance: Instance | None = None
    page_state: PageState | None = None
    frame: Frame | None = None
    artifacts: list[str] = field(default_factory=list)
    # Where the call is, for timeout messages: "launching", "approval", "queued", "running".
    phase: str = "queued"
    # Set by handlers that act on an instance without targeting it (create/destroy).
    instance_name: str | None = None
    instance_id: str | None = None
    # Where the call found its page (url, document, console): for the failure context.
    marks: CallMarks | None = None
    # Paths of `spec.typed_text` arguments typed into fields found not to be secret, and found secret
    # (their text becomes a known secret: see webmcp_nb.core.guard.secret_echo).
    typed_plain: set[tuple[str | int, ...]] = field(default_factory=set)
    typed_secret: set[tuple[str | int, ...]] = field(default_factory=set)
    # The front end's progress hook (a notebook's live display): tools that stream call it with
    # small dicts as things arrive (browser_http's SSE events). Runs on the runtime loop: keep it quick.
    on_progress: Callable[[dict[str, Any]], None] | None = None
    # Set by a running tool that knows what being cut off means for it (the engine's deadline, the
    # caller's cancel): `cut_off(error_type, message)` -> the failure to report, with its outcome and
    # context (browser_http: whether the request was sent, its method, SSE's partial events).
    cut_off: Callable[[ErrorType, str], ToolFailure] | None = None
    # Set by a tool whose failure came from not finding an element although its error type does not
    # say so (browser_execute's snippet): the failure context then checks for an empty page.
    element_failed: bool = False
    # Set by a tool that only described what it would do (an API operation's preview=True): outcome not_started.
    previewed: bool = False
    # The cookie read every finished call ends with (`guard.secret_echo.refresh`), when the tool sent it
    # with its last read (`last_read`); the engine drops it when it reads the page after the tool.
    cookie_read: asyncio.Future[None] | None = None

    def report_progress(self, stage: str, message: str) -> None:
        """Tell the front end where a long step stands (`stage` "launching", then "ready" or
        "failed", with a sentence a person reads): a notebook updates one line in place, an MCP
        client that sent a progress token gets `notifications/progress`. Nothing without a hook."""
        if self.on_progress is not None:
            self.on_progress({"kind": "stage", "stage": stage, "message": message})

    @property
    def from_agent(self) -> bool:
        """Whether an agent (an MCP client) made the call: its caller is ``agent`` or ``agent:<name>``."""
        return self.caller == "agent" or self.caller.startswith("agent:")

    def confirm(self, consequence: Consequence, what: str) -> None:
        """For a tool that dispatches: refuse, before running it, a target (`what`) that needs an
        approval the call did not get (it appeared or changed after the call was judged)."""
        from .approval import asks, exceeds

        if self.approval is None or self.judged is None:
            return
        if asks(self.approve, consequence) and exceeds(consequence, self.judged):
            raise ToolFailure(
                "approval_denied",
                f"{what} is {consequence.replace('_', '-')}, but changed after the call was checked for approval "
                f"(judged {self.judged.replace('_', '-')}); nothing was done. Call it again to be asked.",
                started=False,
            )

    def allows(self, group: str) -> bool:
        """Whether the caller's grant includes `group` (for parameters that need more than the tool)."""
        return self.grant is None or group in self.grant.groups

    def require_instance(self) -> Instance:
        """The instance the call runs on (the engine sets it for a tool whose target has one)."""
        if self.instance is None:
            raise self._missing("instance")
        return self.instance

    def require_page(self) -> PageState:
        """The page the call targets (a page tool's)."""
        if self.page_state is None:
            raise self._missing("page")
        return self.page_state

    def require_frame(self) -> Frame:
        """The frame the call targets (a page tool's; its page's main frame unless it names one)."""
        if self.frame is None:
            raise self._missing("frame")
        return self.frame

    def _missing(self, what: str) -> RuntimeError:
        return RuntimeError(f"{self.spec.name} has no {what}: its target is {self.spec.target!r}")

    @property
    def page(self) -> Page:
        return self.require_page().page

    def remaining_s(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def timeout_ms(self, seconds: float) -> float:
        """A Playwright timeout: `seconds`, but never past the operation deadline."""
        return max(1.0, min(seconds, self.remaining_s()) * 1000)

    @property
    def action_timeout_ms(self) -> float:
        return self.timeout_ms(self.engine.limits.action_timeout_s)

    @property
    def navigation_timeout_ms(self) -> float:
        return self.timeout_ms(self.engine.limits.navigation_timeout_s)

    @property
    def capture_timeout_ms(self) -> float:
        return self.timeout_ms(self.engine.limits.capture_timeout_s)

    async def locate(self, ref: str) -> Locator:
        return await self.require_page().locate(ref)

    async def typing_into(self, locator: Locator, path: tuple[str | int, ...]) -> bool:
        """Check the field the argument at `path` is typed into: True if it is secret (its text is
        then never recorded or shown); otherwise the text may be recorded as given."""
        from ..guard.redaction import is_secret

        secret = await is_secret(locator)
        (self.typed_secret if secret else self.typed_plain).add(path)
        return secret

    async def act(
        self, ref: str, action: Callable[[Locator], Awaitable[T]], *, probe: str | None = None
    ) -> tuple[T, int]:
        return await self.require_page().act(ref, action, probe=probe)

    async def capture(self, work: Awaitable[T], what: str, timeout_ms: float) -> T:
        """Await a read of the page (snapshot, screenshot, PDF) that was given `timeout_ms`.

        Its timeout is `operation_timeout` (`observation_timeout` is only for action
        observations, see `webmcp_nb.core.browsers.observe`). The limit is also enforced here: some
        Playwright versions overrun it while an element screenshot waits for visibility.
        """
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        try:
            async with asyncio.timeout(timeout_ms / 1000 + 0.5):
                return await work
        except (PlaywrightTimeout, TimeoutError) as exc:
            said = f" Playwright said: {first_lines(exc.message, 6)}" if isinstance(exc, PlaywrightTimeout) else ""
            raise ToolFailure(
                "operation_timeout", f"Timed out after {timeout_ms / 1000:g} s waiting for {what}.{said}"
            ) from None

    async def last_read(self, read: Awaitable[T]) -> T:
        """Await the tool's last read of the page (what its result ends with), with the call's
        closing cookie read sent right behind it instead of after it: one round trip less."""
        answer = asyncio.ensure_future(read)  # runs (and sends) first: tasks start in order
        self.start_cookie_read()
        return await answer

    def start_cookie_read(self) -> None:
        """Start the call's closing cookie read (`guard.secret_echo.refresh` awaits it): only once
        nothing the call does can set a cookie any more."""
        from ..guard.secret_echo import read_cookies

        self.cookie_read = asyncio.ensure_future(read_cookies(self.engine.manager.secrets, self))

    async def settle(self) -> None:
        """Return once a navigation the action started has its document parsed."""
        if self.page_state is not None and self.page_state.parsed:
            return  # nothing navigated: Playwright's wait would only say so, in three driver messages
        try:
            await self.page.main_frame.wait_for_load_state("domcontentloaded", timeout=self.navigation_timeout_ms)
        except Exception as exc:  # noqa: BLE001 - reported with the action's outcome
            raise ToolFailure(
                "navigation_timeout",
                f"The action ran, but the navigation it started did not load in time: {exc}",
            ) from None
