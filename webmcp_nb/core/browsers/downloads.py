"""Downloads: every file an instance's pages download, followed until it finishes.

Playwright keeps a download in a temporary file until its context closes; the
`browser_downloads` tool copies each finished one into the session's artifacts.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ..call.util import spawn, utc_now

if TYPE_CHECKING:
    from playwright.async_api import Download


@dataclass
class DownloadRecord:
    download: Download
    page_id: str
    download_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    started_at: str = field(default_factory=utc_now)
    state: Literal["in_progress", "completed", "failed"] = "in_progress"
    error: str | None = None
    path: str | None = None  # the copy in the artifacts directory, once made
    reported: bool = False  # listed by a browser_downloads call
    finished: asyncio.Event = field(default_factory=asyncio.Event)


class Downloads:
    """The downloads of one instance, oldest first (runtime loop only)."""

    def __init__(self) -> None:
        self.records: dict[str, DownloadRecord] = {}
        self.arrived = asyncio.Event()  # set when a download starts

    def add(self, download: Download, page_id: str) -> None:
        record = DownloadRecord(download, page_id)
        self.records[record.download_id] = record
        self.arrived.set()
        spawn(self._follow(record))

    def unreported(self) -> list[DownloadRecord]:
        return [record for record in self.records.values() if not record.reported]

    async def next_arrival(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for a download to start; whether one did."""
        self.arrived.clear()
        try:
            await asyncio.wait_for(self.arrived.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    @staticmethod
    async def _follow(record: DownloadRecord) -> None:
        from playwright.async_api import Error

        try:
            record.error = await record.download.failure()
        except Error as exc:  # the browser went away mid-download
            record.error = exc.message.splitlines()[0]
        record.state = "failed" if record.error else "completed"
        record.finished.set()
