"""The engine: runs one tool call from arguments to envelope, on the runtime loop."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import shutil
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError

from .. import backends
from ..backends import LaunchOptions
from ..browsers.aria import RefTarget
from ..browsers.instances import Instance, InstanceManager
from ..browsers.observe import Observer
from ..browsers.pages import PageState
from ..config import LaunchDefaults, Limits
from ..evidence.failure import cap_message, failure_context, mark
from ..evidence.recorder import EvidenceEvent
from ..guard import secret_echo
from ..guard.file_guard import judge_by
from ..guard.grants import SERVING, Grant
from ..guard.redaction import redact_for_approval
from ..guard.url_policy import UrlPolicy, enforce
from ..webmcp.discovery import PageTool, WebMCPEvent
from . import approval as approvals
from .approval import Approval as Approval  # re-exported: front ends type their approvers with it
from .approval import ApprovalRequest as ApprovalRequest
from .approval import Policy
from .bounds import screen, tool_label
from .context import CallContext
from .envelope import Envelope, ErrorType, Operation, Outcome, Retry, Status, enforce_size_limit
from .errors import ToolFailure
from .listeners import Listeners
from .registry import REGISTRY, Registry, ToolSpec
from .util import first_lines, random_uuid, utc_now

if TYPE_CHECKING:
    from ..webmcp.page_tools import PageToolRegistration, PythonTool

DEFAULT_INSTANCE = "default"
HISTORY_SIZE = 500  # calls kept for call logs that open later
# The progress line of a call that launches its instance, by backend ("launching Chromium… ready in 1.2 s").
LAUNCH_WORDS = {
    "chromium": "launching Chromium",
    "camoufox": "launching Camoufox",
    "remote": "connecting to the remote browser",
}

# Errors after which a tab is checked for a renderer stuck in script (see PageState.suspect).
SLOW_ERRORS = frozenset({"operation_timeout", "observation_timeout", "navigation_timeout", "wait_timeout"})

TIMEOUT_PHASES = {
    "queued": "it was still waiting for earlier calls on this instance, and nothing was done.",
    "launching": "the browser instance was still launching; the launch goes on, and the instance "
    "will be usable once it is live.",
    "approval": "it was still waiting for the notebook user's approval, and nothing was done.",
    "running": "it was stopped while running and may have taken effect.",
}


BinaryRenderer = Callable[[bytes, str, dict[str, Any], Any], Any]
"""`fn(data, media_type, operation, cancelled) -> {"url", "expires_at"}` (see `Session.binary_renderer`)."""


@dataclass(frozen=True)
class CallRecord:
    """What listeners (call logs) learn about each finished call."""

    tool: str
    args: dict[str, Any]
    caller: str
    envelope: Envelope
    # What the refs in `args` pointed at when the call was made (for replays: `webmcp_nb.export`).
    targets: dict[str, RefTarget] = field(default_factory=dict)


class Engine:
    """Executes tool calls for one session. Lives on the runtime loop."""

    def __init__(
        self,
        limits: Limits,
        launch_defaults: LaunchDefaults,
        registry: Registry = REGISTRY,
        default_instance: str = DEFAULT_INSTANCE,
        artifacts_dir: str | None = None,
        keep_artifacts: bool = False,
    ) -> None:
        """Without `artifacts_dir`, the artifacts go to a new temporary directory that `close()`
        removes (browser profiles with their cookies included) unless `keep_artifacts`."""
        self.limits = limits
        self.launch_defaults = launch_defaults
        self.registry = registry
        self.manager = InstanceManager(limits)
        self.current_instance = default_instance
        self.default_instance = default_instance
        self.listeners: Listeners[[CallRecord]] = Listeners()
        self.webmcp = self.manager.webmcp
        self.history: deque[CallRecord] = deque(maxlen=HISTORY_SIZE)
        self.calls_recorded = 0  # every call since the start; more than `history` holds once it is full
        self._artifacts_dir = Path(artifacts_dir) if artifacts_dir else None
        self._discard_artifacts = artifacts_dir is None and not keep_artifacts
        self.binary_renderer: BinaryRenderer | None = None  # see `Session.binary_renderer`
        self.reveal_secrets = False  # the notebook's own calls show known secrets (see `secret_echo`)
        self.url_policy: UrlPolicy | None = None  # judges the notebook's own calls (Session(url_policy=...))

    # public -----------------------------------------------------------------
    async def execute(
        self,
        tool: str,
        args: dict[str, Any],
        *,
        submitted: float | None = None,
        started_at: str | None = None,
        caller: str = "python",
        approval: Approval | None = None,
        approve: Policy = "all",
        grant: Grant | None = None,
        timeout_s: float | None = None,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
    ) -> Envelope:
        """Run `tool` with `args`; always returns an envelope, never raises (a call out of
        the fixed bounds of `bounds.screen`, a non-string tool name included, is refused first).

        `grant` limits what the caller may call and pass (an agent's; None: everything).
        With `approval`, a call that policy `approve` asks about (by what the call will do:
        `webmcp_nb.core.call.approval`) waits for that decision after validation and before
        queueing on its instance. `timeout_s` shortens the operation timeout for this call.
        If the caller cancels (or goes away), the call is recorded as `cancelled` and a call
        still queued never runs.
        """
        submitted = time.monotonic() if submitted is None else submitted
        started_at = started_at or utc_now()
        spec: ToolSpec | None = None
        ctx: CallContext | None = None
        refusal = screen(tool, args)
        tool = tool_label(tool)
        logged_args = {} if refusal is not None else args
        try:
            if refusal is not None:
                raise refusal
            spec = self.registry.get(tool)
            if grant is not None and not grant.admits(spec):
                ungranted, spec = spec, None
                raise ToolFailure(
                    "invalid_params",
                    f"Tool {tool!r} is not available here: its capability group {ungranted.group!r} was not "
                    f"granted (the notebook user can grant it, for example `%browser serve --caps {ungranted.group}`).",
                    started=False,
                )
            params = spec.validate(args)
            budget, source = self.limits.operation_timeout_s, self.limits.source("operation_timeout_s")
            if timeout_s is not None:
                if (
                    isinstance(timeout_s, bool)
                    or not isinstance(timeout_s, (int, float))
                    or not 0 < timeout_s < math.inf
                ):
                    raise ToolFailure(
                        "invalid_params",
                        f"The call's timeout must be a positive number of seconds, not {timeout_s!r}.",
                        started=False,
                    )
                if timeout_s < budget:
                    budget, source = timeout_s, "the call's own timeout"
            ctx = CallContext(
                self,
                spec,
                deadline=submitted + budget,
                caller=caller,
                approval=approval,
                approve=approve,
                grant=grant,
                on_progress=on_progress,
            )
            if spec.check is not None:
                spec.check(ctx, params)
            try:
                serving = SERVING.set(grant)  # what code the call runs may reach (check_serving_cap)
                try:
                    async with asyncio.timeout(ctx.remaining_s()):
                        data = await self._run(spec, params, ctx)
                finally:
                    SERVING.reset(serving)
                if ctx.cookie_read is None:  # sent now, awaited once the envelope is built: it overlaps that work
                    ctx.start_cookie_read()
                    await asyncio.sleep(0)  # (the task's first step sends the request)
            except TimeoutError:
                message = (
                    f"{tool} did not finish within {budget:g} s ({source}, queue wait included); "
                    f"{TIMEOUT_PHASES[ctx.phase]}"
                )
                if ctx.phase == "running" and ctx.cut_off is not None:
                    raise ctx.cut_off("operation_timeout", message) from None
                raise ToolFailure("operation_timeout", message, started=ctx.phase == "running") from None
            envelope = self._envelope(
                spec.name,
                ctx,
                submitted,
                started_at,
                "not_started" if ctx.previewed else "completed",
                "not_needed",
                data=data.model_dump(mode="python"),
            )
        except asyncio.CancelledError:
            self._record_cancelled(tool, args, caller, spec, ctx, submitted, started_at)
            raise
        except Exception as exc:  # noqa: BLE001 - every failure becomes an envelope
            if ctx is not None:
                ctx.cookie_read = None  # the failure context reads the page again: cookies are read after it
            failure = exc if isinstance(exc, ToolFailure) else self._translate(exc, ctx)
            self._suspect_page(ctx, failure)
            outcome, retry = classify(spec, failure.started, failure.read_only)
            envelope = self._failed(
                failure, tool, ctx, submitted, started_at, "completed" if failure.completed else outcome, retry
            )
        if not envelope.ok and ctx is not None:
            context = await failure_context(ctx, envelope.error_type, envelope.context)
            if context is not None:
                envelope = dataclasses.replace(envelope, context=context)
        envelope = enforce_size_limit(
            envelope,
            self.limits.max_result_bytes,
            source=self.limits.source("max_result_bytes"),
            read_only=spec is not None and spec.call_is_read_only(args),
            hint=spec.too_large_hint if spec is not None else "",
        )
        await secret_echo.refresh(self.manager.secrets, ctx)
        return self._finish(tool, logged_args, caller, spec, ctx, envelope, grant=grant, with_targets=True)

    async def close(self) -> None:
        await self.manager.close_all()
        await asyncio.to_thread(self.discard_artifacts)

    def discard_artifacts(self) -> None:
        """Remove the temporary artifacts directory (see `__init__`; idempotent)."""
        if self._discard_artifacts and self._artifacts_dir is not None:
            shutil.rmtree(self._artifacts_dir, ignore_errors=True)

    def scrub_known_secrets(self, value: Any) -> Any:
        """`value` (JSON-like) without any known secret nor secret URL part, for what a front end shows
        that is no call's result (a mirrored page tool's name, description and schemas)."""
        return self.manager.secrets.scrub(value)

    def add_evidence_listener(self, listener: Callable[[EvidenceEvent], None]) -> Callable[[], None]:
        """Call `listener(event)` on the runtime loop for every console message and for every network
        request as it starts, finishes or fails, in every instance. Returns a function that removes it."""
        return self.manager.evidence_listeners.add(listener)

    def add_webmcp_listener(self, listener: Callable[[WebMCPEvent], None]) -> Callable[[], None]:
        """Call `listener(event)` on the runtime loop for every WebMCP event of every page:
        tool-list changes (``added``, ``removed``, ``cleared``) and invocations (``invoked``,
        ``responded``); see `webmcp_nb.core.webmcp.discovery`. Returns a function that removes it."""
        return self.webmcp.add_listener(listener)

    @property
    def webmcp_history(self) -> list[WebMCPEvent]:
        """The latest WebMCP events (at most 500), oldest first."""
        return list(self.webmcp.history)

    async def register_page_tool(
        self,
        tool: PythonTool,
        *,
        instance: str | None = None,
        page_id: str | None = None,
        exposed_to: Iterable[str] = (),
    ) -> PageToolRegistration:
        """Offer the Python function `tool` to agents inside a page as a WebMCP tool, callable
        from frames of the page's origin and of the origins in `exposed_to`."""
        from ..webmcp.page_tools import register

        target = await self._resolve_instance(instance)
        async with target.lock:
            if target.state != "live":
                raise self.manager.unavailable(target)
            return await register(target, target.page(page_id), tool, exposed_to)

    @property
    def artifacts_dir(self) -> Path:
        """The session's artifacts directory (created on first use)."""
        if self._artifacts_dir is None:
            self._artifacts_dir = Path(tempfile.mkdtemp(prefix="webmcp_nb-artifacts-"))
        self._artifacts_dir.mkdir(parents=True, exist_ok=True)
        return self._artifacts_dir

    # pages, for front ends ------------------------------------------------------
    def locate_page(self, instance: str | None, page_id: str | None) -> tuple[str, str]:
        """(instance name, page id) of a tab: default the current instance and its current tab;
        ToolFailure (instance_not_found, page_not_found) when there is none."""
        name = instance or self.current_instance
        return name, self.manager.get(name).page(page_id).page_id

    def current_page(self) -> tuple[str, str] | None:
        """(instance name, page id) of the current instance's current tab, if there is one."""
        instance = self.manager.instances.get(self.current_instance)
        if instance is None or instance.current_page_id is None:
            return None
        return instance.name, instance.current_page_id

    def page_tools(self, instance: str, page_id: str) -> tuple[str, list[PageTool]] | None:
        """The main frame id and the WebMCP tools of a live tab, or None (gone, or WebMCP off)."""
        live = self.manager.instances.get(instance)
        state = live.pages.get(page_id) if live is not None and live.state == "live" else None
        if state is None or state.webmcp is None:
            return None
        return state.frame_id(state.page.main_frame), list(state.webmcp.tools)

    async def refresh_page_tools(self, instance: str, page_id: str) -> None:
        """Return once the tab's WebMCP tool list reflects everything its page did before this call
        (a page that registers tools as it loads may report them just after a navigation returns)."""
        live = self.manager.instances.get(instance)
        state = live.pages.get(page_id) if live is not None and live.state == "live" else None
        if state is not None and state.webmcp is not None:
            await state.webmcp.refresh()

    def artifact_path(self, kind: str, ending: str) -> Path:
        """A new path for a file a tool writes: `<kind>-<time>-<random><ending>` in the session's
        artifacts directory (the random part: two files in the same second must not collide)."""
        return self.artifacts_dir / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:12]}{ending}"

    def artifact(self, name: str) -> Path:
        """The file `name` in the session's artifacts directory (a bare file name: no directories);
        FileNotFoundError when there is none."""
        if not name or name != Path(name).name or name in (".", ".."):
            raise FileNotFoundError(name)
        path = self.artifacts_dir / name
        if not path.is_file():
            raise FileNotFoundError(name)
        return path

    def launch_options(self, name: str, grant: Grant | None = None, **overrides: Any) -> LaunchOptions:
        """Options for launching `name`: the session's defaults, `overrides` (None: unset), and
        what `grant` adds (launches an agent causes), composed by the backend chosen."""
        overrides = {key: value for key, value in overrides.items() if value is not None}
        return backends.launch_options(name, self.launch_defaults, overrides, grant)

    # running ----------------------------------------------------------------
    async def _run(self, spec: ToolSpec, params: Any, ctx: CallContext) -> Any:
        if spec.target == "server":
            await self._await_approval(ctx, params, None)
            ctx.phase = "running"
            return await spec.handler(ctx, params)
        ctx.phase = "launching"
        instance = await self._resolve_instance(
            getattr(params, "instance", None), ctx.grant, ctx.remaining_s(), ctx.report_progress
        )
        ctx.instance = instance
        await self._await_approval(ctx, params, instance)
        ctx.phase = "queued"
        lock = contextlib.nullcontext() if spec.resolves_modal else instance.lock
        checked = (
            instance.pages.get(params.page_id or instance.current_page_id or "") if spec.target == "page" else None
        )
        if checked is not None and checked.probing:
            await checked.healthy()  # a call on it just timed out: its check is awaited outside the lock
        async with lock:
            if instance.state != "live":
                raise self.manager.unavailable(instance)
            if not spec.resolves_modal:
                await judge_by(instance, ctx.grant)
                await self._police(instance, ctx.grant)
            if spec.target == "instance":
                ctx.phase = "running"
                return await spec.handler(ctx, params)
            page_state = instance.page(params.page_id)
            ctx.page_state = page_state
            ctx.marks = mark(instance, page_state)
            if not await page_state.healthy():  # crashed or stuck: fail fast, or recover it
                if not spec.recovers_page:
                    raise page_state.unhealthy_error(spec.name)
                ctx.phase = "running"
                return await spec.handler(ctx, params)
            if page_state.webmcp is not None:
                await page_state.webmcp.ready()
            ctx.frame = page_state.frame(_given(params, "frame_id"))
            if spec.resolves_modal:
                ctx.phase = "running"
                return await spec.handler(ctx, params)
            if page_state.modal is None:
                await page_state.drain_pending(ctx.remaining_s())
            if page_state.modal is not None:
                raise page_state.blocked_error(spec.name)
            ctx.phase = "running"
            observing = _given(params, "observe")
            if observing is None:
                return await self._run_watching_modals(spec, params, ctx, page_state)
            observer = Observer(ctx, observing)
            try:
                data = await self._run_watching_modals(spec, params, ctx, page_state)
                ctx.cookie_read = None  # the observation ends the call: cookies are read after it
                if data.modal_state is not None:
                    return data  # the page waits for the modal: nothing more can happen until then
                return data.model_copy(update={"observation": await observer.result()})
            finally:
                observer.close()

    async def _police(self, instance: Instance, grant: Grant | None) -> None:
        """From now on, `instance`'s requests are judged by its latest caller's URL policy (an
        agent's: its server's, with the SSRF guard; the notebook's: `url_policy`, default none)."""
        instance.url_policy = grant.url_policy if grant is not None else self.url_policy
        if instance.url_policy is not None or instance.policy_routed:
            await enforce(instance)

    async def _await_approval(self, ctx: CallContext, params: Any, instance: Instance | None) -> None:
        """The one place approval is decided: judge what the call will do (its tool's annotations
        and arguments, or what it dispatches to) and, if the policy asks, ask `ctx.approval`; a
        denial ends the call, not started."""
        if ctx.approval is None or ctx.approve == "none":
            return
        ctx.phase = "approval"
        page = None
        if instance is not None and ctx.spec.target == "page":
            with contextlib.suppress(ToolFailure):
                page = instance.page(getattr(params, "page_id", None))
        args = params.model_dump(mode="json", exclude_defaults=True)
        if ctx.spec.consequence is not None:
            ctx.judged = await ctx.spec.consequence(ctx, params, page)
        else:
            ctx.judged = approvals.of_tool(ctx.spec, args, self.launch_defaults.headless)
        if not approvals.asks(ctx.approve, ctx.judged):
            return
        known = self.manager.secrets  # the prompt is shown on shared screens: no known secret in it
        args = known.scrub(await redact_for_approval(ctx.spec, args, page))
        preview = known.scrub(ctx.spec.preview(ctx, params)) if ctx.spec.preview is not None else None
        request = ApprovalRequest(
            tool=ctx.spec.name,
            args=args,
            caller=ctx.caller,
            instance=instance.name if instance is not None else None,
            page_id=page.page_id if page is not None else None,
            url=known.scrub(page.page.url) if page is not None else None,
            preview=preview,
        )
        denial = await ctx.approval(request)
        if denial is not None:
            raise ToolFailure("approval_denied", denial, started=False)

    async def _run_watching_modals(self, spec: ToolSpec, params: Any, ctx: CallContext, page_state: PageState) -> Any:
        """Run a page tool; if a dialog or file chooser opens meanwhile, return at once.

        An action reports the open modal in its `modal_state`; a read-only tool cannot
        finish while the page is blocked and fails with `modal_state_blocked`.
        """
        work, finished = await page_state.run_until_modal(spec.handler(ctx, params))
        modal = page_state.modal
        if finished and (modal is None or spec.read_only):
            return work.result()
        ctx.cookie_read = None  # the result describes the modal, seen after the tool's last read
        if spec.read_only:
            failure = page_state.blocked_error(spec.name)
            failure.started = True
            raise failure
        assert modal is not None
        data = work.result().model_dump() if finished else {"url": page_state.page.url}
        return spec.data.model_validate({**data, "modal_state": modal.describe()})

    async def _resolve_instance(
        self,
        name: str | None,
        grant: Grant | None = None,
        time_left_s: float | None = None,
        report: Callable[[str, str], None] | None = None,
    ) -> Instance:
        self.manager.check_driver()
        explicit = name is not None
        name = name or self.current_instance
        instance = self.manager.instances.get(name)
        if instance is not None:
            if instance.state == "launching":
                await asyncio.shield(instance.ready)
            return instance
        if explicit:
            raise self.manager.missing(name)
        if name in self.manager.crashes:
            failure = self.manager.missing(name)
            del self.manager.crashes[name]  # reported once; the next implicit call starts afresh
            raise failure
        return await self.launch(self.launch_options(name, grant), time_left_s, report)

    async def launch(
        self, options: LaunchOptions, time_left_s: float | None, report: Callable[[str, str], None] | None = None
    ) -> Instance:
        """Launch an instance, telling `report` (`CallContext.report_progress`) that it is launching,
        then ready or failed, with the time it took."""
        if report is None:
            return await self.manager.launch(options, time_left_s)
        what = LAUNCH_WORDS.get(options.backend, f"launching {options.backend}")
        started = time.monotonic()
        report("launching", f"{what}…")
        try:
            instance = await self.manager.launch(options, time_left_s)
        except BaseException:
            report("failed", f"{what}… failed after {time.monotonic() - started:.1f} s")
            raise
        report("ready", f"{what}… ready in {time.monotonic() - started:.1f} s")
        return instance

    # envelopes --------------------------------------------------------------
    def _envelope(
        self,
        tool: str,
        ctx: CallContext | None,
        submitted: float,
        started_at: str,
        outcome: Outcome,
        retry: Retry,
        *,
        data: dict[str, Any] | None = None,
        error_type: ErrorType | None = None,
        message: str | None = None,
    ) -> Envelope:
        instance_name = instance_id = page_id = frame_id = None
        artifacts: tuple[str, ...] = ()
        if ctx is not None:
            if ctx.instance is not None:
                instance_name, instance_id = ctx.instance.name, ctx.instance.instance_id
            instance_name = ctx.instance_name or instance_name
            instance_id = ctx.instance_id or instance_id
            if ctx.page_state is not None:
                page_id = ctx.page_state.page_id
                # Instance tools (tabs) act on a page as a whole: its main frame. A page tool
                # whose frame could not be resolved reached no frame at all.
                frame = ctx.frame or (ctx.page_state.page.main_frame if ctx.spec.target == "instance" else None)
                frame_id = ctx.page_state.frame_id(frame) if frame is not None else None
            artifacts = tuple(ctx.artifacts)
        operation = Operation(
            id=random_uuid(),
            tool=tool,
            instance_id=instance_id,
            page_id=page_id,
            frame_id=frame_id,
            started_at=started_at,
            finished_at=utc_now(),
            duration_ms=round((time.monotonic() - submitted) * 1000, 3),
            outcome=outcome,
            retry=retry,
            artifacts=artifacts,
        )
        status: Status = "success" if error_type is None else "error"
        if message is not None:
            message = cap_message(message)
        return Envelope(status, instance_name, operation, data=data, error_type=error_type, message=message)

    def _translate(self, exc: Exception, ctx: CallContext | None) -> ToolFailure:
        """Map an unexpected exception to a failure, conservatively."""
        instance = ctx.instance if ctx else None
        self.manager.check_driver()  # a dead driver fails calls before its exit is seen
        if instance is not None and instance.lost():
            crash = self.manager.crashes.get(instance.name)
            detail = crash.detail if crash is not None else "the browser process exited"
            return ToolFailure("instance_crashed", f"Instance {instance.name!r} crashed during the call: {detail}.")
        if isinstance(exc, PlaywrightError):
            if ctx and ctx.page_state is not None and ctx.page_state.crashed_at:
                failure = ctx.page_state.unhealthy_error(ctx.spec.name)
                failure.started = True
                failure.message = failure.message.replace("was not started", "was interrupted", 1)
                return failure
            if ctx and ctx.page_state is not None and ctx.page_state.closed:
                return ToolFailure("page_not_found", f"Page {ctx.page_state.page_id} was closed during the call.")
            return ToolFailure("internal_error", f"Playwright error: {first_lines(exc.message)}")
        return ToolFailure("internal_error", f"{type(exc).__name__}: {exc}")

    @staticmethod
    def _suspect_page(ctx: CallContext | None, failure: ToolFailure) -> None:
        """After a call timed out on a tab, check (in the background) that its renderer answers."""
        if ctx is not None and ctx.page_state is not None and failure.started and failure.error_type in SLOW_ERRORS:
            ctx.page_state.suspect(ctx.spec.name)

    def _record_cancelled(
        self,
        tool: str,
        args: Any,
        caller: str,
        spec: ToolSpec | None,
        ctx: CallContext | None,
        submitted: float,
        started_at: str,
    ) -> None:
        """Log a call whose caller went away: what it had done by then (nobody gets this envelope)."""
        phase = ctx.phase if ctx is not None else "queued"
        failure = ToolFailure("cancelled", f"The caller cancelled {tool} or went away; {TIMEOUT_PHASES[phase]}")
        if ctx is not None and phase == "running" and ctx.cut_off is not None:
            failure = ctx.cut_off("cancelled", failure.message)
        outcome, retry = classify(spec, phase == "running" and failure.started, failure.read_only)
        envelope = self._failed(failure, tool, ctx, submitted, started_at, outcome, retry, error_type="cancelled")
        self._finish(tool, args, caller, spec, ctx, envelope)

    def _failed(
        self,
        failure: ToolFailure,
        tool: str,
        ctx: CallContext | None,
        submitted: float,
        started_at: str,
        outcome: Outcome,
        retry: Retry,
        error_type: ErrorType | None = None,
    ) -> Envelope:
        """The error envelope of `failure` (its error type unless another is given; its context)."""
        envelope = self._envelope(
            tool,
            ctx,
            submitted,
            started_at,
            outcome,
            retry,
            error_type=error_type or failure.error_type,
            message=failure.message,
        )
        return dataclasses.replace(envelope, context=failure.context) if failure.context else envelope

    def _finish(
        self,
        tool: str,
        args: Any,
        caller: str,
        spec: ToolSpec | None,
        ctx: CallContext | None,
        envelope: Envelope,
        *,
        grant: Grant | None = None,
        with_targets: bool = False,
    ) -> Envelope:
        """The tail of every call, finished or cancelled: its arguments and envelope scrubbed of secrets
        (`secret_echo`), the call recorded (history, listeners; with the targets of its refs when
        `with_targets`). Returns the envelope its caller gets."""
        args, returned, recorded = secret_echo.finish(
            self.manager.secrets, spec, ctx, args, envelope, grant=grant, session_reveals=self.reveal_secrets
        )
        page_state = ctx.page_state if ctx is not None else None
        targets = page_state.ref_targets(args) if with_targets and page_state is not None else {}
        record = CallRecord(tool, args if isinstance(args, dict) else {}, caller, recorded, targets)
        self.history.append(record)
        self.calls_recorded += 1
        self.listeners.emit(record)
        return returned


def _given(params: Any, name: str) -> Any:
    """The parameter `name` of a tool that may not take it (None then): read from the model's fields,
    not by `getattr`, whose miss costs pydantic an exception on every call."""
    return params.__dict__.get(name)


def classify(spec: ToolSpec | None, started: bool, read_only: bool | None = None) -> tuple[Outcome, Retry]:
    """Conservative outcome and retry advice for a failed call."""
    if not started:
        return "not_started", "after_correction"
    if read_only is None:
        read_only = spec is not None and spec.read_only
    return "unknown", "read_only" if read_only else "inspect_state"
