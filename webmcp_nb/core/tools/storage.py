"""Named storage states: an instance's cookies, local storage and IndexedDB, saved and loaded by name.

A state is a JSON file (mode 600) in the session's states directory (`states_dir`); callers
name it, never give a path. Saving and loading need the `storage` group; showing a state's
contents needs `secrets` too. Loading replaces the instance's cookies and storage by the state's
(Playwright's `set_storage_state`; every supported Playwright, 1.62 on, saves and restores
IndexedDB). The cookie, local-storage and IndexedDB values of a state become known secrets of
every instance they reach (`webmcp_nb.core.guard.known_secrets`), so they are
redacted by value wherever the secret rules apply.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import Field

from ..call.errors import InvalidParams
from ..call.registry import tool
from ..guard.grants import SECRETS_CAP
from ..guard.known_secrets import COOKIE_MIN_LENGTH
from .models import Data, InstanceName, Params

if TYPE_CHECKING:
    from playwright.async_api import StorageState

    from ..browsers.instances import Instance
    from ..call.context import CallContext

STORAGE_CAP = "storage"
StateName = InstanceName  # the same rule as instance and profile names: no path can be spelled


class StorageParams(Params):
    action: Literal["save", "load", "list", "delete", "show"] = Field(description="show: its contents (`secrets`).")
    name: StateName | None = None
    instance: InstanceName | None = None


class StorageData(Data):
    states: list[str]
    contents: dict[str, Any] | None = None


def states_dir(artifacts_dir: Path) -> Path:
    """Where a session's named states are kept (agents never upload from it: logins)."""
    return artifacts_dir / "states"


def state_names(artifacts_dir: Path) -> list[str]:
    folder = states_dir(artifacts_dir)
    return sorted(path.stem for path in folder.glob("*.json")) if folder.is_dir() else []


def state_path(artifacts_dir: Path, name: str, must_exist: bool = True) -> Path:
    path = states_dir(artifacts_dir) / f"{name}.json"
    if must_exist and not path.is_file():
        known = ", ".join(state_names(artifacts_dir)) or "none"
        raise InvalidParams(f"No storage state {name!r} (saved states: {known}); save one with action='save'.")
    return path


def read_state(artifacts_dir: Path, name: str) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(state_path(artifacts_dir, name).read_text())
    return state


def state_secrets(state: dict[str, Any]) -> list[str]:
    """The values of a state that are secrets: its cookies', its local storage's and the strings
    of its IndexedDB records (as long as a cookie's must be to count: shorter ones are flags and words)."""
    values = [str(cookie.get("value") or "") for cookie in state.get("cookies", [])]
    for origin in state.get("origins", []):
        values += [str(item.get("value") or "") for item in origin.get("localStorage", [])]
        for database in origin.get("indexedDB", []):
            for store in database.get("stores", []):
                for record in store.get("records", []):
                    values += _strings(record.get("value"))
    return [value for value in values if len(value) >= COOKIE_MIN_LENGTH]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _check(ctx: CallContext, p: StorageParams) -> None:
    if p.action != "list" and p.name is None:
        raise InvalidParams(f"browser_storage_state: action={p.action!r} needs a name.")
    if p.action == "show" and ctx.grant is not None and SECRETS_CAP not in ctx.grant.groups:
        raise InvalidParams(
            "browser_storage_state: a state's contents (cookies, tokens) need the `secrets` capability "
            "(`--caps secrets`), which the operator did not grant."
        )


@tool(
    name="browser_storage_state",
    title="Storage state",
    description="Save, load, list, delete named cookie+storage states.",
    params=StorageParams,
    data=StorageData,
    target="server",
    group="storage",
    check=_check,
    magic_positional=("action", "name"),
)
async def storage_state(ctx: CallContext, p: StorageParams) -> StorageData:
    root = ctx.engine.artifacts_dir
    if p.action == "list":
        return StorageData(states=state_names(root))
    assert p.name is not None  # _check
    if p.action == "delete":
        state_path(root, p.name).unlink()
        return StorageData(states=state_names(root))
    if p.action == "show":
        state = read_state(root, p.name)
        ctx.engine.manager.secrets.add(state_secrets(state))
        return StorageData(states=state_names(root), contents=state)
    name = p.instance or ctx.engine.current_instance
    instance = ctx.engine.manager.get(name)
    ctx.instance, ctx.instance_name, ctx.instance_id = instance, name, instance.instance_id
    async with instance.lock:
        if p.action == "save":
            state = await save_state(instance, state_path(root, p.name, must_exist=False))
        else:
            state = read_state(root, p.name)
            await load_state(instance, state)
    ctx.engine.manager.secrets.add(state_secrets(state))
    return StorageData(states=state_names(root))


async def save_state(instance: Instance, path: Path) -> dict[str, Any]:
    """Write `instance`'s cookies, local storage and IndexedDB to `path` (mode 600), and return them."""
    assert instance.context is not None
    state: dict[str, Any] = dict(await instance.context.storage_state(indexed_db=True))
    text = json.dumps(state, indent=1)

    def write() -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(text)
        os.chmod(path, 0o600)  # an older file of that name keeps no wider mode

    await asyncio.to_thread(write)
    return state


async def load_state(instance: Instance, state: dict[str, Any]) -> None:
    """Replace `instance`'s cookies and storage by `state`'s (Playwright writes each origin's
    storage in a page of its own that never reaches the network and is no tab of the instance)."""
    assert instance.context is not None
    await instance.context.set_storage_state(cast("StorageState", state))
