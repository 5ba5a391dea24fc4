"""Secret JSON fields: values of fields named like a credential never leave in a tool result.

A field whose name, compared without case and separators (``access_token``,
``Access-Token`` and ``accessToken`` are one name), is one of `SECRET_FIELD_NAMES`
(or a name the call adds) has its value replaced by `BLOCKED`, and its path is listed.
Code that needs such a value runs in the notebook's own Python, not through a result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

BLOCKED = "[blocked]"
SECRET_FIELD_NAMES = (
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "access_token",
    "refresh_token",
    "api_key",
    "x-api-key",
    "client_secret",
    "private_key",
    "cookie",
    "set-cookie",
    "authorization",
    "proxy-authorization",
    "auth",
    "session",
    "sessionid",
    "sid",
    "credential",
    "credentials",
)
_SEPARATORS = re.compile(r"[\s_\-.]+")


def normalise(name: str) -> str:
    """A field name without case and separators: the form secret names are compared in."""
    return _SEPARATORS.sub("", name).lower()


_DEFAULT_NAMES = frozenset(normalise(name) for name in SECRET_FIELD_NAMES)


def secret_names(extra: Iterable[str] = ()) -> frozenset[str]:
    return _DEFAULT_NAMES | {normalise(name) for name in extra}


def block_secrets(value: Any, names: frozenset[str] = _DEFAULT_NAMES, path: str = "") -> tuple[Any, list[str]]:
    """`value` (parsed JSON) with each secret field's value replaced by `BLOCKED`, and the blocked
    paths (``user.password``, ``items[2].token``; `path` prefixes them)."""
    blocked: list[str] = []

    def walk(item: Any, where: str) -> Any:
        if isinstance(item, dict):
            result = {}
            for key, child in item.items():
                child_path = f"{where}.{key}" if where else str(key)
                if isinstance(key, str) and normalise(key) in names:
                    result[key] = BLOCKED
                    blocked.append(child_path)
                else:
                    result[key] = walk(child, child_path)
            return result
        if isinstance(item, list):
            return [walk(child, f"{where}[{index}]") for index, child in enumerate(item)]
        return item

    return walk(value, path), blocked


def block_in_json_text(text: str, path: str = "", names: frozenset[str] = _DEFAULT_NAMES) -> tuple[str, list[str]]:
    """`text` with secret fields blocked where it is JSON: a whole JSON object or array, else each
    line that is one (NDJSON; paths ``line3.token``). Only what had something blocked is
    re-serialised; any other text stays as it is."""
    value = _container(text)
    if value is not None:
        cleaned, blocked = block_secrets(value, names, path)
        return (json.dumps(cleaned, ensure_ascii=False) if blocked else text), blocked
    lines = text.split("\n")
    blocked = []
    for index, line in enumerate(lines):
        value = _container(line) if len(lines) > 1 else None
        if value is None:
            continue
        cleaned, found = block_secrets(value, names, f"{path}{'.' if path else ''}line{index + 1}")
        if found:
            ending = "\r" if line.endswith("\r") else ""
            lines[index] = json.dumps(cleaned, ensure_ascii=False) + ending
            blocked += found
    return ("\n".join(lines) if blocked else text), blocked


def block_in_json_bytes(data: bytes, names: frozenset[str] = _DEFAULT_NAMES) -> tuple[bytes, list[str]]:
    """`data` with secret fields blocked if it is UTF-8 text holding JSON (`block_in_json_text`),
    whatever media type it was sent as; other bytes stay as they are."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data, []
    cleaned, blocked = block_in_json_text(text, "", names)
    return (cleaned.encode("utf-8") if blocked else data), blocked


def _container(text: str) -> dict[str, Any] | list[Any] | None:
    """`text` parsed, if it is a JSON object or array (else None)."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None
