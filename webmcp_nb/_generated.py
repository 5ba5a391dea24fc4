"""Typed methods for every registry tool, mixed into `Session`. GENERATED: do not edit.

Written by scripts/generate_api.py from the tool registry (`make generate`); tests/test_api.py
fails when it is stale. ``s.X(...)`` blocks; ``await s.aX(...)`` is its awaitable form. Both send
exactly the arguments given (optional parameters default to `Default` markers, which show the
tool's own default), so a call equals ``s.call("browser_X", ...)`` with the same arguments.
"""

# ruff: noqa: B008 - a `default(...)` marker is made once, only shown, and never sent or changed.

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

from ._arguments import default, given
from .core.call.envelope import Envelope


class BinaryOptions(TypedDict):
    mode: NotRequired[Literal["base64", "download"]]
    max_bytes: NotRequired[int | None]  # Fail if the body is larger; default: what the mode allows.


class FormField(TypedDict):
    ref: str  # An element ref from the latest browser_snapshot ('e12', 'f3e7').
    type: Literal["textbox", "checkbox", "radio", "combobox", "slider"]
    value: str | bool  # Text; checkbox/radio: true/false.
    name: NotRequired[str | None]  # For the log.


class Observe(TypedDict):
    """What an action is expected to cause, and how long to wait for it.
    """

    kind: Literal["response", "request", "url", "text", "text_gone", "element", "popup", "download", "console"]
    url: NotRequired[str | None]
    method: NotRequired[str | None]
    status: NotRequired[int | None]
    text: NotRequired[str | None]
    role: NotRequired[str | None]
    name: NotRequired[str | None]
    level: NotRequired[str | None]
    timeout_ms: NotRequired[int]


class SseLimits(TypedDict):
    max_events: int  # Fail if another event arrives after this many.
    max_bytes: int  # Fail past this many bytes of event JSON.
    max_duration_ms: int  # Fail if the stream has not ended by then.


class Viewport(TypedDict):
    width: int
    height: int


