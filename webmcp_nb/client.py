"""`Session`: the Python front end, a sync and async handle on the tool core."""

from __future__ import annotations

import atexit
import concurrent.futures
import dataclasses
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._generated import ToolMethods
from .core.call.envelope import Envelope
from .core.call.hub import Caller, Hub
from .core.call.runtime import Runtime
from .core.config import LIMIT_OPTIONS, LaunchDefaults, Limits
from .core.options import keyword_parameters, spell_out
from .serve_options import ServeOptions

if TYPE_CHECKING:
    from .apis import ApiHandle
    from .core.browsers.live import LiveFrame, LiveView
    from .core.call.engine import Approval, BinaryRenderer, CallRecord, Engine
    from .core.call.registry import Registry, ToolSpec
    from .core.evidence.recorder import EvidenceEvent
    from .core.guard.grants import Grant
    from .core.guard.url_policy import UrlPolicy
    from .core.webmcp.discovery import WebMCPEvent
    from .core.webmcp.page_tools import PageToolRegistration
    from .mcp import ServerHandle
    from .published import Published, PublishedHandle
    from .serve_options import ApprovePolicy

_LIVE_SESSIONS: weakref.WeakSet[Session] = weakref.WeakSet()


class Session(ToolMethods):
    """A browser workbench: tool calls from any thread or event loop.

    >>> with Session() as s:
    ...     s.navigate("http://127.0.0.1:8000/").raise_for_status()
    ...     print(s.snapshot().data["snapshot"])

    Every tool ``browser_X`` has a typed method ``s.X(...)`` that blocks and an awaitable
    ``await s.aX(...)`` (generated from the registry into `ToolMethods`), as `call` has
    `acall` and `close` has `aclose`. Nothing starts until the first call. Calls on one
    instance run one at a time in arrival order; instances run in parallel.
    """

    def __init__(
        self,
        *,
        headless: bool = True,
        executable_path: str | None = None,
        args: Sequence[str] = (),
        default_instance: str = "default",
        artifacts_dir: str | None = None,
        keep_artifacts: bool = False,
        caller: str = "python",
        remote_endpoint: str | None = None,
        remote_headers: Mapping[str, str] | None = None,
        reveal_secrets: bool = False,
        url_policy: UrlPolicy | None = None,
        option_source: str | Mapping[str, str] = "Session(NAME=...)",
        **limits: float | None,
    ) -> None:
        # `limits`: the options of `Limits` (core/config.py), each else its environment variable, else
        # its default; a bad one is a ValueError naming it, its bound and where it came from
        # (`option_source` for these keywords, NAME replaced by the option's name; or each one's own).
        self.limits = Limits.from_env(limits, source=option_source)
        # remote_endpoint: new instances connect to a browser grid (ws://: a Playwright browser server,
        # http://: CDP) with `remote_headers` (a token; never shown), unless a create call says otherwise.
        # None or "": they launch a local Chromium.
        self.launch_defaults = LaunchDefaults(
            headless=headless,
            executable_path=executable_path,
            args=tuple(args),
            remote_endpoint=remote_endpoint or None,
            remote_headers=tuple((remote_headers or {}).items()),
        )
        self.default_instance = default_instance
        self.artifacts_dir = artifacts_dir
        self.keep_artifacts = keep_artifacts
        self.caller = caller
        self._reveal_secrets = reveal_secrets
        # url_policy: the notebook's own calls are judged by it too (agents' are by their server's, always).
        self.url_policy = url_policy
        self._runtime = Runtime()
        self.hub = Hub(self._runtime, lambda: self.engine)
        """The core's public call path (`webmcp_nb.core.call.hub`): what every front end calls through."""
        self._engine: Engine | None = None
        self._published: Published | None = None
        self._servers: set[ServerHandle] = set()
        self._engine_lock = threading.Lock()
        self._closed = False
        self._close_listeners: list[Callable[[], None]] = []
        self._binary_renderer: BinaryRenderer | None = None
        self.apis: dict[str, ApiHandle] = {}

    @property
    def binary_renderer(self) -> BinaryRenderer | None:
        """Where `browser_http(response="binary", binary={"mode": "download"})` hands bodies:
        ``fn(data: bytes, media_type: str, operation: dict, cancelled: threading.Event) ->
        {"url": "https://...", "expires_at": <epoch ms>}`` (sync, run in a worker thread, or async).
        `cancelled` is set if the call is cancelled meanwhile. None: that mode is unsupported."""
        return self._binary_renderer

    @binary_renderer.setter
    def binary_renderer(self, renderer: BinaryRenderer | None) -> None:
        self._binary_renderer = renderer
        if self._engine is not None:
            self._engine.binary_renderer = renderer

    @property
    def reveal_secrets(self) -> bool:
        """Whether this session's own calls show the known secrets a page repeats (a typed password
        in a title, a logged cookie value); False: they read ``[redacted]``, as screens are shared.
        The history and exports never hold them; agents see them only with the ``secrets`` grant."""
        return self._reveal_secrets

    @reveal_secrets.setter
    def reveal_secrets(self, reveal: bool) -> None:
        self._reveal_secrets = bool(reveal)
        if self._engine is not None:
            self._engine.reveal_secrets = self._reveal_secrets

    def reconfigure(
        self,
        *,
        headless: bool | None = None,
        remote_endpoint: str | None = None,
        remote_headers: Mapping[str, str] | None = None,
        source: str = "reconfigure(NAME=...)",
        **limits: float | None,
    ) -> None:
        """Change options of a running session: limits (the `Session` keywords of `Limits`) apply to
        the next call, launch options to instances created afterwards (`remote_endpoint=""`: launch
        them here again). None leaves an option as it is. Invalid values raise ValueError naming the
        option, its bound and `source` (what messages say it came from; ``NAME``: the option's name)."""
        updated = self.limits.updated(limits, source=source)
        launch: dict[str, Any] = {} if headless is None else {"headless": headless}
        if remote_endpoint is not None:
            launch["remote_endpoint"] = remote_endpoint or None
        if remote_headers is not None:
            launch["remote_headers"] = tuple(remote_headers.items())
        launch_defaults = dataclasses.replace(self.launch_defaults, **launch)
        self.limits, self.launch_defaults = updated, launch_defaults
        engine = self._engine
        if engine is not None:
            engine.limits = engine.manager.limits = updated
            engine.launch_defaults = launch_defaults

    # the registry -----------------------------------------------------------
    @property
    def tools(self) -> list[ToolSpec]:
        """Every tool this session can call, its published functions included."""
        return list(self.published.tools)

    @property
    def published(self) -> Published:
        """The functions, resources and prompts this session publishes to agents."""
        with self._engine_lock:
            if self._published is None:
                from .core.call.registry import Registry
                from .published import Published

                self._published = Published(Registry(parent=tool_registry()))
            return self._published

    def tool(self, function: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Publish a Python function as a tool for agents (decorator; type hints give
        the schema). Options: name, title, description, read_only, destructive,
        idempotent. Returns a handle that still calls the function; `.unregister()`
        withdraws it."""
        from .published import tool_spec

        def publish(function: Callable[..., Any]) -> PublishedHandle:
            return self.published.add_tool(tool_spec(function, **options), function)

        return publish if function is None else publish(function)

    def api(self, spec: Any, /, *, name: str, **options: Any) -> ApiHandle:
        """Load an OpenAPI 3.0/3.1 document (a dict, a path or a URL): its operations become calls
        (`ApiHandle.call`) and tools of group ``api``. Options: base_url, via ("kernel" or "page"), auth,
        include, exclude, stream_collection, binary, max_result_bytes, strict, expose_to_page (see docs/apis.md)."""
        from .apis import load_api

        return load_api(self, spec, name=name, **options)

    def resource(
        self,
        uri: str,
        content: str | bytes | Callable[..., str | bytes] | None = None,
        /,
        *,
        name: str | None = None,
        description: str = "",
        mime_type: str = "text/plain",
    ) -> Any:
        """Publish a resource at `uri`: fixed content, or a function read on every
        request (also as a decorator: `@s.resource("notes://today")`). A URI with ``{variables}``
        (``"notes://{id}"``) is a template: the function gets the variables of each URI read
        (``read(id="42")`` for ``notes://42``)."""
        from .published import PublishedResource

        def publish(source: str | bytes | Callable[..., str | bytes]) -> PublishedHandle:
            if callable(source):
                read, label, about = source, name or source.__name__, description or (source.__doc__ or "").strip()
            elif "{" in uri:
                raise ValueError(f"resource template {uri!r} needs a function to read its resources")
            else:
                read, label, about = (lambda: source), name or uri, description
            return self.published.add_resource(PublishedResource.build(uri, label, about, mime_type, read))

        return publish if content is None else publish(content)

    def prompt(self, function: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Publish a prompt template (decorator): the function's parameters are the
        prompt's arguments; it returns text or (role, text) messages. Options: name,
        description, args_schema (a JSON Schema object of the arguments: types, enums,
        descriptions; default: from the signature's type hints)."""
        from .published import prompt_spec

        def publish(function: Callable[..., Any]) -> PublishedHandle:
            return self.published.add_prompt(prompt_spec(function, **options))

        return publish if function is None else publish(function)

    @property
    def servers(self) -> list[ServerHandle]:
        """The MCP servers this session runs (`serve_mcp`)."""
        self._servers = {server for server in self._servers if server.running}
        return list(self._servers)

    def serve_mcp(
        self, options: ServeOptions | None = None, *, approver: Approval | None = None, **fields: Any
    ) -> ServerHandle:
        """Serve this session to agents over MCP (streamable HTTP at `handle.url`,
        bearer `handle.token`) on the runtime thread; `handle.stop()` ends it.

        `options` is a `webmcp_nb.serve_options.ServeOptions`; its fields can also be given as
        keywords (over `options`' own), the same as the flags of ``%browser serve`` and
        ``webmcp-nb serve`` (each field's help says what it grants). `approver` decides the calls
        `approve` holds (None approves, a string denies). See the threat model (docs/mcp.md) before
        granting anything to an agent you do not trust.
        """
        from .mcp import serve_http

        handle = self._runtime.run(serve_http(self, ServeOptions.of(options, **fields), approver=approver))
        self._servers.add(handle)
        return handle

    # calling ----------------------------------------------------------------
    def call(self, tool: str, /, *, call_timeout_s: float | None = None, **args: Any) -> Envelope:
        """Call `tool` and block until its envelope is ready. Safe from any thread
        except the runtime's own (use `acall` there).

        `call_timeout_s` gives up sooner than the operation timeout (`operation_timeout`; a call
        still queued then never runs). KeyboardInterrupt cancels the call the same way."""
        return self.hub.call(Caller(self.caller), tool, args, timeout_s=call_timeout_s)

    async def acall(self, tool: str, /, *, call_timeout_s: float | None = None, **args: Any) -> Envelope:
        """Call `tool` from any event loop (`call_timeout_s` as in `call`)."""
        return await self.hub.acall(Caller(self.caller), tool, args, timeout_s=call_timeout_s)

    def call_as(
        self,
        caller: str,
        tool: str,
        args: dict[str, Any],
        *,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
    ) -> Envelope:
        """`call` on behalf of another front end (a widget, an agent), for the call log. `on_progress`
        hears what a streaming call collects as it arrives (on the runtime thread)."""
        return self.hub.call(Caller(caller), tool, args, on_progress=on_progress)

    async def acall_as(
        self,
        caller: str,
        tool: str,
        args: dict[str, Any],
        *,
        approval: Approval | None = None,
        approve: ApprovePolicy = "all",
        grant: Grant | None = None,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
    ) -> Envelope:
        """`acall` on behalf of another caller: `approval` decides the calls policy `approve`
        asks about (default: every call that is not read-only); `grant` limits what it may call
        and pass (see `webmcp_nb.core.call.hub.Caller`, which `hub` takes)."""
        terms = Caller(caller, grant, approve if approval is not None else "none", approval)
        return await self.hub.acall(terms, tool, args, on_progress=on_progress)

    @property
    def runtime(self) -> Runtime:
        """The thread and event loop that own every browser object (`Runtime.run`, `arun`, `submit`)."""
        return self._runtime

    @property
    def started(self) -> bool:
        """Whether the first call has started the tool core (its limits are then live)."""
        return self._engine is not None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def engine(self) -> Engine:
        """The tool core behind this session, started on first use (for front ends: the public
        hooks of `webmcp_nb.core.call.engine.Engine`)."""
        engine = self._engine
        if engine is not None:
            return engine
        published = self.published
        with self._engine_lock:
            if self._closed:
                raise RuntimeError("This Session is closed; create a new one.")
            if self._engine is None:
                from .core.call.engine import Engine

                self._engine = Engine(
                    self.limits,
                    self.launch_defaults,
                    registry=published.tools,
                    default_instance=self.default_instance,
                    artifacts_dir=self.artifacts_dir,
                    keep_artifacts=self.keep_artifacts,
                )
                self._engine.binary_renderer = self._binary_renderer
                self._engine.reveal_secrets = self._reveal_secrets
                self._engine.url_policy = self.url_policy
                _LIVE_SESSIONS.add(self)
            return self._engine

    def submit(
        self, tool: str, args: dict[str, Any], *, caller: str | None = None
    ) -> concurrent.futures.Future[Envelope]:
        """Start a call without waiting for it (for widget callbacks that must not block)."""
        return self.hub.submit(Caller(caller or self.caller), tool, args)

    def add_listener(self, listener: Callable[[CallRecord], None]) -> Callable[[], None]:
        """Call `listener` (on the runtime thread) after every call; returns a remover."""
        return self.engine.listeners.add(listener)

    def add_close_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` once this session has closed (at once if it already has); returns a remover."""
        if self._closed:
            listener()
            return lambda: None
        self._close_listeners.append(listener)
        return lambda: self._close_listeners.remove(listener) if listener in self._close_listeners else None

    def add_evidence_listener(self, listener: Callable[[EvidenceEvent], None]) -> Callable[[], None]:
        """Call `listener` (on the runtime thread) for every console message and network request of
        every instance as it is recorded or progresses (`EvidenceEvent.notable`: errors and failures);
        returns a remover."""
        return self.engine.add_evidence_listener(listener)

    def add_webmcp_listener(self, listener: Callable[[WebMCPEvent], None]) -> Callable[[], None]:
        """Call `listener` (on the runtime thread) for every WebMCP event of every page: tool-list
        changes and invocations, including calls made inside the page; returns a remover."""
        return self.engine.add_webmcp_listener(listener)

    @property
    def webmcp_history(self) -> list[WebMCPEvent]:
        """The latest WebMCP events (at most 500), oldest first."""
        return self.engine.webmcp_history

    def page_tool(
        self,
        function: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        consequential: bool = False,
        instance: str | None = None,
        page_id: str | None = None,
        exposed_to: list[str] | None = None,
    ) -> Any:
        """Decorator: offer a Python function to agents inside the page as a WebMCP tool.

        ``@s.page_tool`` or ``@s.page_tool(name=..., read_only=True)``; the input schema comes
        from the signature, the description from the docstring. Returns a `PageToolHandle`
        (callable like the function; ``.unregister()`` withdraws the tool). The tool lives in
        the current document of the page (default: the current tab); a navigation ends it. Only
        frames of the page's origin may call it, and those of the origins in `exposed_to`
        (``["http://localhost:8000"]``); other calls are refused and logged as WebMCP events.
        ``consequential=True`` gives it ``consequentialHint``: an agent's call waits for approval.
        """

        def register(target: Callable[..., Any]) -> PageToolHandle:
            from .core.webmcp.page_tools import PythonTool

            tool = PythonTool.from_function(
                target, name=name, description=description, read_only=read_only, consequential=consequential
            )
            engine = self.engine
            registration = self._runtime.run(
                engine.register_page_tool(tool, instance=instance, page_id=page_id, exposed_to=exposed_to or ())
            )
            return PageToolHandle(self, registration)

        return register(function) if function is not None else register

    def live_view(self, on_frame: Callable[[LiveFrame], None], **options: Any) -> LiveView:
        """Stream frames of an instance's current tab to `on_frame` until `.stop()`.

        Options are those of `webmcp_nb.core.browsers.live.LiveView`: instance, max_fps, quality,
        max_width, max_height.
        """
        from .core.browsers.live import LiveView

        view = LiveView(self.engine, on_frame, **options)
        self._runtime.run(view.start())
        return view

    def overview(self) -> dict[str, Any]:
        """Instances and their tabs as the core knows them, read without a tool call
        (so without waiting behind other calls). Titles are not included."""
        engine = self.engine
        instances = {}
        for name, instance in list(engine.manager.instances.items()):
            pages = [
                {"page_id": state.page_id, "url": engine.manager.secrets.scrub(state.page.url)}
                for state in list(instance.pages.values())
            ]
            instances[name] = {"state": instance.state, "current_page_id": instance.current_page_id, "pages": pages}
        return {"current_instance": engine.current_instance, "instances": instances}

    def artifact(self, name: str) -> Path:
        """A file a call wrote into the session's artifacts directory, by its file name
        (`operation.artifacts` holds the full paths); FileNotFoundError when there is none."""
        return self.engine.artifact(name)

    @property
    def history(self) -> list[CallRecord]:
        """The most recent calls (at most 500), oldest first."""
        return list(self.engine.history)

    def export_notebook(self, path: str | Path, *, callers: Sequence[str] | None = None) -> Path:
        """Write the call log (every front end, or the callers matching `callers`: patterns such as
        ``["notebook", "agent:*"]``) as a notebook that replays it on a fresh kernel; see `webmcp_nb.export`."""
        from .export import export_notebook

        return export_notebook(self, path, callers)

    def export_script(self, path: str | Path, *, callers: Sequence[str] | None = None) -> Path:
        """`export_notebook` as a plain Python script using `Session` (exit status 1 if a call ends differently)."""
        from .export import export_script

        return export_script(self, path, callers)

    # lifecycle --------------------------------------------------------------
    def close(self) -> None:
        """Stop MCP servers, close every browser, remove the temporary artifacts directory (unless
        `keep_artifacts` or an explicit `artifacts_dir`) and stop the runtime thread. Idempotent;
        also run at interpreter exit (a kernel's shutdown included)."""
        with self._engine_lock:
            if self._closed:
                return
            self._closed = True
            engine, self._engine = self._engine, None
        for handle in list(self.apis.values()):
            try:
                handle.close()
            except Exception:  # noqa: BLE001 - closing must not raise
                pass
        for server in list(self._servers):
            try:
                server.stop()
            except Exception:  # noqa: BLE001 - closing must not raise
                pass
        if engine is not None and self._runtime.running:
            future = self._runtime.submit(engine.close())
            try:
                future.result(timeout=30)
            except Exception:  # noqa: BLE001 - closing must not raise; the driver exits with us
                pass
        if engine is not None:
            engine.discard_artifacts()  # also when closing the browsers failed or timed out
        listeners, self._close_listeners = self._close_listeners, []
        for listener in listeners:  # while the runtime still runs: a live view stops through it
            try:
                listener()
            except Exception:  # noqa: BLE001 - closing must not raise
                pass
        self._runtime.stop()
        _LIVE_SESSIONS.discard(self)

    async def aclose(self) -> None:
        import asyncio

        await asyncio.get_running_loop().run_in_executor(None, self.close)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("running" if self.started else "idle")
        return f"<webmcp_nb.Session {state}>"


spell_out(Session.__init__, keyword_parameters(LIMIT_OPTIONS))
spell_out(Session.reconfigure, keyword_parameters(LIMIT_OPTIONS))
spell_out(Session.serve_mcp, ServeOptions.parameters())


class PageToolHandle:
    """A Python function registered as a page tool (from `Session.page_tool`)."""

    def __init__(self, session: Session, registration: PageToolRegistration) -> None:
        self._session = session
        self.registration = registration
        self.name = registration.tool.name
        self.page_id = registration.page_id

    @property
    def calls(self) -> int:
        """How many times agents in the page have called it."""
        return self.registration.calls

    @property
    def active(self) -> bool:
        return self.registration.active

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .core.webmcp.page_tools import PythonTool

        tool = self.registration.tool
        assert isinstance(tool, PythonTool)
        return tool.function(*args, **kwargs)

    def unregister(self) -> None:
        """Abort the registration: the page's tool list loses it."""
        self._session.runtime.run(self.registration.unregister())

    def __repr__(self) -> str:
        state = "registered" if self.active else "unregistered"
        return f"<PageToolHandle {self.name!r} {state} in page {self.page_id}, {self.calls} calls>"


def tool_registry() -> Registry:
    """The registry with every tool registered (imports pydantic and the tool modules)."""
    from .core import tools  # noqa: F401 - registers every tool
    from .core.call.registry import REGISTRY

    return REGISTRY


@atexit.register
def _close_all_sessions() -> None:
    for session in list(_LIVE_SESSIONS):
        session.close()
