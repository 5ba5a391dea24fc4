"""The URL policy's patterns: globs read component by component, so that each one has an exact
URL Pattern twin (the syntax of Chromium's own URL blocking, see `redirect_hops`).

- ``host`` or ``host:port`` (a port number or ``*``): a URL whose host matches, on any port or on
  that one: ``*.example.com``, ``intranet``, ``127.0.0.1:8888``, ``[::1]:*``;
- ``scheme://host[:port][/path]``: a URL whose scheme, host, port and path each match. Without a
  port, the scheme's default port only; without a path, any path: ``https://shop.example/*``.

``*`` matches any run of characters inside its component: a host glob never reaches into the
path, and a URL's userinfo (``https://shop.example@evil.test/``) is not its host. The query and
fragment never count (a pattern has neither). Scheme and host are matched case-insensitively, the
path as the URL writes it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

JUDGED_SCHEMES = ("http", "https", "ws", "wss")
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}

_SCHEME = re.compile(r"[a-z*][a-z0-9+.\-*]*")
_HOST = re.compile(r"[a-z0-9._\-*]+|\[[0-9a-f:.*]+\]")
_PATH = re.compile(r"/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*")
_DOTTED_QUAD = re.compile(r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)")
_PORT = re.compile(r":(\d{1,5}|\*)$")
_URL_PATTERN_SPECIAL = re.compile(r"([\\:(){}?+])")


@functools.cache  # judged on every request of an agent's pages
def _glob(text: str, case_sensitive: bool = False) -> re.Pattern[str]:
    flags = 0 if case_sensitive else re.IGNORECASE
    return re.compile("^" + ".*".join(map(re.escape, text.split("*"))) + "$", flags)


def _escaped(text: str) -> str:
    """`text` as a URL Pattern path: every special character literal but ``*``."""
    return _URL_PATTERN_SPECIAL.sub(r"\\\1", text)


def _read_as_address(text: str) -> bool:
    """Whether URL Pattern reads `text`, a fixed part of a host, as an IPv4 address (the URL
    standard's "ends in a number": ``127.`` becomes ``0.0.0.127``), so that it cannot stand for itself."""
    labels = text.split(".")
    if labels and labels[-1] == "" and len(labels) > 1:
        labels.pop()
    last = labels[-1] if labels else ""
    return last.isdigit() or bool(re.fullmatch(r"0[xX][0-9a-fA-F]*", last))


@dataclass(frozen=True)
class UrlGlob:
    """One pattern, split into its components (`scheme` None: a host pattern)."""

    text: str
    scheme: str | None
    host: str
    port: str | None  # digits, "*", or None (a host pattern: any port; a URL pattern: the default)
    path: str | None

    def matches(self, scheme: str, host: str, port: int, path: str) -> bool:
        """Whether a URL of these components (`port`: its port, the default one if not written) matches."""
        if self.scheme is not None and not _glob(self.scheme).match(scheme):
            return False
        if not _glob(self.host).match(host):
            return False
        if self.port is None:
            if self.scheme is not None and port != DEFAULT_PORTS.get(scheme):
                return False
        elif self.port != "*" and int(self.port) != port:
            return False
        return self.path is None or bool(_glob(self.path, case_sensitive=True).match(path))

    def url_patterns(self) -> list[str] | None:
        """URL Pattern strings that together match what this glob matches (of `JUDGED_SCHEMES`), or
        None when there are none: a host glob with a wildcard beside digits (``10.0.*``), whose
        fixed parts URL Pattern would read as addresses."""
        if "*" in self.host and not self.host.startswith("[") and any(map(_read_as_address, self.host.split("*"))):
            return None
        scheme, host = _escaped(self.scheme or "*"), _escaped(self.host)
        path = _escaped(self.path) if self.path is not None else "/*"
        if self.port is None:
            port = "" if self.scheme is not None else ":*"
        else:
            port = f":{self.port}"
        patterns = [f"{scheme}://{host}{port}{path}"]
        if self.port not in (None, "*"):  # URL Pattern writes a scheme's default port as no port
            patterns += [
                f"{name}://{host}{path}"
                for name in JUDGED_SCHEMES
                if DEFAULT_PORTS[name] == int(self.port) and _glob(self.scheme or "*").match(name)
            ]
        return patterns


@functools.cache
def parse_glob(text: str) -> UrlGlob:
    """`text` as a `UrlGlob`, or ValueError saying what is wrong with it."""
    if not text or any(c.isspace() for c in text):
        raise ValueError("a pattern is a URL or host glob without spaces")
    if "?" in text or "#" in text:
        raise ValueError("a pattern has no query or fragment (a URL's query never counts)")
    scheme: str | None = None
    rest = text
    if "://" in text:
        scheme, _, rest = text.partition("://")
        scheme = scheme.lower()
        if not _SCHEME.fullmatch(scheme):
            raise ValueError(f"{scheme!r} is not a scheme glob")
    authority, slash, path = rest.partition("/")
    if slash and scheme is None:
        raise ValueError("a host pattern has no path; write scheme://host/path")
    if "@" in authority:
        raise ValueError("a pattern names no userinfo")
    port_match = _PORT.search(authority)
    host = (authority[: port_match.start()] if port_match else authority).lower()
    if not _HOST.fullmatch(host):
        raise ValueError(f"{host!r} is not a host glob (letters, digits, '.', '-', '_', '*', or [IPv6])")
    if "*" not in host and not host.startswith("[") and _read_as_address(host) and not _DOTTED_QUAD.fullmatch(host):
        raise ValueError(f"{host!r} reads as an IPv4 address in short form; write it as four numbers")
    full_path = "/" + path if slash else None
    if full_path is not None and not _PATH.fullmatch(full_path):
        raise ValueError(f"{full_path!r} is not a path glob (URL characters and '*', '%' with two hex digits)")
    return UrlGlob(text, scheme, host, port_match[1] if port_match else None, full_path)
