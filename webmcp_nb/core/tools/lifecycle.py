"""Server-level tools: create, destroy, list instances; health."""

from __future__ import annotations

import dataclasses
import functools
import platform
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator, Field, StringConstraints

from .. import backends
from ..backends import BackendName, camoufox, chromium, remote
from ..browsers.instances import InstanceState
from ..call.errors import InvalidParams
from ..call.registry import tool
from ..guard.grants import CREATE_INSTANCE, is_profile_name, profiles_dir
from ..webmcp.discovery import Mode
from . import storage
from .models import Data, InstanceName, Params

if TYPE_CHECKING:
    from ..call.context import CallContext

HeaderName = Annotated[str, StringConstraints(pattern=remote.HEADER_NAME)]
LaunchArg = Annotated[str, StringConstraints(min_length=1, max_length=1024, pattern=r"^--")]


class Viewport(Params):
    width: int = Field(ge=200, le=7680)
    height: int = Field(ge=200, le=4320)


class CreateParams(Params):
    name: InstanceName
    backend: BackendName | None = Field(
        None,
        description=f"Default chromium (remote if set); camoufox: varying-fingerprint Firefox (`{camoufox.INSTALL_COMMAND}`).",
    )
    headless: bool | None = None
    profile_dir: Annotated[str, StringConstraints(min_length=1, max_length=4096)] | None = Field(
        None,
        description="A profile's name (a path: `browser` cap).",
    )
    storage_state: InstanceName | None = Field(None, description="A saved state (`storage` cap).")
    viewport: Viewport | None = Field(None, description="Default 1280x720.")
    locale: Annotated[str, StringConstraints(pattern=r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$")] | None = Field(
        None, description="E.g. 'fr-FR'."
    )
    user_agent: Annotated[str, StringConstraints(min_length=1, max_length=1024)] | None = None
    executable_path: Annotated[str, StringConstraints(min_length=1, max_length=4096)] | None = None
    args: list[LaunchArg] = Field(default_factory=list, max_length=64, description="Browser flags (`browser` cap).")
    webmcp: Mode | None = Field(
        None,
        description="native (default), page (the pages' own; remote's default), polyfill (ours).",
    )
    # backend='camoufox' only (webmcp_nb.core.backends.camoufox checks where each option may go).
    # A list in the schema; a single name is read as a list of one (os="linux" from Python).
    os: (
        Annotated[
            list[camoufox.OsName],
            BeforeValidator(lambda value: [value] if isinstance(value, str) else value),
            Field(min_length=1, max_length=3, json_schema_extra={"uniqueItems": True}),
        ]
        | None
    ) = Field(None, description="camoufox: OSes to claim.")
    humanize: bool | Annotated[float, Field(gt=0, le=camoufox.MAX_HUMANIZE_S)] | None = Field(
        None,
        description="camoufox: human-like cursor; number: max move (s).",
    )
    block_webrtc: bool | None = Field(None, description="camoufox: WebRTC off.")
    geoip: bool | None = Field(
        None,
        description="camoufox: false only (set locale).",
    )
    # Endpoints and header values are checked by webmcp_nb.core.backends.remote, whose messages never echo a token.
    endpoint: str | None = Field(
        None,
        description="remote: a Playwright server ws(s):// URL (`browser` cap).",
    )
    cdp_endpoint: str | None = Field(
        None,
        description="remote: a CDP http:// or ws:// URL (`browser` cap).",
    )
    headers: Annotated[dict[HeaderName, str], Field(json_schema_extra={"additionalProperties": False})] | None = Field(
        None,
        max_length=remote.MAX_HEADERS,
        description="remote: connect headers (logged [redacted]).",
    )
    connect_timeout_s: float | None = Field(
        None,
        gt=0,
        le=remote.MAX_CONNECT_TIMEOUT_S,
        description=f"remote: default {remote.CONNECT_TIMEOUT_S:g}.",
    )


class InstanceInfo(Data):
    name: str
    instance_id: str
    state: InstanceState
    backend: str
    headless: bool
    profile_dir: str | None
    executable: str | None
    browser_pid: int | None
    pages: int
    current_page_id: str | None
    webmcp: Mode
    endpoint: str | None = Field(description="A remote instance's endpoint, without credentials.")


class CreateData(Data):
    instance: InstanceInfo


@tool(
    name="browser_create_instance",
    title="Create instance",
    description="Launch or connect to a named instance; make it current.",
    params=CreateParams,
    data=CreateData,
    target="server",
    secret_args=("headers.*",),
    credential_urls=("endpoint", "cdp_endpoint"),
    check=lambda ctx, p: _check_launch(ctx, p),
)
async def create_instance(ctx: CallContext, p: CreateParams) -> CreateData:
    options = ctx.engine.launch_options(
        p.name,
        ctx.grant,
        backend=p.backend,
        headless=p.headless,
        profile_dir=_profile_dir(ctx, p.profile_dir),
        viewport=p.viewport.model_dump() if p.viewport else None,
        locale=p.locale,
        user_agent=p.user_agent,
        executable_path=p.executable_path,
        args=tuple(p.args) or None,
        webmcp=p.webmcp,
        endpoint=p.endpoint,
        cdp_endpoint=p.cdp_endpoint,
        headers=tuple(p.headers.items()) if p.headers is not None else None,
        connect_timeout_s=p.connect_timeout_s,
        os=tuple(p.os) if p.os else None,
        humanize=p.humanize,
        block_webrtc=p.block_webrtc,
    )
    ctx.instance_name = p.name
    instance = await ctx.engine.launch(options, ctx.remaining_s(), ctx.report_progress)
    ctx.instance_id = instance.instance_id
    ctx.engine.current_instance = p.name
    if p.storage_state is not None:
        state = storage.read_state(ctx.engine.artifacts_dir, p.storage_state)
        await storage.load_state(instance, state)
        ctx.engine.manager.secrets.add(storage.state_secrets(state))
    return CreateData(instance=InstanceInfo(**instance.describe()))


def _check_launch(ctx: CallContext, p: CreateParams) -> None:
    if ctx.grant is not None:
        ctx.grant.check_launch(p.model_dump(exclude_defaults=True), ctx.engine.launch_defaults.headless)
    if p.storage_state is not None:
        if ctx.grant is not None and storage.STORAGE_CAP not in ctx.grant.groups:
            raise InvalidParams(f"{CREATE_INSTANCE}: storage_state needs the `storage` capability (`--caps storage`).")
        storage.state_path(ctx.engine.artifacts_dir, p.storage_state)  # it exists, or nothing is launched
    backends.check(p.model_dump(exclude_unset=True), ctx.engine.launch_defaults.remote_endpoint is not None)
    left = ctx.remaining_s()
    if p.connect_timeout_s is not None and p.connect_timeout_s >= left:  # else: operation_timeout, not the answer
        raise InvalidParams(
            f"connect_timeout_s={p.connect_timeout_s:g} does not fit in this call's time ({left:.0f} s left: "
            f"{ctx.engine.limits.source('operation_timeout_s')}, or the call's own timeout); choose less."
        )


def _profile_dir(ctx: CallContext, value: str | None) -> str | None:
    """A profile directory: for an agent, a name is a directory in the session's profiles
    directory (a path needs the `browser` cap, see `_check_launch`); else a path as given."""
    if value is None or ctx.grant is None or not is_profile_name(value):
        return value
    return str(profiles_dir(ctx.engine.artifacts_dir) / value)


class DestroyParams(Params):
    name: InstanceName


class DestroyData(Data):
    destroyed: str
    instance_id: str
    was: Literal["live", "launching", "crashed"]


@tool(
    name="browser_destroy_instance",
    title="Destroy instance",
    description="Close an instance and its tabs (or forget a crashed one).",
    params=DestroyParams,
    data=DestroyData,
    target="server",
    destructive=True,
    idempotent=False,
)
async def destroy_instance(ctx: CallContext, p: DestroyParams) -> DestroyData:
    manager = ctx.engine.manager
    ctx.instance_name = p.name
    crash = manager.crashes.pop(p.name, None)
    if crash is not None and p.name not in manager.instances:
        ctx.instance_id = crash.instance_id
        _forget_current(ctx, p.name)
        return DestroyData(destroyed=p.name, instance_id=crash.instance_id, was="crashed")
    instance = manager.get(p.name)
    ctx.instance_id = instance.instance_id
    was = "launching" if instance.state == "launching" else "live"
    await manager.close(p.name)
    _forget_current(ctx, p.name)
    return DestroyData(destroyed=p.name, instance_id=instance.instance_id, was=was)


def _forget_current(ctx: CallContext, name: str) -> None:
    if ctx.engine.current_instance == name:
        ctx.engine.current_instance = ctx.engine.default_instance


class ListData(Data):
    current_instance: str
    instances: list[InstanceInfo]


@tool(
    name="browser_list_instances",
    title="List instances",
    description="The instances and which is current.",
    params=Params,
    data=ListData,
    target="server",
    read_only=True,
    idempotent=True,
)
async def list_instances(ctx: CallContext, p: Params) -> ListData:
    instances = [InstanceInfo(**instance.describe()) for instance in ctx.engine.manager.instances.values()]
    return ListData(current_instance=ctx.engine.current_instance, instances=instances)


class HealthData(Data):
    status: Literal["ok", "degraded"]
    instances: dict[str, int]
    limits: dict[str, Any]
    browsers: list[dict[str, Any]]
    chromium: str | None
    failed_launches: list[dict[str, Any]]
    crashes: list[dict[str, Any]]
    driver: dict[str, Any] = Field(
        description="Playwright's driver: state running, not_started or exited (it died; the next call "
        "starts another), pid, restarts, last unexpected exit."
    )
    unhealthy_pages: list[dict[str, Any]] = Field(
        description="Tabs whose renderer crashed or stopped answering (status crashed / unresponsive)."
    )
    problems: list[str] = Field(description="Why status is degraded (empty when ok).")
    remote_endpoint: str | None = Field(
        description="Where new instances connect if the session's default is remote (no credentials); "
        "None: they launch Chromium."
    )
    backends: list[dict[str, Any]] = Field(
        description="Each backend (chromium, camoufox, remote): its state (available, binary_missing, "
        "package_missing, model_missing), versions, what it supports, how to install what is missing; "
        "found without launching anything."
    )
    versions: dict[str, str]


@tool(
    name="browser_health",
    title="Health",
    description="Instances, limits, backends, browsers, failed launches, crashes, stuck tabs.",
    params=Params,
    data=HealthData,
    target="server",
    read_only=True,
    idempotent=True,
)
async def health(ctx: CallContext, p: Params) -> HealthData:
    manager = ctx.engine.manager
    limits = ctx.engine.limits
    executable, tried = chromium.resolve_recent(
        ctx.engine.launch_defaults.executable_path, manager.playwright_managed_chromium
    )
    counts: dict[str, int] = {"live": 0, "launching": 0, "closing": 0}
    for instance in manager.instances.values():
        counts[instance.state] = counts.get(instance.state, 0) + 1
    counts["total"] = len(manager.instances)
    driver = manager.driver_status()
    unhealthy = [
        {
            "instance": instance.name,
            "page_id": state.page_id,
            "url": state.page.url,
            "status": state.condition,
            "since": state.crashed_at or (state.unresponsive or {}).get("since"),
        }
        for instance in manager.instances.values()
        for state in list(instance.pages.values())
        if state.condition != "ok"
    ]
    remote_default = ctx.engine.launch_defaults.remote_endpoint
    problems = [] if executable or remote_default else ["no Chromium was found (see browsers)"]
    if driver["state"] == "exited":
        problems.append(f"{driver['last_exit']['detail']}; the next call starts a new one")
    problems += [f"page {page['page_id']} of instance {page['instance']!r} is {page['status']}" for page in unhealthy]
    return HealthData(
        status="degraded" if problems else "ok",
        driver=driver,
        unhealthy_pages=unhealthy,
        problems=problems,
        remote_endpoint=remote.public_url(remote_default) if remote_default else None,
        instances=counts,
        limits={
            "max_instances": limits.max_instances,
            "max_result_bytes": limits.max_result_bytes,
            "operation_timeout_s": limits.operation_timeout_s,
        },
        browsers=[candidate.to_dict() for candidate in tried],
        chromium=executable,
        failed_launches=list(manager.failed_launches),
        crashes=[dataclasses.asdict(crash) for crash in manager.crash_log],
        backends=_backends(executable, remote_default),
        versions={"python": platform.python_version(), "playwright": _playwright_version()},
    )


def _backends(chromium_executable: str | None, remote_default: str | None) -> list[dict[str, Any]]:
    """The three backends' reports (health): what each supports and whether it can be used here."""
    return [
        {
            "backend": "chromium",
            "state": "available" if chromium_executable else "binary_missing",
            "executable": chromium_executable,
            "supports": chromium.SUPPORTS,
            "install": None if chromium_executable else chromium.INSTALL_HELP,
        },
        camoufox.status(),
        {
            "backend": "remote",
            "state": "available",
            "playwright": _playwright_version(),
            "default_endpoint": remote.public_url(remote_default) if remote_default else None,
            "supports": remote.SUPPORTS,
        },
    ]


@functools.cache
def _playwright_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("playwright")
    except PackageNotFoundError:
        return "missing"
