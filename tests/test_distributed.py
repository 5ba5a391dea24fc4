"""webmcp_nb.distributed on a real Dask LocalCluster of two worker processes, against the demo site.

One cluster serves the module, its tests ordered so that the workers' browsers launch as few
times as they can (the tests with plugins of their own come last); the shutdown test closes it
and checks that no browser process outlives the workers.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cloudpickle
import httpx2
import psutil
import pytest
from distributed import Client, LocalCluster

import webmcp_nb.distributed as wd
from webmcp_nb import Session
from webmcp_nb.demo import DemoServer

from .helpers import browser_processes, wait_until
from .test_remote import start_cdp_browser
from .test_security import Served, text_of

# The functions below travel to the workers by value (the workers need not import this module).
cloudpickle.register_pickle_by_value(sys.modules[__name__])

BROWSER_FIXTURES = {"cluster", "client"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def client(cluster: LocalCluster) -> Iterator[Client]:
    with Client(cluster) as client:
        yield client


def visit(session: Session, url: str) -> Any:
    return session.navigate(url)


async def title(session: Session, url: str) -> str:
    await session.anavigate(url)
    return str((await session.aexecute(code="await page.title()")).data["value"])


def picky(session: Session, item: str) -> str:
    if item == "bad":
        raise ValueError("no bad items")
    return item.upper()


def marked_visit(session: Session, item: tuple[str, str]) -> str:
    """Leaves a file per run (item and worker pid), so a test sees which items ran where and how often."""
    import time

    url, marks = item
    Path(marks, f"{url.rsplit('=', 1)[1]}.{os.getpid()}").touch()
    session.navigate(url).raise_for_status()
    time.sleep(0.5)  # long enough for the test to kill a worker while it runs
    return url


def crash_then_visit(session: Session, url: str) -> tuple[str | None, bool, str | None]:
    """Kills the worker's browser, then visits twice: the first call sees the crash, the second heals."""
    session.navigate(url).raise_for_status()
    browsers = []
    for process in psutil.Process().children(recursive=True):
        try:  # a renderer the navigation replaced may exit while it is looked at
            if "chrom" in process.name().lower():
                process.kill()
                browsers.append(process)
        except psutil.NoSuchProcess:
            continue
    psutil.wait_procs(browsers, timeout=30)
    crashed, healed = session.navigate(url), session.navigate(url)
    return crashed.error_type, healed.ok, healed.data["url"] if healed.ok else healed.message


def test_map_over_20_pages_in_item_order(client: Client, demo: DemoServer) -> None:
    urls = [demo.url_for(f"index.html?page={n}") for n in range(20)]
    results = wd.map(visit, urls, client=client)
    assert [r.item for r in results] == urls and [r.index for r in results] == list(range(20))
    assert results.ok and results.errors == []
    for result in results:
        assert result.envelope is not None and result.envelope.tool == "browser_navigate"
        assert result.envelope.data["url"] == result.item
        assert (result.status, result.error_type, result.message) == ("ok", None, None)
    assert {r.worker for r in results} == set(client.scheduler_info()["workers"])  # both workers took a share
    frame = results.to_pandas()
    assert list(frame.columns) == ["item", "status", "error_type", "message", "tool", "outcome", "value", "worker"]
    assert frame["item"].tolist() == urls and set(frame["status"]) == {"ok"}
    assert set(frame["outcome"]) == {"completed"} and set(frame["tool"]) == {"browser_navigate"}


def test_an_async_fn_and_an_error_envelope(client: Client, demo: DemoServer) -> None:
    titles = wd.map(title, [demo.url_for("index.html"), demo.url_for("form.html")], client=client, progress=False)
    assert titles.ok and all(isinstance(value, str) and value for value in titles.values)
    results = wd.map(visit, ["http://127.0.0.1:9/nothing"], client=client, progress=False)
    [failed] = results
    assert failed.status == "error" and failed.envelope is not None and not failed.envelope.ok
    assert failed.error_type == failed.envelope.error_type and failed.message == failed.envelope.message
    assert results.to_pandas()["outcome"].tolist() == [failed.envelope.operation.outcome]


def test_an_fn_that_raises_fails_its_item_only(client: Client) -> None:
    results = wd.map(picky, ["a", "bad", "c"], client=client, progress=False)
    assert [r.status for r in results] == ["ok", "error", "ok"]
    assert results.values == ["A", None, "C"]
    bad = results[1]
    assert (bad.item, bad.error_type, bad.message) == ("bad", wd.FN_RAISED, "ValueError: no bad items")
    assert results.errors == [bad] and not results.ok
    with pytest.raises(ValueError, match="no bad items"):
        wd.map(picky, ["a", "bad"], client=client, progress=False, raise_errors=True)


def test_a_crashed_browser_on_a_worker_heals_as_locally(client: Client, demo: DemoServer) -> None:
    url = demo.url_for("index.html?crash")
    [result] = wd.map(crash_then_visit, [url], client=client, progress=False)
    assert result.value == ("instance_crashed", True, url)


