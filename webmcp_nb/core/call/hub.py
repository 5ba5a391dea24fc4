"""The session hub: the one public way a front end calls the core, as a `Caller`.

Every front end's call (the Python `Session`, the magics and widgets through it, the MCP server)
goes `Hub.acall` / `call` / `submit` -> the runtime's loop -> `Engine.execute`. A `Caller` says who
calls and on what terms: the name the call log shows, the grant that limits what it may call and
pass, and its approval policy with the approver that decides it. The core decides from those
alone (`webmcp_nb.core.call.approval`): a front end passes its terms and judges nothing itself.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, get_args

from .approval import Approval, Policy
from .util import utc_now

if TYPE_CHECKING:
    from ..guard.grants import Grant
    from .engine import Engine
    from .envelope import Envelope
    from .runtime import Runtime

Progress = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Caller:
    """Who calls the core, and on what terms.

    `grant`: what the caller may call and pass (an agent's; None: everything). `approve`: which of
    its calls wait for `approver` (None approves, a string denies); a policy other than ``none``
    without an approver is refused here, so no call runs unasked by mistake.
    """

    name: str
    grant: Grant | None = None
    approve: Policy = "none"
    approver: Approval | None = None

    def __post_init__(self) -> None:
        if self.approve not in get_args(Policy):
            raise ValueError(f"approve must be one of {', '.join(get_args(Policy))}, not {self.approve!r}")
        if self.approve != "none" and self.approver is None:
            raise ValueError(f"approve={self.approve!r} needs an approver (the notebook supplies one)")

    def named(self, name: str) -> Caller:
        """The same terms under another name (an MCP server's terms, per client)."""
        return dataclasses.replace(self, name=name)


class Hub:
    """Calls into one session's core from any thread or event loop; each returns an envelope."""

    def __init__(self, runtime: Runtime, engine: Callable[[], Engine]) -> None:
        """`engine` gives the session's engine, starting it on first use."""
        self.runtime = runtime
        self._engine = engine

    def call(
        self,
        caller: Caller,
        tool: str,
        args: dict[str, Any],
        *,
        timeout_s: float | None = None,
        on_progress: Progress | None = None,
    ) -> Envelope:
        """Block until the call's envelope is ready (not from the runtime's own thread)."""
        return self.runtime.run(self._execute(caller, tool, args, timeout_s, on_progress))

    async def acall(
        self,
        caller: Caller,
        tool: str,
        args: dict[str, Any],
        *,
        timeout_s: float | None = None,
        on_progress: Progress | None = None,
    ) -> Envelope:
        """The call from any event loop. `on_progress` hears what a streaming call collects as it
        arrives (on the runtime thread); `timeout_s` shortens the operation timeout for this call."""
        return await self.runtime.arun(self._execute(caller, tool, args, timeout_s, on_progress))

    def submit(self, caller: Caller, tool: str, args: dict[str, Any]) -> concurrent.futures.Future[Envelope]:
        """Start the call without waiting for it."""
        return self.runtime.submit(self._execute(caller, tool, args, None, None))

    def _execute(
        self,
        caller: Caller,
        tool: str,
        args: dict[str, Any],
        timeout_s: float | None,
        on_progress: Progress | None,
    ) -> Coroutine[Any, Any, Envelope]:
        submitted, started_at = time.monotonic(), utc_now()  # when asked, before the hop to the runtime

        async def execute() -> Envelope:
            return await self._engine().execute(
                tool,
                args,
                submitted=submitted,
                started_at=started_at,
                caller=caller.name,
                approval=caller.approver,
                approve=caller.approve,
                grant=caller.grant,
                timeout_s=timeout_s,
                on_progress=on_progress,
            )

        return execute()
