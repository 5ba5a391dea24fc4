"""Helpers the exported replays use (`webmcp_nb.export`): refs found again by role and name,
secrets and moved loopback sites asked for at replay time, and calls checked against how they
ended when recorded."""

from __future__ import annotations

import getpass
import os
import socket
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .core.aria import RefTarget, ref_of

if TYPE_CHECKING:
    from .client import Session
    from .core.envelope import Envelope

FIND_TIMEOUT_S = 5.0  # how long `Replay.ref` looks for an element that the page may still be rendering
FIND_INTERVAL_S = 0.2
SECRET_ENV_PREFIX = "WEBMCP_NB_"
REACH_TIMEOUT_S = 2.0  # how long `Replay.base_url` waits for a recorded site to accept a connection


class ReplayMismatch(LookupError):
    """The page at replay time has no element the recording acted on."""


class Replay:
    """Replays calls on `session`; `echo` prints one line per call (for scripts)."""

    def __init__(self, session: Session, *, echo: bool = False) -> None:
        self.session = session
        self.echo = echo
        self.mismatches: list[str] = []
        self.calls = 0

    def ref(self, role: str, name: str, nth: int = 0, *, instance: str | None = None) -> str:
        """The ref of the `nth` element with this exact role and accessible name in a new snapshot
        of the current page (of `instance`); waits up to `FIND_TIMEOUT_S` for it to appear.
        Raises `ReplayMismatch` naming what is missing."""
        target = RefTarget(role, name, nth)
        args: dict[str, Any] = {"instance": instance} if instance else {}
        deadline = time.monotonic() + FIND_TIMEOUT_S
        while True:
            envelope = self.session.call("browser_snapshot", **args)
            data = envelope.data or {}
            if envelope.ok:
                found = ref_of(data["snapshot"], target)
                if found is not None:
                    return found
            if time.monotonic() >= deadline:
                where = data["url"] if envelope.ok else f"{envelope.error_type}: {envelope.message}"
                raise ReplayMismatch(
                    f"replay: no {target.describe()} on the page now ({where}); the page differs from the recording."
                )
            time.sleep(FIND_INTERVAL_S)

    def call(self, tool: str, args: dict[str, Any], *, expect: str | None = None) -> Envelope:
        """Call `tool`; if it ends other than `expect` ("success" or an error type), count a mismatch."""
        envelope = self.session.call(tool, **args)
        self.calls += 1
        ended = "success" if envelope.ok else str(envelope.error_type)
        if expect is not None and ended != expect:
            self.mismatches.append(
                f"{tool}: recorded {expect}, replayed {ended}" + ("" if envelope.ok else f" ({envelope.message})")
            )
        if self.echo:
            mark = "ok " if expect in (None, ended) else "DIFFERENT"
            print(f"{mark:<9} {tool:<26} {ended}")
        return envelope

    @property
    def matched(self) -> bool:
        """Whether every checked call ended as recorded."""
        return not self.mismatches

    @staticmethod
    def secret(given: str | None, name: str, about: str) -> str:
        """A secret typed in the recorded session, never written to the export: `given` if set, else
        the environment variable ``WEBMCP_NB_<NAME>``, else asked for (without echo)."""
        if given is not None:
            return given
        from_env = os.environ.get(SECRET_ENV_PREFIX + name.upper())
        if from_env is not None:
            return from_env
        return getpass.getpass(f"{about} (not recorded): ")

    @staticmethod
    def base_url(given: str | None, recorded: str, name: str) -> str:
        """Where a site the recording visited on loopback is now: `given` if set, else the
        environment variable ``WEBMCP_NB_<NAME>``, else `recorded` if it accepts a connection, else
        asked for. Raises `ReplayMismatch` when it is unreachable and nobody can be asked."""
        chosen = given or os.environ.get(SECRET_ENV_PREFIX + name.upper())
        if chosen:
            return chosen.rstrip("/")
        if _answers(recorded):
            return recorded
        question = f"The site recorded at {recorded} does not answer; its address now (like http://host:port): "
        try:
            answer = input(question).strip()
        except (EOFError, OSError, RuntimeError) as exc:  # no stdin: a script under CI, nbclient
            raise ReplayMismatch(
                f"replay: {recorded} does not answer and there is no one to ask ({type(exc).__name__}); "
                f"set {name} in the parameters cell or the environment variable {SECRET_ENV_PREFIX}{name.upper()}."
            ) from None
        if not answer:
            raise ReplayMismatch(f"replay: no address given for {recorded}.")
        return answer.rstrip("/")


def _answers(origin: str) -> bool:
    parts = urlsplit(origin)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", port), timeout=REACH_TIMEOUT_S):
            return True
    except OSError:
        return False
