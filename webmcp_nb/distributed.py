"""Fan page work out over a Dask cluster: one browser `Session` per worker (the ``dask`` extra).

>>> from distributed import Client
>>> import webmcp_nb.distributed as wd
>>> client = Client()  # or Client("tcp://scheduler:8786")
>>> results = wd.map(lambda s, url: s.navigate(url), urls)
>>> results.to_pandas()

`map` registers a `BrowserPlugin` on the cluster (once per client and settings): each worker
launches its session on first use, recycles it after a number of tasks or seconds, and closes it
when the worker shuts down. ``fn`` travels to the workers pickled (an importable function, or one
cloudpickle can carry: a lambda or a function defined in the notebook).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

from .core.call.envelope import Envelope
from .core.guard.grants import DISTRIBUTED_CAP, check_serving_cap

if TYPE_CHECKING:
    from .client import Session

try:
    from distributed import WorkerPlugin
except ImportError:  # pragma: no cover - the dask extra is missing; map says so
    WorkerPlugin = object  # type: ignore[misc,assignment]

__all__ = ["PLUGIN_NAME", "BrowserPlugin", "ItemResult", "MapResults", "map"]

PLUGIN_NAME = "webmcp-nb-browser"
FN_RAISED = "fn_raised"
"""`ItemResult.error_type` of an item whose fn raised (an envelope's own error types otherwise)."""


class BrowserPlugin(WorkerPlugin):
    """Gives its Dask worker one browser `Session`, lent to one task at a time.

    Its name is `PLUGIN_NAME` and a digest of its settings: registering it again (another map,
    another client) keeps the workers' sessions; a plugin of other settings closes the sessions of
    the others on its worker when it is set up (theirs relaunch if they are used again). The session is launched on first use and recycled (closed, a new one launched on next use)
    after `max_tasks` tasks or `max_age_s` seconds, whichever comes first (None: never). It is
    closed when the worker shuts down. `session_options` are `Session`'s keywords (headless,
    remote_endpoint, limits...): the same for every worker.
    """

    idempotent = True  # Client.register_plugin leaves a plugin of the same name in place

    def __init__(self, *, max_tasks: int | None = None, max_age_s: float | None = None, **session_options: Any) -> None:
        if max_tasks is not None and max_tasks < 1:
            raise ValueError(f"max_tasks must be at least 1, not {max_tasks}")
        if max_age_s is not None and not max_age_s > 0:
            raise ValueError(f"max_age_s must be positive, not {max_age_s}")
        self.max_tasks = max_tasks
        self.max_age_s = max_age_s
        self.session_options = dict(session_options)
        digest = hashlib.sha256(repr(self.settings).encode()).hexdigest()[:12]
        self.name = f"{PLUGIN_NAME}-{digest}"

    @property
    def settings(self) -> tuple[Any, ...]:
        """What tells two plugins apart (a map with other settings registers its own)."""
        return (self.max_tasks, self.max_age_s, sorted(self.session_options.items(), key=lambda kv: kv[0]))

    # on the worker ----------------------------------------------------------
    def setup(self, worker: Any) -> None:
        self._lock = threading.Lock()
        self._session: Session | None = None
        self._tasks = 0
        self._born = 0.0
        self.launches = 0
        for other in list(worker.plugins.values()):  # one browser per worker: the others' sessions go
            if isinstance(other, BrowserPlugin) and other is not self:
                other.retire_if_idle()

    def retire_if_idle(self) -> None:
        """Close this plugin's session unless a task holds it (another plugin takes its worker over)."""
        if self._lock.acquire(blocking=False):
            try:
                self._retire()
            finally:
                self._lock.release()

    def teardown(self, worker: Any) -> None:
        with self._lock:
            self._retire()

    @contextmanager
    def lease(self) -> Iterator[Session]:
        """The worker's session for one task (other tasks on this worker wait for it)."""
        with self._lock:
            if self._session is not None and self._expired():
                self._retire()
            if self._session is None:
                from .client import Session

                self._session = Session(**self.session_options)
                self._tasks, self._born = 0, time.monotonic()
                self.launches += 1
            self._tasks += 1
            yield self._session

    def _expired(self) -> bool:
        too_many = self.max_tasks is not None and self._tasks >= self.max_tasks
        too_old = self.max_age_s is not None and time.monotonic() - self._born >= self.max_age_s
        return too_many or too_old or (self._session is not None and self._session.closed)

    def _retire(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()


@dataclass(frozen=True)
class ItemResult:
    """One item's result: `value` is what fn returned (an `Envelope` when fn returns one), with
    the item's outcome: ``status`` ok or error, and for an error its type and message."""

    index: int
    item: Any
    value: Any
    status: Literal["ok", "error"]
    error_type: str | None = None
    message: str | None = None
    worker: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def envelope(self) -> Envelope | None:
        return self.value if isinstance(self.value, Envelope) else None

    def row(self) -> dict[str, Any]:
        """A flat row for `MapResults.to_pandas` (an envelope's tool and outcome included)."""
        envelope = self.envelope
        return {
            "item": self.item,
            "status": self.status,
            "error_type": self.error_type,
            "message": self.message,
            "tool": envelope.tool if envelope is not None else None,
            "outcome": envelope.operation.outcome if envelope is not None else None,
            "value": envelope.data if envelope is not None else self.value,
            "worker": self.worker,
        }


class MapResults(Sequence[ItemResult]):
    """`map`'s results, one per item in item order."""

    def __init__(self, results: Sequence[ItemResult]) -> None:
        self._results = list(results)

    @overload
    def __getitem__(self, index: int) -> ItemResult: ...
    @overload
    def __getitem__(self, index: slice) -> list[ItemResult]: ...
    def __getitem__(self, index: int | slice) -> ItemResult | list[ItemResult]:
        return self._results[index]

    def __len__(self) -> int:
        return len(self._results)

    @property
    def ok(self) -> bool:
        return all(result.ok for result in self._results)

    @property
    def errors(self) -> list[ItemResult]:
        return [result for result in self._results if not result.ok]

    @property
    def values(self) -> list[Any]:
        return [result.value for result in self._results]

    def to_pandas(self) -> Any:
        """One row per item (pandas must be installed)."""
        import pandas

        return pandas.DataFrame([result.row() for result in self._results])

    def __repr__(self) -> str:
        return f"<MapResults {len(self)} items, {len(self.errors)} errors>"


def run_item(
    fn: Callable[[Session, Any], Any], item: Any, index: int, raise_errors: bool, plugin_name: str
) -> ItemResult:
    """On a worker: `fn(session, item)` with the session of its plugin (the task `map` submits)."""
    from distributed import get_worker

    worker = get_worker()
    plugin = worker.plugins.get(plugin_name)
    if not isinstance(plugin, BrowserPlugin):
        raise RuntimeError(f"worker {worker.address} has no {plugin_name} plugin (webmcp_nb.distributed.map adds it)")
    with plugin.lease() as session:
        try:
            value = fn(session, item)
            if inspect.isawaitable(value):
                value = asyncio.run(_awaited(value))
        except Exception as exc:
            if raise_errors:
                raise
            message = "".join(traceback.format_exception_only(exc)).strip()
            return ItemResult(index, item, None, "error", FN_RAISED, message, worker.address)
    if isinstance(value, Envelope) and not value.ok:
        return ItemResult(index, item, value, "error", value.error_type, value.message, worker.address)
    return ItemResult(index, item, value, "ok", worker=worker.address)


async def _awaited(value: Any) -> Any:
    return await value


_REGISTERED: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
"""The plugin each client registered last (a map with the same settings skips the round trip)."""


def map(
    fn: Callable[[Session, Any], Any],
    items: Iterable[Any],
    client: Any = None,
    *,
    raise_errors: bool = False,
    progress: bool = True,
    plugin: BrowserPlugin | None = None,
    retries: int | None = None,
    resources: Mapping[str, float] | None = None,
) -> MapResults:
    """Run ``fn(session, item)`` for every item on the workers of `client` (default: the current
    Dask client), each with its worker's session; sync and async fn both work.

    Returns the results in item order, one per item even when a worker was lost and Dask ran its
    share again. An fn that raises gives its item an error result (``error_type='fn_raised'``);
    with `raise_errors` the exception propagates and the map fails. `progress` shows Dask's
    progress bar (a widget in a notebook). `plugin` sets the workers' sessions (recycling, launch
    options); `retries` and `resources` go to ``client.submit``.

    An agent's code (browser_execute) may call it only with the ``distributed`` capability.
    """
    check_serving_cap(DISTRIBUTED_CAP, "webmcp_nb.distributed.map")
    try:
        import distributed
    except ImportError:
        raise ImportError("webmcp_nb.distributed needs the dask extra: pip install 'webmcp_nb[dask]'") from None
    client = client if client is not None else distributed.get_client()
    plugin = plugin if plugin is not None else BrowserPlugin()
    if _REGISTERED.get(client) != plugin.name:
        client.register_plugin(plugin)
        _REGISTERED[client] = plugin.name
    items = list(items)
    futures = [
        client.submit(
            run_item,
            fn,
            item,
            index,
            raise_errors,
            plugin.name,
            pure=False,
            retries=retries,
            resources=dict(resources) if resources else None,
        )
        for index, item in enumerate(items)
    ]
    if progress and futures:
        distributed.progress(futures)  # type: ignore[no-untyped-call]
    return MapResults(client.gather(futures))