def test_the_distributed_cap_gates_an_agents_fan_out(client: Client, demo: DemoServer) -> None:
    address = client.scheduler.address
    fan_out = (
        "import asyncio, webmcp_nb.distributed as wd\n"
        "from distributed import Client\n"
        "def fan():\n"
        f"    with Client({address!r}) as c:\n"
        "        results = wd.map(lambda s, u: s.navigate(u).data['url'], [u], client=c, progress=False)\n"
        "        return [(r.status, r.value, r.message) for r in results]\n"
        f"u = {demo.url_for('index.html')!r}\n"
        "await asyncio.to_thread(fan)"
    )
    with Session() as session:
        refused = Served(session, caps=["code"]).calls(("browser_execute", {"code": fan_out}))[0]
        granted = Served(session, caps=["code", "distributed"]).calls(("browser_execute", {"code": fan_out}))[0]
    message = text_of(refused)  # browser_execute answers in text (no structured content)
    assert refused.is_error is True and "evaluation_failed" in message, message
    assert "PermissionError: webmcp_nb.distributed.map needs the `distributed` capability" in message
    assert "`--caps distributed`" in message
    assert granted.is_error is not True, text_of(granted)
    assert demo.url_for("index.html") in text_of(granted)
    # The notebook's own code needs no grant (this test's maps ran without one).


def test_a_killed_worker_s_items_run_again_and_each_item_comes_back_once(
    client: Client, demo: DemoServer, tmp_path: Path
) -> None:
    items = [(demo.url_for(f"index.html?item={n}"), str(tmp_path)) for n in range(10)]
    workers = client.run(os.getpid)
    victim_address, victim_pid = sorted(workers.items())[0]
    victim_browsers = [p.pid for p in browser_processes(victim_pid)]
    outcome: dict[str, Any] = {}
    mapper = threading.Thread(
        target=lambda: outcome.update(results=wd.map(marked_visit, items, client=client, progress=False))
    )
    mapper.start()
    wait_until(lambda: any(mark.suffix == f".{victim_pid}" for mark in tmp_path.iterdir()), timeout=120)
    psutil.Process(victim_pid).kill()
    mapper.join(timeout=240)
    assert not mapper.is_alive(), "the map did not finish after the worker was killed"
    results = outcome["results"]
    assert [r.item for r in results] == items and results.ok
    assert [r.value for r in results] == [url for url, _ in items]
    runs = {n: [m for m in tmp_path.iterdir() if m.stem == str(n)] for n in range(10)}
    assert all(runs.values())  # every item ran
    rerun = [n for n, marks in runs.items() if len(marks) > 1]
    assert rerun and all(f".{victim_pid}" in {m.suffix for m in runs[n]} for n in rerun)  # the killed one's item
    assert all(r.worker != victim_address or r.index not in rerun for r in results)
    # The killed worker's browsers went with it (Playwright's driver closes them when its parent dies).
    wait_until(lambda: not [pid for pid in victim_browsers if psutil.pid_exists(pid)], timeout=60)


def test_sessions_are_recycled_after_max_tasks(client: Client) -> None:
    plugin = wd.BrowserPlugin(max_tasks=2)
    results = wd.map(picky, list("abcde"), client=client, progress=False, plugin=plugin)
    assert results.ok
    launches = client.run(lambda dask_worker, name: dask_worker.plugins[name].launches, name=plugin.name)
    tasks = {address: sum(r.worker == address for r in results) for address in launches}
    assert launches == {address: math.ceil(n / 2) for address, n in tasks.items()}
    with pytest.raises(ValueError, match="max_tasks must be at least 1"):
        wd.BrowserPlugin(max_tasks=0)


def test_workers_sessions_can_drive_a_remote_browser(client: Client, demo: DemoServer, tmp_path: Path) -> None:
    grid = start_cdp_browser(tmp_path)  # a Chromium with a CDP port stands in for a grid
    try:
        urls = [demo.url_for(f"index.html?remote={n}") for n in range(4)]
        results = wd.map(visit, urls, client=client, progress=False, plugin=wd.BrowserPlugin(remote_endpoint=grid.url))
        assert results.ok and [r.envelope.data["url"] for r in results if r.envelope] == urls
        open_tabs = {target["url"] for target in httpx2.get(f"{grid.url}/json/list").json()}
        # Each worker's page stays on the last item it visited (Dask may give one worker every item).
        assert len(open_tabs & set(urls)) == len({r.worker for r in results}) >= 1, (open_tabs, results)
        workers = client.run(os.getpid).values()
        wait_until(lambda: not [p for pid in workers for p in browser_processes(pid)], timeout=60)  # none launched
    finally:
        grid.kill()


def test_worker_shutdown_leaves_no_browser_process(cluster: LocalCluster, client: Client, demo: DemoServer) -> None:
    urls = [demo.url_for(f"index.html?last={n}") for n in range(4)]
    assert wd.map(visit, urls, client=client, progress=False).ok  # sessions start on their first call
    assert browser_processes(), "the workers' sessions should be running"
    client.close()
    cluster.close()
    wait_until(lambda: not browser_processes(), timeout=60, message=lambda: str(browser_processes()))


def test_an_agent_grant_lists_distributed() -> None:
    from webmcp_nb.core.guard.grants import CAPS, Grant

    assert "distributed" in CAPS
    assert Grant.build(["distributed"]).caps == ("distributed",)
    assert Grant.build(["code"]).caps == ("code",)
