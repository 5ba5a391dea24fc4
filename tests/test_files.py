"""Files on the server's disk, on real Chromium: downloads (group `files`) and PDF export (group `pdf`)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import error, ok, ref_for
from webmcp_nb import Session
from webmcp_nb.demo import DemoServer

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

REPORT = "item,quantity\nApple,2\nBanana,3\n"


@pytest.fixture
def downloads_page(session: Session, demo: DemoServer) -> str:
    ok(session.navigate(demo.url_for("downloads.html")))
    return ok(session.snapshot())["snapshot"]


@pytest.fixture
def broken_download() -> Iterator[str]:
    """A URL whose response promises 100,000 bytes of attachment, sends 10 and hangs up."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                connection.recv(65536)
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                    b'Content-Disposition: attachment; filename="broken.bin"\r\n'
                    b"Content-Length: 100000\r\n\r\n0123456789"
                )

    threading.Thread(target=serve, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/broken.bin"
    listener.close()


def test_a_clicked_download_is_saved_and_listed(session: Session, downloads_page: str) -> None:
    before = len(ok(session.call("browser_downloads"))["downloads"])
    ok(session.click(ref_for(downloads_page, 'button "Download report"')))
    envelope = session.call("browser_downloads", wait_s=10)
    entries = ok(envelope)["downloads"][before:]
    assert [(e["suggested_filename"], e["state"], e["error"]) for e in entries] == [("report.csv", "completed", None)]
    entry = entries[0]
    assert entry["url"].startswith("blob:http://127.0.0.1")
    assert entry["page_id"] == session.snapshot().operation.page_id
    saved = Path(entry["path"])
    assert saved.read_text() == REPORT and entry["size_bytes"] == len(REPORT)
    assert envelope.operation.artifacts == (str(saved),)
    # Listed again: the same copy, nothing written anew.
    again = session.call("browser_downloads", download_id=entry["download_id"])
    assert ok(again)["downloads"] == [entry] and again.operation.artifacts == ()


def test_a_link_download_and_waiting_for_it(session: Session, downloads_page: str) -> None:
    ok(session.click(ref_for(downloads_page, 'link "Download notes"')))
    entry = ok(session.call("browser_downloads", wait_s=10))["downloads"][-1]
    assert entry["suggested_filename"] == "notes.txt"
    assert Path(entry["path"]).read_text() == "Remember the bananas."


def test_downloads_that_do_not_exist(fresh_session, demo: DemoServer) -> None:
    s = fresh_session()
    ok(s.navigate(demo.url_for("downloads.html")))
    assert ok(s.call("browser_downloads")) == {"downloads": []}
    envelope = s.call("browser_downloads", wait_s=0.5)
    assert "within 0.5 s" in error(envelope, "download_not_found", "unknown", "read_only")
    assert 500 <= envelope.operation.duration_ms < 10_000  # waited wait_s, and not much longer
    assert "call browser_downloads" in error(
        s.call("browser_downloads", download_id="no-such-download"), "download_not_found", "not_started"
    )


def test_a_broken_download_fails(session: Session, downloads_page: str, broken_download: str) -> None:
    start = f"() => {{ const a = document.createElement('a'); a.href = {broken_download!r}; a.click(); }}"
    ok(session.evaluate(start))
    entries = ok(session.call("browser_downloads", wait_s=10))["downloads"]
    failed = [e for e in entries if e["url"] == broken_download]
    assert len(failed) == 1 and failed[0]["state"] == "failed" and failed[0]["path"] is None
    assert failed[0]["error"]
    message = error(
        session.call("browser_downloads", download_id=failed[0]["download_id"]),
        "download_failed",
        "unknown",
        "read_only",
    )
    assert broken_download in message and failed[0]["error"] in message


def test_pdf_export(session: Session, demo: DemoServer) -> None:
    ok(session.navigate(demo.url_for("table.html")))  # a long page: many PDF pages
    envelope = session.call("browser_pdf")
    data = ok(envelope)
    document = Path(data["path"]).read_bytes()
    assert document.startswith(b"%PDF-") and len(document) == data["size_bytes"]
    assert envelope.operation.artifacts == (data["path"],) and data["url"].endswith("/table.html")
    two = Path(ok(session.call("browser_pdf", page_ranges="1-2", landscape=True))["path"]).read_bytes()
    assert b"/Count 2" in two and b"/Count 2" not in document
    assert "does not have" in error(session.call("browser_pdf", page_ranges="9999"), "invalid_params", "not_started")
    assert "page_ranges" in error(session.call("browser_pdf", page_ranges="first"), "invalid_params", "not_started")
