"""The MCP server: a session's tools, resources and prompts for an attached agent.

Generated from the session's registry (built-in tools plus what the notebook
published). Calls run through the same engine as the notebook's own calls, so
they share instances, per-instance ordering and the call log (caller
``agent:<client name>``). It serves both protocol eras from one app: 2026-07-28
clients hear about list changes on `subscriptions/listen` streams, 2025-era
clients through `notifications/*/list_changed`.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import dataclasses
import weakref
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server import Server
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..core.call.approval import Approval
from ..core.call.envelope import refusal
from ..core.call.errors import InvalidParams
from ..core.call.hub import Caller
from ..core.call.registry import ToolSpec
from ..core.call.util import spawn
from ..core.guard.grants import SECRETS_CAP, Grant
from ..core.version import VERSION
from ..published import Kind
from ..serve_options import ServeOptions
from .app import (
    APP_META,
    APP_TOOLS,
    APP_URI,
    AppHub,
    ClickParams,
    DecideParams,
    StateParams,
    app_contents,
    app_resource,
    app_tools,
    renders_apps,
)
from .malformed import as_sent, keep_malformed_calls
from .mirror import CALL_TOOL, Mirrors
from .results import ARTIFACT_URI, ENVELOPE_NOTE, artifact_mime_type, call_result, is_text, output_schema
from .schemas import agent_input_schema, shared_fields_note, tool_annotations

if TYPE_CHECKING:
    from ..client import Session
    from ..core.call.listeners import Listeners

CALLER_META_KEY = "webmcp_nb/caller"
"""`_meta` key a bridge (`webmcp-nb attach`) uses to name the client it speaks for."""

INSTRUCTIONS = (
    "These tools drive a live browser that a person also uses in a Jupyter notebook. "
    f"{ENVELOPE_NOTE} Start with browser_snapshot. Shared parameters: {shared_fields_note()}"
)


def agent_description(spec: ToolSpec) -> str:
    """The tool's description, and what its annotations alone would not tell a model."""
    notes = [spec.description.rstrip(".") + "."]
    if spec.destructive:
        notes.append("Consequential: the notebook user may be asked to approve it.")
    if spec.group == "notebook":
        notes.append("Published by the notebook user: it runs their Python code.")
    return " ".join(notes)


@cache
def describe_tool(spec: ToolSpec, grant: Grant) -> types.Tool:
    """`spec` as an agent under `grant` is sent it: its schema holds what the grant admits."""
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=agent_description(spec),
        input_schema=agent_input_schema(spec.input_schema, grant.withheld(spec.name)),
        output_schema=output_schema(spec),
        annotations=tool_annotations(
            read_only=spec.read_only,
            destructive=spec.destructive,
            idempotent=spec.idempotent,
            open_world=spec.open_world,
        ),
    )


def shows_the_page(spec: ToolSpec) -> bool:
    """A tool that changes the page, or shows it: its result is where a host opens the live view."""
    return spec.target == "page" and (not spec.read_only or spec.name in ("browser_snapshot", "browser_screenshot"))


def with_app(tool: types.Tool, spec: ToolSpec) -> types.Tool:
    """`tool` as a host that renders apps is sent it: naming the live view if it changes or shows the page."""
    return tool.model_copy(update={"meta": APP_META}) if shows_the_page(spec) else tool


LIST_CHANGED: dict[Kind, type[ToolsListChanged] | type[ResourcesListChanged] | type[PromptsListChanged]] = {
    "tools": ToolsListChanged,
    "resources": ResourcesListChanged,
    "prompts": PromptsListChanged,
}


class _Server(Server[Any]):
    """Advertises `listChanged` to handshake-era clients (the HTTP manager asks with defaults)."""

    def create_initialization_options(
        self, notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any
    ) -> InitializationOptions:
        changes = NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
        return super().create_initialization_options(notification_options or changes, *args, **kwargs)


def new_server(**handlers: Any) -> tuple[Server[Any], ChangeNotifier]:
    """A low-level server with our identity and `handlers`, and the notifier for its lists."""
    notifier = ChangeNotifier()
    server = _Server(
        "webmcp-nb",
        version=VERSION,
        title="webmcp_nb: a live notebook browser",
        instructions=INSTRUCTIONS,
        on_subscriptions_listen=notifier.listen,
        **handlers,
    )
    return server, notifier