class ToolMethods:
    """One blocking and one awaitable method per registry tool (`Session` inherits them)."""

    if TYPE_CHECKING:

        def call(self, tool: str, /, **args: Any) -> Envelope: ...

        async def acall(self, tool: str, /, **args: Any) -> Envelope: ...

    def click(
        self,
        ref: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        button: Literal["left", "right", "middle"] = default("left"),
        double: bool = default(False),
        modifiers: list[Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]] = default([]),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Click an element; waits for a navigation it starts (a dialog it opens: `modal_state`).

        Calls the ``browser_click`` tool and returns its `Envelope`; the awaitable twin is ``aclick``.

        Args:
            ref: An element ref from the latest browser_snapshot ('e12', 'f3e7').
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            modifiers: Keys held down. (at most 5 items)
            observe: Wait for what the action causes, armed before it: response (url, method, status), request (url,
                method), url (url), text/text_gone (text), element (role, name), popup/download, console (text,
                level) (url: a substring or * glob), for timeout_ms (5000); seen: data.observation.
        """
        return self.call("browser_click", **given(locals()))

    async def aclick(
        self,
        ref: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        button: Literal["left", "right", "middle"] = default("left"),
        double: bool = default(False),
        modifiers: list[Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]] = default([]),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `click` (the ``browser_click`` tool)."""
        return await self.acall("browser_click", **given(locals()))

    def console(
        self,
        *,
        instance: str | None = default(None),
        after: str | None = default(None),
        limit: int = default(100),
        page_id: str | None = default(None),
        reveal_secrets: bool = default(False),
        level: Literal["log", "debug", "info", "warning", "error", "trace", "assert", "dir", "table"] | None = default(None),
        text: str | None = default(None),
    ) -> Envelope:
        """Console messages and uncaught errors of the instance's tabs, oldest first, from `after` on.

        Calls the ``browser_console`` tool and returns its `Envelope`; the awaitable twin is ``aconsole``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            after: A next_cursor: newer entries only.
            limit: (1 to 500)
            page_id: Only this tab's.
            reveal_secrets: Secret headers unredacted.
            level: 'error' includes uncaught page errors.
            text: A substring (any case).
        """
        return self.call("browser_console", **given(locals()))

    async def aconsole(
        self,
        *,
        instance: str | None = default(None),
        after: str | None = default(None),
        limit: int = default(100),
        page_id: str | None = default(None),
        reveal_secrets: bool = default(False),
        level: Literal["log", "debug", "info", "warning", "error", "trace", "assert", "dir", "table"] | None = default(None),
        text: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `console` (the ``browser_console`` tool)."""
        return await self.acall("browser_console", **given(locals()))

    def create_instance(
        self,
        name: str,
        *,
        backend: Literal["chromium", "camoufox", "remote"] | None = default(None),
        headless: bool | None = default(None),
        profile_dir: str | None = default(None),
        storage_state: str | None = default(None),
        viewport: Viewport | None = default(None),
        locale: str | None = default(None),
        user_agent: str | None = default(None),
        executable_path: str | None = default(None),
        args: list[str] = default([]),
        webmcp: Literal["native", "page", "polyfill", "off"] | None = default(None),
        os: list[Literal["windows", "macos", "linux"]] | None = default(None),
        humanize: bool | float | None = default(None),
        block_webrtc: bool | None = default(None),
        geoip: bool | None = default(None),
        endpoint: str | None = default(None),
        cdp_endpoint: str | None = default(None),
        headers: dict[str, str] | None = default(None),
        connect_timeout_s: float | None = default(None),
    ) -> Envelope:
        """Launch or connect to a named instance; make it current.

        Calls the ``browser_create_instance`` tool and returns its `Envelope`; the awaitable twin is
        ``acreate_instance``.

        Args:
            backend: Default chromium (remote if set); camoufox: varying-fingerprint Firefox (`webmcp-nb install
                camoufox`).
            profile_dir: A profile's name (a path: `browser` cap).
            storage_state: A saved state (`storage` cap).
            viewport: Default 1280x720.
            locale: E.g. 'fr-FR'.
            args: Browser flags (`browser` cap). (at most 64 items)
            webmcp: native (default), page (the pages' own; remote's default), polyfill (ours).
            os: camoufox: OSes to claim. (1 to 3 items)
            humanize: camoufox: human-like cursor; number: max move (s).
            block_webrtc: camoufox: WebRTC off.
            geoip: camoufox: false only (set locale).
            endpoint: remote: a Playwright server ws(s):// URL (`browser` cap).
            cdp_endpoint: remote: a CDP http:// or ws:// URL (`browser` cap).
            headers: remote: connect headers (logged [redacted]).
            connect_timeout_s: remote: default 10. (> 0, <= 120.0)
        """
        return self.call("browser_create_instance", **given(locals()))

    async def acreate_instance(
        self,
        name: str,
        *,
        backend: Literal["chromium", "camoufox", "remote"] | None = default(None),
        headless: bool | None = default(None),
        profile_dir: str | None = default(None),
        storage_state: str | None = default(None),
        viewport: Viewport | None = default(None),
        locale: str | None = default(None),
        user_agent: str | None = default(None),
        executable_path: str | None = default(None),
        args: list[str] = default([]),
        webmcp: Literal["native", "page", "polyfill", "off"] | None = default(None),
        os: list[Literal["windows", "macos", "linux"]] | None = default(None),
        humanize: bool | float | None = default(None),
        block_webrtc: bool | None = default(None),
        geoip: bool | None = default(None),
        endpoint: str | None = default(None),
        cdp_endpoint: str | None = default(None),
        headers: dict[str, str] | None = default(None),
        connect_timeout_s: float | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `create_instance` (the ``browser_create_instance`` tool)."""
        return await self.acall("browser_create_instance", **given(locals()))

    def destroy_instance(
        self,
        name: str,
    ) -> Envelope:
        """Close an instance and its tabs (or forget a crashed one).

        Calls the ``browser_destroy_instance`` tool and returns its `Envelope`; the awaitable twin is
        ``adestroy_instance``.
        """
        return self.call("browser_destroy_instance", **given(locals()))

    async def adestroy_instance(
        self,
        name: str,
    ) -> Envelope:
        """Awaitable twin of `destroy_instance` (the ``browser_destroy_instance`` tool)."""
        return await self.acall("browser_destroy_instance", **given(locals()))

    def downloads(
        self,
        *,
        instance: str | None = default(None),
        download_id: str | None = default(None),
        wait_s: float = default(0),
    ) -> Envelope:
        """List this instance's downloads, oldest first; each finished one is saved as an artifact (`path`).

        Calls the ``browser_downloads`` tool and returns its `Envelope`; the awaitable twin is ``adownloads``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            download_id: Only this one.
            wait_s: Wait this long for a new download to start and finish. (0 to 30)
        """
        return self.call("browser_downloads", **given(locals()))

    async def adownloads(
        self,
        *,
        instance: str | None = default(None),
        download_id: str | None = default(None),
        wait_s: float = default(0),
    ) -> Envelope:
        """Awaitable twin of `downloads` (the ``browser_downloads`` tool)."""
        return await self.acall("browser_downloads", **given(locals()))

    def drag(
        self,
        source_ref: str,
        target_ref: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Drag one element onto another.

        Calls the ``browser_drag`` tool and returns its `Envelope`; the awaitable twin is ``adrag``.

        Args:
            source_ref: An element ref from the latest browser_snapshot ('e12', 'f3e7').
            target_ref: An element ref from the latest browser_snapshot ('e12', 'f3e7').
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            observe: Wait for what the action causes, armed before it: response (url, method, status), request (url,
                method), url (url), text/text_gone (text), element (role, name), popup/download, console (text,
                level) (url: a substring or * glob), for timeout_ms (5000); seen: data.observation.
        """
        return self.call("browser_drag", **given(locals()))

    async def adrag(
        self,
        source_ref: str,
        target_ref: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `drag` (the ``browser_drag`` tool)."""
        return await self.acall("browser_drag", **given(locals()))

    def evaluate(
        self,
        expression: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
        ref: str | None = default(None),
        save: bool = default(False),
    ) -> Envelope:
        """Evaluate JavaScript in the page (or on an element); returns its JSON result.

        Calls the ``browser_evaluate`` tool and returns its `Envelope`; the awaitable twin is ``aevaluate``.

        Args:
            expression: An expression or a function ('() => document.title'; with ref: 'el => el.textContent').
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            frame_id: The frame (from browser_frames); default: the main one.
            save: Write it to an artifact file; return its path and first 40 lines.
        """
        return self.call("browser_evaluate", **given(locals()))

    async def aevaluate(
        self,
        expression: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
        ref: str | None = default(None),
        save: bool = default(False),
    ) -> Envelope:
        """Awaitable twin of `evaluate` (the ``browser_evaluate`` tool)."""
        return await self.acall("browser_evaluate", **given(locals()))

    def events_export(
        self,
        *,
        instance: str | None = default(None),
        stream: Literal["console", "network"] = default("network"),
        format: Literal["jsonl", "har"] = default("jsonl"),
        page_id: str | None = default(None),
    ) -> Envelope:
        """Write the retained console or network entries to an artifact file.

        Calls the ``browser_events_export`` tool and returns its `Envelope`; the awaitable twin is
        ``aevents_export``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            format: har: network only.
            page_id: Only this tab's.
        """
        return self.call("browser_events_export", **given(locals()))

    async def aevents_export(
        self,
        *,
        instance: str | None = default(None),
        stream: Literal["console", "network"] = default("network"),
        format: Literal["jsonl", "har"] = default("jsonl"),
        page_id: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `events_export` (the ``browser_events_export`` tool)."""
        return await self.acall("browser_events_export", **given(locals()))

    def execute(
        self,
        code: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        timeout_s: float | None = default(None),
    ) -> Envelope:
        """Run async Python with `page`, `context`, `browser` (the instance's Playwright objects), `state` (a dict per
        instance), `snapshot()` (the browser_snapshot text) and `ref('e12')` / `ref('Add Banana', role='button')` (a
        Locator); returns the last expression's value (JSON, an image for PNG/JPEG bytes, or its repr) and the logs.
        Playwright calls wait at most the action (navigation) timeout unless given their own.

        Calls the ``browser_execute`` tool and returns its `Envelope`; the awaitable twin is ``aexecute``.

        Args:
            code: Top-level await; never block (time.sleep).
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            timeout_s: Default and maximum: the operation timeout. (> 0)
        """
        return self.call("browser_execute", **given(locals()))

    async def aexecute(
        self,
        code: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        timeout_s: float | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `execute` (the ``browser_execute`` tool)."""
        return await self.acall("browser_execute", **given(locals()))

    def file_upload(
        self,
        paths: list[str],
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
    ) -> Envelope:
        """Answer an open file chooser with local files.

        Calls the ``browser_file_upload`` tool and returns its `Envelope`; the awaitable twin is ``afile_upload``.

        Args:
            paths: Files (agents: under the upload roots, default the artifacts directory); [] cancels. (at most 100
                items)
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
        """
        return self.call("browser_file_upload", **given(locals()))

    async def afile_upload(
        self,
        paths: list[str],
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `file_upload` (the ``browser_file_upload`` tool)."""
        return await self.acall("browser_file_upload", **given(locals()))

    def fill_form(
        self,
        fields: list[FormField],
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Fill several fields; every ref is checked before any changes.

        Calls the ``browser_fill_form`` tool and returns its `Envelope`; the awaitable twin is ``afill_form``.

        Args:
            fields: (1 to 100 items)
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            observe: Wait for what the action causes, armed before it: response (url, method, status), request (url,
                method), url (url), text/text_gone (text), element (role, name), popup/download, console (text,
                level) (url: a substring or * glob), for timeout_ms (5000); seen: data.observation.
        """
        return self.call("browser_fill_form", **given(locals()))

    async def afill_form(
        self,
        fields: list[FormField],
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `fill_form` (the ``browser_fill_form`` tool)."""
        return await self.acall("browser_fill_form", **given(locals()))

    def frames(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
    ) -> Envelope:
        """List the tab's frames (main first) with stable frame ids.

        Calls the ``browser_frames`` tool and returns its `Envelope`; the awaitable twin is ``aframes``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
        """
        return self.call("browser_frames", **given(locals()))

    async def aframes(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `frames` (the ``browser_frames`` tool)."""
        return await self.acall("browser_frames", **given(locals()))

    def handle_dialog(
        self,
        accept: bool,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        prompt_text: str | None = default(None),
    ) -> Envelope:
        """Accept or dismiss the page's dialog (also while the action that opened it waits).

        Calls the ``browser_handle_dialog`` tool and returns its `Envelope`; the awaitable twin is
        ``ahandle_dialog``.

        Args:
            accept: OK or Cancel.
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            prompt_text: A prompt()'s answer.
        """
        return self.call("browser_handle_dialog", **given(locals()))

    async def ahandle_dialog(
        self,
        accept: bool,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        prompt_text: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `handle_dialog` (the ``browser_handle_dialog`` tool)."""
        return await self.acall("browser_handle_dialog", **given(locals()))

    def health(self) -> Envelope:
        """Instances, limits, backends, browsers, failed launches, crashes, stuck tabs.

        Calls the ``browser_health`` tool and returns its `Envelope`; the awaitable twin is ``ahealth``.
        """
        return self.call("browser_health", **given(locals()))

    async def ahealth(self) -> Envelope:
        """Awaitable twin of `health` (the ``browser_health`` tool)."""
        return await self.acall("browser_health", **given(locals()))

    def hover(
        self,
        ref: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Move the mouse over an element.

        Calls the ``browser_hover`` tool and returns its `Envelope`; the awaitable twin is ``ahover``.

        Args:
            ref: An element ref from the latest browser_snapshot ('e12', 'f3e7').
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            observe: Wait for what the action causes, armed before it: response (url, method, status), request (url,
                method), url (url), text/text_gone (text), element (role, name), popup/download, console (text,
                level) (url: a substring or * glob), for timeout_ms (5000); seen: data.observation.
        """
        return self.call("browser_hover", **given(locals()))

    async def ahover(
        self,
        ref: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `hover` (the ``browser_hover`` tool)."""
        return await self.acall("browser_hover", **given(locals()))

    def http(
        self,
        url: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
        method: Literal["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"] = default("GET"),
        headers: dict[str, str] = default({}),
        body: str | None = default(None),
        json_body: dict[str, Any] | None = default(None),
        response: Literal["auto", "json", "text", "ndjson", "sse", "binary"] = default("auto"),
        expect: str | None = default(None),
        preflight: bool = default(False),
        timeout_s: float | None = default(None),
        max_result_bytes: int | None = default(None),
        save: bool = default(False),
        max_save_bytes: int = default(67108864),
        strict: bool = default(False),
        sse: SseLimits | None = default(None),
        binary: BinaryOptions | None = default(None),
        secret_fields: list[str] = default([]),
    ) -> Envelope:
        """An HTTP request with the page's own fetch (its origin, cookies, CORS); returns status, headers and body
        (JSON, text, NDJSON, SSE or binary; too big: an error, never clipped). Error statuses are data; secret JSON
        fields come back [blocked].

        Calls the ``browser_http`` tool and returns its `Envelope`; the awaitable twin is ``ahttp``.

        Args:
            url: Absolute, or relative to the page ('/api/items').
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            frame_id: The frame (from browser_frames); default: the main one.
            method: GET, HEAD and OPTIONS change nothing; the others are mutations.
            headers: The page's cookies go as usual.
            body: A text body.
            json_body: A JSON object body (other JSON: `body`).
            response: auto: by media type; sse: collect server-sent events (needs `sse`); binary: see `binary`.
            expect: The media type expected (a streaming or binary one needs response sse or binary).
            preflight: HEAD first: refuse an unreadable answer before sending.
            timeout_s: Default: the operation timeout. (> 0, <= 600)
            max_result_bytes: Default and maximum: BROWSER_MCP_MAX_RESULT_BYTES. (> 1024, <= 9007199254740991)
            save: Stream the body to an artifact file.
            max_save_bytes: save=true: fail past this size. (> 0, <= 9007199254740991)
            strict: NDJSON: fail on a malformed line (else skip it).
            sse: response='sse': the limits.
            binary: response='binary': how to hand the bytes over.
            secret_fields: More JSON fields to block. (at most 50 items)
        """
        return self.call("browser_http", **given(locals()))

    async def ahttp(
        self,
        url: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
        method: Literal["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"] = default("GET"),
        headers: dict[str, str] = default({}),
        body: str | None = default(None),
        json_body: dict[str, Any] | None = default(None),
        response: Literal["auto", "json", "text", "ndjson", "sse", "binary"] = default("auto"),
        expect: str | None = default(None),
        preflight: bool = default(False),
        timeout_s: float | None = default(None),
        max_result_bytes: int | None = default(None),
        save: bool = default(False),
        max_save_bytes: int = default(67108864),
        strict: bool = default(False),
        sse: SseLimits | None = default(None),
        binary: BinaryOptions | None = default(None),
        secret_fields: list[str] = default([]),
    ) -> Envelope:
        """Awaitable twin of `http` (the ``browser_http`` tool)."""
        return await self.acall("browser_http", **given(locals()))

    def keyboard_type(
        self,
        text: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
    ) -> Envelope:
        """Type key by key into the focused element (browser_type: into a ref).

        Calls the ``browser_keyboard_type`` tool and returns its `Envelope`; the awaitable twin is
        ``akeyboard_type``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
        """
        return self.call("browser_keyboard_type", **given(locals()))

    async def akeyboard_type(
        self,
        text: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `keyboard_type` (the ``browser_keyboard_type`` tool)."""
        return await self.acall("browser_keyboard_type", **given(locals()))

    def list_instances(self) -> Envelope:
        """The instances and which is current.

        Calls the ``browser_list_instances`` tool and returns its `Envelope`; the awaitable twin is
        ``alist_instances``.
        """
        return self.call("browser_list_instances", **given(locals()))

    async def alist_instances(self) -> Envelope:
        """Awaitable twin of `list_instances` (the ``browser_list_instances`` tool)."""
        return await self.acall("browser_list_instances", **given(locals()))

    def mouse_click_xy(
        self,
        x: float,
        y: float,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        button: Literal["left", "right", "middle"] = default("left"),
        double: bool = default(False),
    ) -> Envelope:
        """Click at a viewport point (CSS pixels), as on a screenshot; prefer browser_click with a ref.

        Calls the ``browser_mouse_click_xy`` tool and returns its `Envelope`; the awaitable twin is
        ``amouse_click_xy``.

        Args:
            x: (0 to 100000)
            y: (0 to 100000)
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
        """
        return self.call("browser_mouse_click_xy", **given(locals()))

    async def amouse_click_xy(
        self,
        x: float,
        y: float,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        button: Literal["left", "right", "middle"] = default("left"),
        double: bool = default(False),
    ) -> Envelope:
        """Awaitable twin of `mouse_click_xy` (the ``browser_mouse_click_xy`` tool)."""
        return await self.acall("browser_mouse_click_xy", **given(locals()))

    def navigate(
        self,
        url: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        wait_until: Literal["commit", "domcontentloaded", "load", "networkidle"] = default("load"),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Load a URL; returns the final URL, title and HTTP status.

        Calls the ``browser_navigate`` tool and returns its `Envelope`; the awaitable twin is ``anavigate``.

        Args:
            url: Absolute: https://, http://, about:blank (others if granted).
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            observe: Wait for what the action causes, armed before it: response (url, method, status), request (url,
                method), url (url), text/text_gone (text), element (role, name), popup/download, console (text,
                level) (url: a substring or * glob), for timeout_ms (5000); seen: data.observation.
        """
        return self.call("browser_navigate", **given(locals()))

    async def anavigate(
        self,
        url: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        wait_until: Literal["commit", "domcontentloaded", "load", "networkidle"] = default("load"),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `navigate` (the ``browser_navigate`` tool)."""
        return await self.acall("browser_navigate", **given(locals()))

    def navigate_back(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        wait_until: Literal["commit", "domcontentloaded", "load", "networkidle"] = default("load"),
    ) -> Envelope:
        """Go back in the tab's history (`moved`: false if it could not).

        Calls the ``browser_navigate_back`` tool and returns its `Envelope`; the awaitable twin is
        ``anavigate_back``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
        """
        return self.call("browser_navigate_back", **given(locals()))

    async def anavigate_back(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        wait_until: Literal["commit", "domcontentloaded", "load", "networkidle"] = default("load"),
    ) -> Envelope:
        """Awaitable twin of `navigate_back` (the ``browser_navigate_back`` tool)."""
        return await self.acall("browser_navigate_back", **given(locals()))

    def navigate_forward(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        wait_until: Literal["commit", "domcontentloaded", "load", "networkidle"] = default("load"),
    ) -> Envelope:
        """Go forward in the tab's history (`moved`: false if it could not).

        Calls the ``browser_navigate_forward`` tool and returns its `Envelope`; the awaitable twin is
        ``anavigate_forward``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
        """
        return self.call("browser_navigate_forward", **given(locals()))

    async def anavigate_forward(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        wait_until: Literal["commit", "domcontentloaded", "load", "networkidle"] = default("load"),
    ) -> Envelope:
        """Awaitable twin of `navigate_forward` (the ``browser_navigate_forward`` tool)."""
        return await self.acall("browser_navigate_forward", **given(locals()))

    def network(
        self,
        *,
        instance: str | None = default(None),
        after: str | None = default(None),
        limit: int = default(100),
        page_id: str | None = default(None),
        reveal_secrets: bool = default(False),
        url: str | None = default(None),
        method: str | None = default(None),
        status: int | None = default(None),
        resource_type: str | None = default(None),
        failed: bool | None = default(None),
    ) -> Envelope:
        """Network requests of the instance's tabs (status, timing, sizes, headers...), oldest first, from `after` on.

        Calls the ``browser_network`` tool and returns its `Envelope`; the awaitable twin is ``anetwork``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            after: A next_cursor: newer entries only.
            limit: (1 to 500)
            page_id: Only this tab's.
            reveal_secrets: Secret headers unredacted.
            url: A URL substring.
            status: 0: no response. (0 to 999)
            resource_type: document, script, fetch, xhr, image...
            failed: Only failed (true) or not (false).
        """
        return self.call("browser_network", **given(locals()))

    async def anetwork(
        self,
        *,
        instance: str | None = default(None),
        after: str | None = default(None),
        limit: int = default(100),
        page_id: str | None = default(None),
        reveal_secrets: bool = default(False),
        url: str | None = default(None),
        method: str | None = default(None),
        status: int | None = default(None),
        resource_type: str | None = default(None),
        failed: bool | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `network` (the ``browser_network`` tool)."""
        return await self.acall("browser_network", **given(locals()))

    def network_body(
        self,
        request_id: str,
        *,
        instance: str | None = default(None),
        part: Literal["response", "request"] = default("response"),
        save: bool = default(False),
    ) -> Envelope:
        """A recorded request's or response's body: text, an image or base64 (too large: use save).

        Calls the ``browser_network_body`` tool and returns its `Envelope`; the awaitable twin is ``anetwork_body``.

        Args:
            request_id: From browser_network.
            instance: The browser instance; default: the current one ('default', created on first use).
            save: To an artifact file.
        """
        return self.call("browser_network_body", **given(locals()))

    async def anetwork_body(
        self,
        request_id: str,
        *,
        instance: str | None = default(None),
        part: Literal["response", "request"] = default("response"),
        save: bool = default(False),
    ) -> Envelope:
        """Awaitable twin of `network_body` (the ``browser_network_body`` tool)."""
        return await self.acall("browser_network_body", **given(locals()))

    def pdf(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        paper: Literal["A4", "Letter", "Legal", "A3", "Tabloid"] = default("A4"),
        landscape: bool = default(False),
        print_background: bool = default(True),
        page_ranges: str | None = default(None),
    ) -> Envelope:
        """Print the tab to a PDF artifact file; returns its path. Headless Chromium only.

        Calls the ``browser_pdf`` tool and returns its `Envelope`; the awaitable twin is ``apdf``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            print_background: Background colours and images.
        """
        return self.call("browser_pdf", **given(locals()))

    async def apdf(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        paper: Literal["A4", "Letter", "Legal", "A3", "Tabloid"] = default("A4"),
        landscape: bool = default(False),
        print_background: bool = default(True),
        page_ranges: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `pdf` (the ``browser_pdf`` tool)."""
        return await self.acall("browser_pdf", **given(locals()))

    def press_key(
        self,
        key: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Press a key or chord in the focused element.

        Calls the ``browser_press_key`` tool and returns its `Envelope`; the awaitable twin is ``apress_key``.

        Args:
            key: 'Enter', 'ArrowDown', 'a', 'Control+A'...
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            observe: Wait for what the action causes, armed before it: response (url, method, status), request (url,
                method), url (url), text/text_gone (text), element (role, name), popup/download, console (text,
                level) (url: a substring or * glob), for timeout_ms (5000); seen: data.observation.
        """
        return self.call("browser_press_key", **given(locals()))

    async def apress_key(
        self,
        key: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `press_key` (the ``browser_press_key`` tool)."""
        return await self.acall("browser_press_key", **given(locals()))

    def reload(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        wait_until: Literal["commit", "domcontentloaded", "load", "networkidle"] = default("load"),
        force: bool = default(False),
    ) -> Envelope:
        """Reload the tab.

        Calls the ``browser_reload`` tool and returns its `Envelope`; the awaitable twin is ``areload``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            force: In a fresh renderer: the way out for a tab stuck in script (same page_id).
        """
        return self.call("browser_reload", **given(locals()))

    async def areload(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        wait_until: Literal["commit", "domcontentloaded", "load", "networkidle"] = default("load"),
        force: bool = default(False),
    ) -> Envelope:
        """Awaitable twin of `reload` (the ``browser_reload`` tool)."""
        return await self.acall("browser_reload", **given(locals()))

    def screenshot(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        format: Literal["png", "jpeg"] = default("png"),
        quality: int | None = default(None),
        full_page: bool = default(False),
        ref: str | None = default(None),
        original: bool = default(False),
        save: bool = default(False),
    ) -> Envelope:
        """Screenshot the viewport, the full page or an element, scaled to at most 1568 px.

        Calls the ``browser_screenshot`` tool and returns its `Envelope`; the awaitable twin is ``ascreenshot``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            quality: JPEG quality (default 80). (1 to 100)
            ref: Only this element.
            original: Not scaled down.
            save: Also as an artifact.
        """
        return self.call("browser_screenshot", **given(locals()))

    async def ascreenshot(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        format: Literal["png", "jpeg"] = default("png"),
        quality: int | None = default(None),
        full_page: bool = default(False),
        ref: str | None = default(None),
        original: bool = default(False),
        save: bool = default(False),
    ) -> Envelope:
        """Awaitable twin of `screenshot` (the ``browser_screenshot`` tool)."""
        return await self.acall("browser_screenshot", **given(locals()))

    def scroll(
        self,
        delta_y: float,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        delta_x: float = default(0),
    ) -> Envelope:
        """Scroll with the mouse wheel where the pointer is.

        Calls the ``browser_scroll`` tool and returns its `Envelope`; the awaitable twin is ``ascroll``.

        Args:
            delta_y: Pixels down (negative: up). (-100000 to 100000)
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            delta_x: (-100000 to 100000)
        """
        return self.call("browser_scroll", **given(locals()))

    async def ascroll(
        self,
        delta_y: float,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        delta_x: float = default(0),
    ) -> Envelope:
        """Awaitable twin of `scroll` (the ``browser_scroll`` tool)."""
        return await self.acall("browser_scroll", **given(locals()))

    def select_option(
        self,
        ref: str,
        values: list[str],
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Select options of a <select>.

        Calls the ``browser_select_option`` tool and returns its `Envelope`; the awaitable twin is
        ``aselect_option``.

        Args:
            ref: An element ref from the latest browser_snapshot ('e12', 'f3e7').
            values: Values or labels. (1 to 1000 items)
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            observe: Wait for what the action causes, armed before it: response (url, method, status), request (url,
                method), url (url), text/text_gone (text), element (role, name), popup/download, console (text,
                level) (url: a substring or * glob), for timeout_ms (5000); seen: data.observation.
        """
        return self.call("browser_select_option", **given(locals()))

    async def aselect_option(
        self,
        ref: str,
        values: list[str],
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `select_option` (the ``browser_select_option`` tool)."""
        return await self.acall("browser_select_option", **given(locals()))

    def snapshot(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
        ref: str | None = default(None),
        depth: int | None = default(None),
        save: bool = default(False),
    ) -> Envelope:
        """The page's accessibility tree as YAML, with [ref=e12] handles for the other tools (stale once the page
        changes).

        Calls the ``browser_snapshot`` tool and returns its `Envelope`; the awaitable twin is ``asnapshot``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            frame_id: The frame (from browser_frames); default: the main one.
            ref: Only this element's subtree.
            depth: (1 to 1000)
            save: Write it to an artifact file; return its path and first 40 lines.
        """
        return self.call("browser_snapshot", **given(locals()))

    async def asnapshot(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
        ref: str | None = default(None),
        depth: int | None = default(None),
        save: bool = default(False),
    ) -> Envelope:
        """Awaitable twin of `snapshot` (the ``browser_snapshot`` tool)."""
        return await self.acall("browser_snapshot", **given(locals()))

    def storage_state(
        self,
        action: Literal["save", "load", "list", "delete", "show"],
        *,
        name: str | None = default(None),
        instance: str | None = default(None),
    ) -> Envelope:
        """Save, load, list, delete named cookie+storage states.

        Calls the ``browser_storage_state`` tool and returns its `Envelope`; the awaitable twin is
        ``astorage_state``.

        Args:
            action: show: its contents (`secrets`).
        """
        return self.call("browser_storage_state", **given(locals()))

    async def astorage_state(
        self,
        action: Literal["save", "load", "list", "delete", "show"],
        *,
        name: str | None = default(None),
        instance: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `storage_state` (the ``browser_storage_state`` tool)."""
        return await self.acall("browser_storage_state", **given(locals()))

    def tabs(
        self,
        action: Literal["list", "new", "select", "close"] = default("list"),
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        url: str | None = default(None),
    ) -> Envelope:
        """List, open, select or close tabs (each has a stable page_id).

        Calls the ``browser_tabs`` tool and returns its `Envelope`; the awaitable twin is ``atabs``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: select, close (default: current).
            url: new: a URL to open.
        """
        return self.call("browser_tabs", **given(locals()))

    async def atabs(
        self,
        action: Literal["list", "new", "select", "close"] = default("list"),
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        url: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `tabs` (the ``browser_tabs`` tool)."""
        return await self.acall("browser_tabs", **given(locals()))

    def trace(
        self,
        action: Literal["start", "stop"],
        *,
        instance: str | None = default(None),
        screenshots: bool = default(True),
        snapshots: bool = default(True),
        reveal_secrets: bool = default(False),
    ) -> Envelope:
        """Start or stop a Playwright trace of the instance; stop saves trace.zip (secrets [redacted]).

        Calls the ``browser_trace`` tool and returns its `Envelope`; the awaitable twin is ``atrace``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            screenshots: start: record screenshots.
            snapshots: start: record DOM snapshots.
            reveal_secrets: stop: keep secrets unredacted.
        """
        return self.call("browser_trace", **given(locals()))

    async def atrace(
        self,
        action: Literal["start", "stop"],
        *,
        instance: str | None = default(None),
        screenshots: bool = default(True),
        snapshots: bool = default(True),
        reveal_secrets: bool = default(False),
    ) -> Envelope:
        """Awaitable twin of `trace` (the ``browser_trace`` tool)."""
        return await self.acall("browser_trace", **given(locals()))

    def type(
        self,
        ref: str,
        text: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        submit: bool = default(False),
        slowly: bool = default(False),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Replace an editable element's text (checked after).

        Calls the ``browser_type`` tool and returns its `Envelope`; the awaitable twin is ``atype``.

        Args:
            ref: An element ref from the latest browser_snapshot ('e12', 'f3e7').
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            submit: Press Enter after.
            slowly: Key by key.
            observe: Wait for what the action causes, armed before it: response (url, method, status), request (url,
                method), url (url), text/text_gone (text), element (role, name), popup/download, console (text,
                level) (url: a substring or * glob), for timeout_ms (5000); seen: data.observation.
        """
        return self.call("browser_type", **given(locals()))

    async def atype(
        self,
        ref: str,
        text: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        submit: bool = default(False),
        slowly: bool = default(False),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `type` (the ``browser_type`` tool)."""
        return await self.acall("browser_type", **given(locals()))

    def verify_element_visible(
        self,
        role: str,
        name: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
    ) -> Envelope:
        """Check that an element with this role and name is visible (else verification_failed).

        Calls the ``browser_verify_element_visible`` tool and returns its `Envelope`; the awaitable twin is
        ``averify_element_visible``.

        Args:
            role: As in the snapshot: button, link...
            name: Exact accessible name.
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            frame_id: The frame (from browser_frames); default: the main one.
        """
        return self.call("browser_verify_element_visible", **given(locals()))

    async def averify_element_visible(
        self,
        role: str,
        name: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `verify_element_visible` (the ``browser_verify_element_visible`` tool)."""
        return await self.acall("browser_verify_element_visible", **given(locals()))

    def verify_list_visible(
        self,
        ref: str,
        items: list[str],
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
    ) -> Envelope:
        """Check that each text is visible inside the element `ref` (a list, a table...).

        Calls the ``browser_verify_list_visible`` tool and returns its `Envelope`; the awaitable twin is
        ``averify_list_visible``.

        Args:
            ref: An element ref from the latest browser_snapshot ('e12', 'f3e7').
            items: Texts it must show. (1 to 200 items)
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            frame_id: The frame (from browser_frames); default: the main one.
        """
        return self.call("browser_verify_list_visible", **given(locals()))

    async def averify_list_visible(
        self,
        ref: str,
        items: list[str],
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `verify_list_visible` (the ``browser_verify_list_visible`` tool)."""
        return await self.acall("browser_verify_list_visible", **given(locals()))

    def verify_text_visible(
        self,
        text: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
    ) -> Envelope:
        """Check that this text is visible on the page.

        Calls the ``browser_verify_text_visible`` tool and returns its `Envelope`; the awaitable twin is
        ``averify_text_visible``.

        Args:
            text: A substring (case-sensitive).
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            frame_id: The frame (from browser_frames); default: the main one.
        """
        return self.call("browser_verify_text_visible", **given(locals()))

    async def averify_text_visible(
        self,
        text: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `verify_text_visible` (the ``browser_verify_text_visible`` tool)."""
        return await self.acall("browser_verify_text_visible", **given(locals()))

    def verify_value(
        self,
        ref: str,
        value: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
    ) -> Envelope:
        """Check the value of the element `ref` (a field, checkbox, select or text).

        Calls the ``browser_verify_value`` tool and returns its `Envelope`; the awaitable twin is ``averify_value``.

        Args:
            ref: An element ref from the latest browser_snapshot ('e12', 'f3e7').
            value: Text; 'checked'/'unchecked'; a select's labels, comma-separated.
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            frame_id: The frame (from browser_frames); default: the main one.
        """
        return self.call("browser_verify_value", **given(locals()))

    async def averify_value(
        self,
        ref: str,
        value: str,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `verify_value` (the ``browser_verify_value`` tool)."""
        return await self.acall("browser_verify_value", **given(locals()))

    def wait_for(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        text: str | None = default(None),
        text_gone: str | None = default(None),
        ref: str | None = default(None),
        role: str | None = default(None),
        name: str | None = default(None),
        state: Literal["visible", "hidden", "attached", "detached"] = default("visible"),
        url: str | None = default(None),
        network_idle: bool = default(False),
        time_s: float | None = default(None),
    ) -> Envelope:
        """Wait for text to appear or go, an element's state, a URL or network idle (else wait_timeout); or wait time_s.

        Calls the ``browser_wait_for`` tool and returns its `Envelope`; the awaitable twin is ``await_for``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            ref: An element to reach `state`.
            role: With name: an element to reach `state`.
            url: A URL substring, or a glob with *.
            network_idle: No request in flight for 0.5 s.
            time_s: Alone: wait this long; else the limit (10). (> 0, <= 30)
        """
        return self.call("browser_wait_for", **given(locals()))

    async def await_for(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        text: str | None = default(None),
        text_gone: str | None = default(None),
        ref: str | None = default(None),
        role: str | None = default(None),
        name: str | None = default(None),
        state: Literal["visible", "hidden", "attached", "detached"] = default("visible"),
        url: str | None = default(None),
        network_idle: bool = default(False),
        time_s: float | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `wait_for` (the ``browser_wait_for`` tool)."""
        return await self.acall("browser_wait_for", **given(locals()))

    def webmcp_call(
        self,
        name: str,
        input: dict[str, Any] = default({}),
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
        timeout_s: float | None = default(None),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Call a page's WebMCP tool; returns `structured` (a JSON object), `content` and `images` (an MCP result) or
        `text`. isError, a multi-round result and, for agents, a result off its outputSchema: evaluation_failed.

        Calls the ``browser_webmcp_call`` tool and returns its `Envelope`; the awaitable twin is ``awebmcp_call``.

        Args:
            name: From browser_webmcp_list.
            input: As its inputSchema says.
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            frame_id: Default: the main frame's tool, else the only one.
            timeout_s: Default: the operation timeout. (> 0, <= 600)
            observe: Wait for what the action causes, armed before it: response (url, method, status), request (url,
                method), url (url), text/text_gone (text), element (role, name), popup/download, console (text,
                level) (url: a substring or * glob), for timeout_ms (5000); seen: data.observation.
        """
        return self.call("browser_webmcp_call", **given(locals()))

    async def awebmcp_call(
        self,
        name: str,
        input: dict[str, Any] = default({}),
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
        timeout_s: float | None = default(None),
        observe: Observe | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `webmcp_call` (the ``browser_webmcp_call`` tool)."""
        return await self.acall("browser_webmcp_call", **given(locals()))

    def webmcp_list(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
    ) -> Envelope:
        """List the page's WebMCP tools (every frame) with their schemas and annotations.

        Calls the ``browser_webmcp_list`` tool and returns its `Envelope`; the awaitable twin is ``awebmcp_list``.

        Args:
            instance: The browser instance; default: the current one ('default', created on first use).
            page_id: The tab (from browser_tabs); default: the current one.
            frame_id: Only this frame's; default: all.
        """
        return self.call("browser_webmcp_list", **given(locals()))

    async def awebmcp_list(
        self,
        *,
        instance: str | None = default(None),
        page_id: str | None = default(None),
        frame_id: str | None = default(None),
    ) -> Envelope:
        """Awaitable twin of `webmcp_list` (the ``browser_webmcp_list`` tool)."""
        return await self.acall("browser_webmcp_list", **given(locals()))
