"""HAR 1.2 (the format Chrome DevTools' "Import HAR" reads) from network evidence entries."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from ..version import VERSION

if TYPE_CHECKING:
    from ..browsers.pages import PageState


def har_log(entries: list[dict[str, Any]], pages: list[PageState]) -> dict[str, Any]:
    """A HAR document: one page per tab, one entry per request (failed ones with status 0)."""
    started: dict[str, str] = {}
    for entry in entries:
        started.setdefault(entry["page_id"], _started(entry))
    har_pages = [
        {
            "startedDateTime": started.get(state.page_id, _iso_now()),
            "id": state.page_id,
            "title": state.page.url,
            "pageTimings": {"onContentLoad": -1, "onLoad": -1},
        }
        for state in pages
    ]
    known = {page["id"] for page in har_pages}
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": "webmcp_nb", "version": VERSION},
            "pages": har_pages,
            "entries": [_entry(entry, entry["page_id"] in known) for entry in entries],
        }
    }


def _entry(entry: dict[str, Any], page_known: bool) -> dict[str, Any]:
    timing = entry.get("timing") or {}
    phases = _phases(timing)
    response_headers = entry.get("response_headers") or {}
    har: dict[str, Any] = {
        "startedDateTime": _started(entry),
        "time": sum(value for value in phases.values() if value > 0),
        "request": {
            "method": entry["method"],
            "url": entry["url"],
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": _headers(entry.get("request_headers") or {}),
            "queryString": [{"name": n, "value": v} for n, v in parse_qsl(urlsplit(entry["url"]).query)],
            "headersSize": -1,
            "bodySize": -1,
        },
        "response": {
            "status": entry.get("status") or 0,
            "statusText": entry.get("status_text") or "",
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": _headers(response_headers),
            "content": {"size": -1, "mimeType": entry.get("mime_type") or "x-unknown"},
            "redirectURL": response_headers.get("location", ""),
            "headersSize": -1,
            "bodySize": entry["encoded_size"] if entry.get("encoded_size") is not None else -1,
        },
        "cache": {},
        "timings": phases,
        "_resourceType": entry["resource_type"],
        "_webmcp_nb_request_id": entry["request_id"],
    }
    if page_known:
        har["pageref"] = entry["page_id"]
    if entry.get("failure"):
        har["response"]["_error"] = entry["failure"]
    return har


def _phases(timing: dict[str, Any]) -> dict[str, float]:
    """HAR timings (ms; -1 where the phase did not happen or is unknown) from Playwright's marks."""

    def span(start: str, end: str) -> float:
        a, b = timing.get(start), timing.get(end)
        return round(b - a, 3) if a is not None and b is not None and b >= a else -1

    send_start = timing.get("request_start")
    wait = span("request_start", "response_start")
    receive = span("response_start", "response_end")
    blocked = round(send_start, 3) if send_start is not None and timing.get("dns_start") is None else -1
    return {
        "blocked": blocked,
        "dns": span("dns_start", "dns_end"),
        "connect": span("connect_start", "connect_end"),
        "ssl": span("ssl_start", "connect_end"),
        "send": 0 if send_start is not None else -1,
        "wait": wait if wait >= 0 else 0,
        "receive": receive if receive >= 0 else 0,
    }


def _headers(headers: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in headers.items()]


def _started(entry: dict[str, Any]) -> str:
    start = (entry.get("timing") or {}).get("start")
    if start:
        return datetime.fromtimestamp(start / 1000, UTC).isoformat(timespec="milliseconds")
    return str(entry["at"])


def _iso_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