class ChangeNotifier:
    """Tells every client that a list changed, in the way its protocol era expects:
    2026-07-28 clients on `subscriptions/listen` streams, 2025-era clients by
    `notifications/*/list_changed` on the sessions they opened (remembered by `seen`)."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._legacy: weakref.WeakSet[Connection] = weakref.WeakSet()

    def seen(self, ctx: ServerRequestContext[Any]) -> None:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            # `ctx.session` is a per-request proxy; its connection is what outlives the
            # request and owns the standalone channel (the SDK exposes no accessor).
            self._legacy.add(ctx.session._connection)

    async def changed(self, kind: Kind) -> None:
        await self.bus.publish(LIST_CHANGED[kind]())
        for connection in list(self._legacy):
            send = {
                "tools": connection.send_tool_list_changed,
                "resources": connection.send_resource_list_changed,
                "prompts": connection.send_prompt_list_changed,
            }[kind]
            try:
                await send()
            except Exception:  # noqa: BLE001 - a gone client must not stop the others
                self._legacy.discard(connection)

    def close(self) -> None:
        self.listen.close()


class AgentServer:
    """One MCP server over a `Session` (transport-independent: see `http` and `cli`)."""

    def __init__(
        self,
        session: Session,
        options: ServeOptions,
        *,
        approver: Approval | None = None,
    ) -> None:
        """Uploads default to the session's artifacts directory."""
        self.session = session
        self.options = options
        self.grant = options.guarded(options.grant(default_upload_root=str(session.engine.artifacts_dir)))
        # The app's buttons and `approver` (the notebook's panel, which times out) answer one
        # decision, first wins; the app alone would let a call wait for a host that never renders it.
        terms = Caller("agent", self.grant, options.approve, approver)  # refuses a policy without an approver
        self.app = AppHub(session, approver) if options.app else None
        if self.app is not None and approver is not None:
            terms = dataclasses.replace(terms, approver=self.app.approval())
        self.terms = terms
        """Every client's terms in the core (`Hub`): the grant, the approval policy and its approver."""
        self._loop = asyncio.get_running_loop()
        self._unsubscribe = self._follow(session.published.listeners)
        self.mirrors = Mirrors(
            session.engine,
            options.allowed_origins,
            on_change=lambda: spawn(self.notifier.changed("tools")),
        )
        self.server, self.notifier = new_server(
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            get_tool_input_schema=self._input_schema,
        )
        self.server.middleware.append(keep_malformed_calls)

    # change notifications ---------------------------------------------------
    def _follow(self, listeners: Listeners[[Kind]]) -> Callable[[], None]:
        def changed(kind: Kind) -> None:  # any thread: hop onto the server's loop
            self._loop.call_soon_threadsafe(lambda: spawn(self.notifier.changed(kind)))

        return listeners.add(changed)

    def close(self) -> None:
        self._unsubscribe()
        self.mirrors.close()
        if self.app is not None:
            self.app.close()
        self.notifier.close()

    # tools ------------------------------------------------------------------
    def visible(self) -> list[ToolSpec]:
        return [spec for spec in self.session.published.tools if self.grant.admits(spec)]

    def visible_spec(self, name: str) -> ToolSpec | None:
        tools = self.session.published.tools
        spec = tools.get(name) if name in tools else None
        return spec if spec is not None and self.grant.admits(spec) else None

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self.notifier.seen(ctx)
        tools = [describe_tool(spec, self.grant) for spec in self.visible()]
        if self._renders_app(ctx):
            tools = [with_app(tool, spec) for tool, spec in zip(tools, self.visible(), strict=True)] + app_tools()
        call_schema = output_schema(self.session.published.tools.get(CALL_TOOL))
        mirrored = [mirror.describe(call_schema) for mirror in self.mirrors.current.values()]
        if mirrored and SECRETS_CAP not in self.grant.groups:  # a page may put what it was given in its tools
            scrub = self.session.engine.scrub_known_secrets
            mirrored = [types.Tool.model_validate(scrub(tool.model_dump(by_alias=True))) for tool in mirrored]
        return types.ListToolsResult(tools=[*tools, *mirrored])

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        """One tool's input schema, for the SDK's `Mcp-Param-*` header check (without it,
        the SDK builds the whole tool list for every call that has arguments)."""
        mirror = self.mirrors.current.get(name)
        if mirror is not None:
            return mirror.input_schema
        spec = self.visible_spec(name)
        return describe_tool(spec, self.grant).input_schema if spec is not None else None

    def regrant(self, grant: Grant) -> None:
        """Carry `grant` in every client's calls from now on (once bound, the served port joins the
        SSRF guard's own servers)."""
        self.grant = grant
        self.terms = dataclasses.replace(self.terms, grant=grant)

    def _renders_app(self, ctx: ServerRequestContext[Any]) -> bool:
        """Whether this server offers the app and the client renders apps (else it is sent nothing of it)."""
        return self.app is not None and renders_apps(ctx.session.client_capabilities)

    async def _call_app_tool(self, ctx: ServerRequestContext[Any], name: str, arguments: Any) -> types.CallToolResult:
        """An app-only tool: the view's state, a click on it (a `browser_mouse_click_xy` call, with
        this client's grant and approval), or an answer to a pending approval. Bad input is refused
        as any tool's is: an ``invalid_params`` envelope, ``not_started``."""
        assert self.app is not None
        try:
            params = APP_TOOLS[name].validate(arguments)
            if isinstance(params, StateParams):
                return await self.app.state(params.after, params.frame)
            if isinstance(params, ClickParams):
                click = "browser_mouse_click_xy"
                return await self._call(ctx, click, click, {"x": params.x, "y": params.y}, via_app=True)
            assert isinstance(params, DecideParams)
            if not self.app.answer(params.id, params.approve):
                raise InvalidParams(f"No pending approval {params.id}: it was answered already, or never asked.")
        except InvalidParams as failure:
            return call_result(refusal(name, failure.message), None, self.session.limits.max_result_bytes)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="approved" if params.approve else "denied")]
        )

    def caller(self, ctx: ServerRequestContext[Any]) -> str:
        named = (ctx.meta or {}).get(CALLER_META_KEY)
        if isinstance(named, str) and named:
            return f"agent:{named[:60]}"
        params = ctx.session.client_params
        name = params.client_info.name if params is not None and params.client_info is not None else "client"
        return f"agent:{name}"

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        self.notifier.seen(ctx)
        name, arguments = as_sent(params)
        if isinstance(name, str) and name in APP_TOOLS and self._renders_app(ctx):
            return await self._call_app_tool(ctx, name, arguments)
        return await self._call(ctx, params.name, name, arguments)

    async def _call(
        self, ctx: ServerRequestContext[Any], lookup: str, name: Any, arguments: Any, *, via_app: bool = False
    ) -> types.CallToolResult:
        """Call tool `name` (as sent: `lookup` is its name if that is a string) through the core."""
        mirror = self.mirrors.current.get(lookup)
        if mirror is None and self.visible_spec(lookup) is None:
            await self.mirrors.catch_up()  # a page tool registered as its page loaded
            mirror = self.mirrors.current.get(lookup)
        if mirror is not None:
            name, arguments = CALL_TOOL, mirror.call_args(arguments)
        # The core decides approval by what the call does (a mirror's page tool: by its hints).
        # A click on the view is the host's user's, but it came over this client: an agent's call.
        caller = self.caller(ctx) + ("/app" if via_app else "")
        progress = Progress(ctx) if (ctx.meta or {}).get("progress_token") is not None else None
        envelope = await self.session.hub.acall(self.terms.named(caller), name, arguments, on_progress=progress)
        if progress is not None:
            await progress.sent()  # before the result: a client stops listening for them then
        spec = self.session.published.tools.get(CALL_TOOL) if mirror is not None else self.visible_spec(lookup)
        limits = self.session.limits
        return call_result(envelope, spec, limits.max_result_bytes, limits.source("max_result_bytes"))

    # resources and prompts --------------------------------------------------
    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self.notifier.seen(ctx)
        app = [app_resource()] if self._renders_app(ctx) else []
        return types.ListResourcesResult(
            resources=[
                *app,
                *(
                    types.Resource(uri=r.uri, name=r.name, description=r.description or None, mime_type=r.mime_type)
                    for r in self.session.published.resources.values()
                    if not r.is_template
                ),
            ]
        )

    async def _list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        self.notifier.seen(ctx)
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=r.uri, name=r.name, description=r.description or None, mime_type=r.mime_type
                )
                for r in self.session.published.resources.values()
                if r.is_template
            ]
        )

    async def _read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri == APP_URI and self.app is not None:
            return await asyncio.to_thread(app_contents)
        if uri.startswith(ARTIFACT_URI):
            content, mime_type = await asyncio.to_thread(self._artifact, uri.removeprefix(ARTIFACT_URI))
        else:
            resources = self.session.published.resources
            resource, variables = resources.get(uri), {}
            if resource is None or resource.is_template:
                resource, variables = next(
                    ((r, found) for r in resources.values() if (found := r.match(uri)) is not None), (None, {})
                )
            if resource is None:
                raise MCPError(types.INVALID_PARAMS, f"Unknown resource {params.uri!s}")
            content, mime_type = await asyncio.to_thread(resource.read, **variables), resource.mime_type
        if isinstance(content, bytes):
            blob = base64.b64encode(content).decode("ascii")
            return types.ReadResourceResult(
                contents=[types.BlobResourceContents(uri=uri, mime_type=mime_type, blob=blob)]
            )
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=mime_type, text=str(content))]
        )

    def _artifact(self, name: str) -> tuple[str | bytes, str]:
        """A file a call wrote (offered as a resource link in its result), within the byte limit."""
        try:
            path = self.session.artifact(name)
        except FileNotFoundError:
            raise MCPError(types.INVALID_PARAMS, f"No artifact {name[:200]!r} in this session") from None
        limit = self.session.limits.max_result_bytes
        size = path.stat().st_size
        if size * 4 // 3 + 1024 > limit:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Artifact {name!r} is {size} bytes, over what one read may return within "
                f"max_result_bytes ({limit}, {self.session.limits.source('max_result_bytes')}); read it on the "
                "notebook's machine.",
            )
        mime_type = artifact_mime_type(name)
        data = path.read_bytes()
        if is_text(mime_type):
            try:
                return data.decode("utf-8"), mime_type
            except UnicodeDecodeError:
                pass
        return data, mime_type

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        self.notifier.seen(ctx)
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=p.name,
                    description=p.description or None,
                    arguments=[
                        types.PromptArgument(name=a.name, description=a.description or None, required=a.required)
                        for a in p.arguments
                    ],
                )
                for p in self.session.published.prompts.values()
            ]
        )

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        prompt = self.session.published.prompts.get(params.name)
        if prompt is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt {params.name!r}")
        try:
            arguments = prompt.bind(params.arguments or {})
        except ValueError as exc:
            raise MCPError(types.INVALID_PARAMS, f"Prompt {prompt.name!r}: {exc}") from None
        rendered = await asyncio.to_thread(prompt.render, **arguments)
        messages = [("user", rendered)] if isinstance(rendered, str) else list(rendered)
        return types.GetPromptResult(
            description=prompt.description or None,
            messages=[
                types.PromptMessage(role=role, content=types.TextContent(type="text", text=text))
                for role, text in messages
            ],
        )


