"""The browser's side of a grant: file: loads an agent's grant does not allow are refused.

A URL check before a navigation covers what an agent asks for; this route covers what
it causes (a link it clicks, a frame or image of a file: page, a popup, going back).
Chromium itself already refuses file:, data:, view-source: and chrome: navigations that
web pages start, so file: pages are the one place a page can reach further than its
grant; Playwright routes see their file: requests (Fetch interception), not data: ones.
A route pauses every request of the instance (and switches its HTTP cache off), so it is
installed only where a file: document can be: under a file root, or once one was loaded.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.async_api import Route

    from ..browsers.instances import Instance
    from .grants import Grant


async def judge_by(instance: Instance, grant: Grant | None) -> None:
    """From now on, judge `instance`'s file: loads by `grant` (the latest caller's; None
    allows all), installing the route when an agent acts where a file: document can be."""
    instance.grant = grant
    if grant is None or instance.file_guard or instance.context is None:
        return
    if grant.file_root is None and not instance.file_seen:
        return  # web pages cannot load file: URLs, and the agent may not name one
    instance.file_guard = True

    async def judge(route: Route) -> None:
        from playwright.async_api import Error

        with contextlib.suppress(Error):  # the page may be gone already
            if instance.grant is None or instance.grant.allows_url(route.request.url):
                await route.fallback()
            else:
                await route.abort("accessdenied")

    await instance.context.route("file://**", judge)
