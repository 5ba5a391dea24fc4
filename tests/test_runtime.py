"""The runtime thread: calls from any thread or loop, ordering, parallelism, timeouts."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.helpers import error, ok, ref_for, wait_until
from webmcp_nb import Envelope, RuntimeThreadError

SLOW_EVAL = """async () => {
  window.__order = window.__order || [];
  window.__order.push(%d);
  await new Promise(resolve => setTimeout(resolve, 30));
  return window.__order.length;
}"""


@pytest.fixture
def on_shop(session, demo):
    ok(session.navigate(demo.url))
    return session


def test_call_from_other_threads(on_shop) -> None:
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: on_shop.evaluate(f"{i} * 2"), range(8)))
    assert [ok(envelope)["result"] for envelope in results] == [i * 2 for i in range(8)]


def test_sync_call_inside_a_running_event_loop(on_shop) -> None:
    """What a notebook cell does: a blocking call on a thread whose loop is running."""

    async def cell() -> object:
        return on_shop.evaluate("document.title")

    envelope = asyncio.run(cell())
    assert ok(envelope)["result"] == "Demo Shop"


def test_acall_from_a_foreign_loop(on_shop) -> None:
    async def main() -> list:
        return await asyncio.gather(*(on_shop.acall("browser_evaluate", expression=f"{i} + 1") for i in range(5)))

    assert [ok(e)["result"] for e in asyncio.run(main())] == [1, 2, 3, 4, 5]


def test_calls_on_one_instance_run_one_at_a_time_in_arrival_order(on_shop) -> None:
    async def main() -> list:
        tasks = []
        for i in range(6):
            tasks.append(asyncio.ensure_future(on_shop.acall("browser_evaluate", expression=SLOW_EVAL % i)))
            await asyncio.sleep(0.005)  # a definite arrival order
        return await asyncio.gather(*tasks)

    results = asyncio.run(main())
    assert [ok(e)["result"] for e in results] == [1, 2, 3, 4, 5, 6]
    assert ok(on_shop.evaluate("window.__order"))["result"] == [0, 1, 2, 3, 4, 5]


def test_instances_run_in_parallel(fresh_session, demo) -> None:
    s = fresh_session()
    ok(s.create_instance("left"))
    ok(s.create_instance("right"))
    for name in ("left", "right"):
        ok(s.navigate(demo.url, instance=name))
    # Each call reports when it ran (one clock: both browsers run on this machine).
    wait = (
        "() => { const start = Date.now();"
        " return new Promise(resolve => setTimeout(() => resolve([start, Date.now()]), 3000)); }"
    )

    async def main() -> list[Envelope]:
        return await asyncio.gather(
            s.acall("browser_evaluate", expression=wait, instance="left"),
            s.acall("browser_evaluate", expression=wait, instance="right"),
        )

    (left_start, left_end), (right_start, right_end) = [ok(e)["result"] for e in asyncio.run(main())]
    assert left_start < right_end and right_start < left_end  # the two 3 s calls overlapped


def test_a_driver_on_the_runtime_loop_calls_without_a_thread_hop(fresh_session, demo) -> None:
    """README's *Many instances at once*: `session.runtime.run(main())` runs `main` on the runtime's
    loop, where `acall` and the generated `a...` methods are awaited in place, instances in parallel."""
    s = fresh_session()
    for name in ("left", "right"):
        ok(s.create_instance(name))
        ok(s.navigate(demo.url, instance=name))
    hops: list[int] = []
    submit = s.runtime.submit
    s.runtime.submit = lambda coro: hops.append(1) or submit(coro)  # type: ignore[method-assign]

    async def crawl(name: str) -> tuple[str, str, str]:
        snapshot = ok(await s.asnapshot(instance=name))["snapshot"]
        clicked = await s.aclick(ref_for(snapshot, 'button "Add Banana"'), instance=name)
        cart = await s.acall(
            "browser_evaluate", expression="document.querySelector('#cart').textContent", instance=name
        )
        return threading.current_thread().name, ok(clicked)["url"], ok(cart)["result"]

    async def main() -> list[tuple[str, str, str]]:
        return await asyncio.gather(crawl("left"), crawl("right"))

    try:
        results = s.runtime.run(main())
    finally:
        del s.runtime.submit
    assert len(hops) == 1  # main itself; none of its six calls crossed threads
    assert [(thread, cart) for thread, _, cart in results] == [("webmcp_nb-runtime", "Cart: 1 item: Banana")] * 2
    assert [url for _, url, _ in results] == [demo.url] * 2


def test_blocking_call_from_the_runtime_thread_raises_instead_of_deadlocking(on_shop) -> None:
    raised: list[BaseException] = []

    def listener(record) -> None:
        try:
            on_shop.call("browser_health")
        except BaseException as exc:  # noqa: BLE001 - captured for the assertion
            raised.append(exc)

    remove = on_shop.add_listener(listener)
    try:
        ok(on_shop.health())
    finally:
        remove()
    assert len(raised) == 1 and isinstance(raised[0], RuntimeThreadError)
    assert "acall" in str(raised[0])


def live_default_instance(s) -> None:
    """Create the default instance even if launching takes longer than the operation timeout:
    a timed-out call does not abort the launch."""
    first = s.create_instance("default")
    assert first.ok or first.error_type == "operation_timeout", first
    wait_until(
        lambda: [i["state"] for i in ok(s.list_instances())["instances"]] == ["live"],
        timeout=30,
        message="the instance never became live",
    )


def test_operation_timeout_while_running_is_unknown(fresh_session, demo) -> None:
    s = fresh_session()
    live_default_instance(s)
    ok(s.navigate(demo.url))  # set up under the default budget: a loaded machine can take 1 s to navigate
    s.reconfigure(operation_timeout_s=1)
    envelope = s.evaluate("() => new Promise(resolve => setTimeout(resolve, 30000))")
    message = error(envelope, "operation_timeout", "unknown", "inspect_state")
    assert "1 s" in message
    assert 900 <= envelope.operation.duration_ms < 15_000  # cut off at 1 s, not when the 30 s promise settles


def test_operation_timeout_includes_queue_wait(fresh_session, demo) -> None:
    s = fresh_session()
    live_default_instance(s)
    ok(s.navigate(demo.url))  # set up under the default budget: a loaded machine can take 1 s to navigate
    s.reconfigure(operation_timeout_s=1)
    engine = s._engine
    instance = engine.manager.instances["default"]
    held = threading.Event()

    async def hold_lock() -> None:  # an earlier call that keeps the instance busy
        async with instance.lock:
            held.set()
            await asyncio.sleep(2)

    future = s._runtime.submit(hold_lock())
    held.wait(5)
    envelope = s.evaluate("1")
    message = error(envelope, "operation_timeout", "not_started", "after_correction")
    assert "waiting for earlier calls" in message
    assert envelope.operation.duration_ms >= 900
    future.result(5)
    assert ok(s.evaluate("2"))["result"] == 2


def test_closed_session_refuses_calls(fresh_session) -> None:
    s = fresh_session()
    s.close()
    with pytest.raises(RuntimeError, match="closed"):
        s.health()


def test_a_submitted_call_delivers_its_result_or_error_and_cancelling_it_stops_it() -> None:
    from concurrent.futures import CancelledError

    from webmcp_nb.core.call.runtime import Runtime

    runtime = Runtime("test-runtime")
    try:

        async def value() -> str:
            return "done"

        async def failing() -> None:
            raise ValueError("broken")

        started, stopped = threading.Event(), threading.Event()

        async def endless() -> None:
            started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                stopped.set()
                raise

        assert runtime.submit(value()).result(5) == "done"
        with pytest.raises(ValueError, match="broken"):
            runtime.submit(failing()).result(5)
        running = runtime.submit(endless())
        assert started.wait(5)
        assert running.cancel() and stopped.wait(5)  # the task on the loop was cancelled
        with pytest.raises(CancelledError):
            running.result(5)
        assert asyncio.run(runtime.arun(value())) == "done"
    finally:
        runtime.stop()