class Progress:
    """The progress hook of a call whose client sent a progress token: each stage the core reports
    (`CallContext.report_progress`: the browser launching, then ready) is a `notifications/progress`
    with its sentence as the message. The hook runs on the runtime loop; the notification is sent
    from the server's."""

    def __init__(self, ctx: ServerRequestContext[Any]) -> None:
        self.ctx = ctx
        self.loop = asyncio.get_running_loop()
        self.count = 0
        self.pending: list[concurrent.futures.Future[None]] = []

    def __call__(self, update: dict[str, Any]) -> None:
        if update.get("kind") != "stage":
            return  # a stream's events (browser_http's SSE) arrive in the result
        self.count += 1
        report = self.ctx.session.report_progress(self.count, None, str(update.get("message", "")))
        self.pending.append(asyncio.run_coroutine_threadsafe(report, self.loop))

    async def sent(self) -> None:
        for future in self.pending:
            with contextlib.suppress(Exception):  # a client gone: the result says the rest
                await asyncio.wrap_future(future)


async def serve_stdio(session: Session, options: ServeOptions) -> None:
    """Serve `session` over this process's stdin/stdout until the client closes it (`options.host`,
    `port` and `token` do not apply: there is no network)."""
    from .wire import stdio_transport

    agent = AgentServer(session, options)
    try:
        async with stdio_transport() as (read, write):
            await agent.server.run(read, write, agent.server.create_initialization_options())
    finally:
        agent.close()
