"""The ``webmcp-nb`` console script.

``webmcp-nb serve --transport stdio|http [--remote URL]``
    The MCP server over a session of its own, without a notebook.
``webmcp-nb install camoufox``
    Download what backend='camoufox' needs (camoufox's own fetch); says so when it cannot.
``webmcp-nb attach --url URL --token TOKEN``
    A stdio MCP server that forwards everything to a running notebook's HTTP
    server, for clients that can only spawn processes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from .core.backends.remote import HEADERS_ENV, headers_from_env
from .core.config import LIMIT_OPTIONS
from .core.options import add_limit_arguments, flag
from .serve_options import ServeOptions, add_arguments

TOKEN_ENV = "WEBMCP_NB_TOKEN"
REMOTE_HEADERS_ENV = HEADERS_ENV


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="webmcp-nb", description="webmcp_nb's MCP server and bridge.")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="serve a browser session of its own over MCP")
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    add_arguments(serve, exclude={"approve"}, defaults={"token": os.environ.get(TOKEN_ENV)})
    serve.add_argument("--headed", action="store_true", help="show browser windows (needs a display)")
    serve.add_argument(
        "--artifacts-dir",
        metavar="DIR",
        help="keep what agents save (screenshots, PDFs, downloads, traces) in DIR; by default they go to a "
        "temporary directory removed when the server stops",
    )
    serve.add_argument(
        "--remote",
        metavar="URL",
        help="create instances on a remote browser: ws://... a Playwright browser server, http://... a CDP endpoint",
    )
    serve.add_argument(
        "--remote-header",
        dest="remote_headers",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help=f"a header for --remote (a grid's token); ${REMOTE_HEADERS_ENV} (a JSON object) keeps it off the "
        "process list",
    )

    add_limit_arguments(serve)

    install = commands.add_parser("install", help="download a browser a backend needs")
    install.add_argument("what", choices=["camoufox"], help="camoufox: its browser, fingerprint model and add-on")

    attach = commands.add_parser("attach", help="bridge stdio to a notebook's MCP server")
    attach.add_argument("--url", required=True, help="the notebook server's URL (http://127.0.0.1:PORT/mcp)")
    attach.add_argument("--token", default=os.environ.get(TOKEN_ENV), help=f"its bearer token (or ${TOKEN_ENV})")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "install":
        return _install_camoufox()
    if args.command == "attach":
        if not args.token:
            parser.error(f"attach needs --token (or ${TOKEN_ENV})")
        from .mcp.bridge import attach_stdio

        asyncio.run(attach_stdio(args.url, args.token))
        return 0
    return _serve(args)


def _serve(args: argparse.Namespace) -> int:
    from .client import Session

    try:
        session = Session(
            headless=not args.headed,
            caller="agent",
            artifacts_dir=args.artifacts_dir,
            remote_endpoint=args.remote,
            remote_headers=_remote_headers(args.remote_headers),
        )
        for name, spec in LIMIT_OPTIONS.items():
            session.reconfigure(source=f"webmcp-nb serve {flag(spec)}", **{name: getattr(args, name)})
    except ValueError as exc:
        print(f"webmcp-nb serve: {exc}", file=sys.stderr)
        return 2
    options = ServeOptions.from_namespace(args)
    try:
        if args.transport == "stdio":
            from .mcp.server import serve_stdio

            session.runtime.run(serve_stdio(session, options))
            return 0
        handle = session.serve_mcp(options)
        print(handle.describe(), flush=True)
        _wait_for_signal()
        return 0
    finally:
        session.close()


def _install_camoufox() -> int:
    """Run camoufox's fetch (its output passes through), then check what it installed: the
    fetch reports some failures only in its output. Exit 1, with one line saying why, when the
    browser is still missing."""
    import subprocess

    from .core.backends import camoufox as camoufox_backend

    prefix = "webmcp-nb install camoufox:"
    if camoufox_backend.package_version() is None:
        print(
            f"{prefix} the camoufox package is not installed; run {camoufox_backend.PIP_INSTALL} first.",
            file=sys.stderr,
        )
        return 2
    errors: list[str] = []
    with subprocess.Popen(
        [sys.executable, "-m", "camoufox", "fetch"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        env={**os.environ, "COLUMNS": "500"},  # one line per message: the reason is quoted whole
    ) as fetch:
        assert fetch.stdout is not None
        for line in fetch.stdout:
            sys.stderr.write(line)
            if "error" in line.lower() or "not in" in line:
                errors.append(line.strip())
    report = camoufox_backend.status()
    if report["state"] == "available":
        print(f"Camoufox {report['browser'] or ''} is installed: {report['executable']}".replace("  ", " "))
        return 0
    reason = errors[0] if errors else f"camoufox fetch exited with {fetch.returncode}"
    print(f"{prefix} failed, {report['problem']} ({reason}); it needs access to github.com.", file=sys.stderr)
    return 1


def _remote_headers(given: list[str]) -> dict[str, str]:
    """Headers for --remote: $WEBMCP_NB_REMOTE_HEADERS, then each --remote-header 'Name: value'."""
    headers = headers_from_env()
    for header in given:
        name, colon, value = header.partition(":")
        if not colon or not name.strip():
            raise ValueError("--remote-header takes 'Name: value'")
        headers[name.strip()] = value.strip()
    return headers


def _wait_for_signal() -> None:
    stop = threading.Event()
    previous: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, lambda *_: stop.set())
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for restored, handler in previous.items():
            signal.signal(restored, handler)


if __name__ == "__main__":
    sys.exit(main())
