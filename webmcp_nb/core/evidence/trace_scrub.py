"""Scrubbing a Playwright trace.zip of secrets before anyone gets it (`browser_trace` stop).

What a trace carries raw, as recorded on Chromium (Playwright 1.62-1.65):

- ``trace.trace`` (JSON lines): action parameters (``fill``'s ``value``), action logs
  (``fill("...")``), results (an input's value, the raw aria snapshot), console messages, and DOM
  snapshots (``frame-snapshot``) where every input holds its value in ``__playwright_value_``,
  also one typed before the trace started;
- ``trace.network`` (JSON lines of HAR entries): request and response headers (Authorization,
  Cookie, Set-Cookie, ...), ``cookies`` arrays, request bodies;
- ``resources/*``: response and request bodies, page sources among them (a page's script may
  hold the token it sends); screenshots (``*.jpeg``) carry no text.

The scrub has two passes. First, by structure: values of secret headers (`is_secret_header`),
cookie values and the values of secret fields in DOM snapshots (`SECRET_FIELD_JS`'s rule) become
``[redacted]``, and each value taken out joins the secrets. Then every text entry has each secret
(the values taken out, and the texts the instance typed into secret fields) replaced by
``[redacted]``, also in its JSON-, URL- and HTML-escaped forms; a JSON-lines entry is rewritten
string by string, so each line still parses. Entry names and order stay; images stay as they are.
Values shorter than `SCRUB_MIN_LENGTH` (`webmcp_nb.core.guard.known_secrets`, whose forms and replacement
this shares) are taken out by structure only. Bodies (resources and
request bodies) that are JSON have their secret fields ``[blocked]``, as `browser_network_body`
does (`webmcp_nb.core.guard.secret_fields`).
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..guard.known_secrets import REDACTED, escaped_forms, replace_forms
from ..guard.secret_fields import block_in_json_text
from .recorder import is_secret_header

_JSON_LINES = (".trace", ".network")
_IMAGES = (".jpeg", ".jpg", ".png", ".webp", ".gif", ".avif", ".bmp", ".ico")
_VALUE = "__playwright_value_"  # where a DOM snapshot keeps an input's value


def scrub_trace(path: Path, known: Iterable[str]) -> None:
    """Rewrite the trace.zip at `path` without secrets (see the module's docstring); `known`: the
    secrets known beforehand (what calls typed into secret fields, their other redacted arguments).
    One entry at a time is in memory, besides the JSON lines."""
    found: set[str] = set(known)
    parsed: dict[str, list[tuple[str, Any, Any]]] = {}  # entry -> (line, event, event redacted)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".scrub-", suffix=".zip")
    try:
        with zipfile.ZipFile(path) as source, os.fdopen(handle, "wb") as file, zipfile.ZipFile(file, "w") as target:
            for info in source.infolist():
                if info.filename.endswith(_JSON_LINES):
                    lines = source.read(info).decode("utf-8").split("\n")
                    parsed[info.filename] = [_parse(line, found) for line in lines]
            secrets = escaped_forms(found)
            for info in source.infolist():
                if info.filename in parsed:
                    data = "\n".join(_line(*item, secrets) for item in parsed.pop(info.filename)).encode("utf-8")
                elif info.filename.lower().endswith(_IMAGES):
                    data = source.read(info)
                else:
                    data = _replace_bytes(source.read(info), secrets)
                target.writestr(info, data)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _parse(line: str, found: set[str]) -> tuple[str, Any, Any]:
    """A JSON line, its event and the event with its structure redacted (None, None: not JSON)."""
    try:
        event = json.loads(line) if line else None
    except ValueError:
        event = None
    return line, event, _redact_structure(event, found) if event is not None else None


def _line(line: str, event: Any, redacted: Any, secrets: list[str]) -> str:
    """The line again: as it was if nothing in it is secret, else its scrubbed event (or text)."""
    if event is None:
        return str(replace_forms(line, secrets))
    redacted = replace_forms(redacted, secrets)
    return line if redacted == event else json.dumps(redacted, ensure_ascii=False, separators=(",", ":"))


def _redact_structure(value: Any, found: set[str]) -> Any:
    """`value` with secret header values, cookie values and secret fields' values redacted; the
    values taken out are added to `found`."""
    if isinstance(value, list):
        if len(value) >= 2 and isinstance(value[0], str) and isinstance(value[1], dict):
            value = [value[0], _redact_field(value[0], value[1], found), *value[2:]]  # a DOM snapshot's node
        return [_redact_structure(item, found) for item in value]
    if not isinstance(value, dict):
        return value
    result: dict[str, Any] = {}
    for key, item in value.items():
        if key.lower().endswith("headers"):
            item = _redact_headers(item, found)
        elif key == "cookies" and isinstance(item, list):
            item = [_redact_value(cookie, found) if isinstance(cookie, dict) else cookie for cookie in item]
        elif key == "postData" and isinstance(item, dict) and isinstance(item.get("text"), str):
            item = {**item, "text": block_in_json_text(item["text"])[0]}
        result[key] = _redact_structure(item, found)
    return result


def _redact_headers(headers: Any, found: set[str]) -> Any:
    """Headers as ``[{name, value}]`` or ``{name: value}``, secret ones redacted."""
    if isinstance(headers, dict):
        return {
            name: _take(name, value, found) if isinstance(value, str) and is_secret_header(name) else value
            for name, value in headers.items()
        }
    if isinstance(headers, list):
        return [
            _redact_value(header, found, header["name"])
            if isinstance(header, dict) and isinstance(header.get("name"), str) and is_secret_header(header["name"])
            else header
            for header in headers
        ]
    return headers


def _redact_value(entry: dict[str, Any], found: set[str], header: str = "") -> dict[str, Any]:
    value = entry.get("value")
    if not isinstance(value, str) or not value or value == REDACTED:
        return entry
    return {**entry, "value": _take(header, value, found)}


def _take(header: str, value: str, found: set[str]) -> str:
    """Note `value` of `header` (with its credential and cookie values) as a secret; REDACTED."""
    found.add(value)
    lowered = header.lower()
    if lowered in ("cookie", "set-cookie"):
        pairs = value.split(";") if lowered == "cookie" else value.split(";")[:1]
        found.update(pair.partition("=")[2].strip() for pair in pairs)
    elif value.count(" ") == 1:
        found.add(value.partition(" ")[2])  # `Bearer <token>`: the token alone too
    return REDACTED


def _redact_field(tag: str, attributes: dict[str, Any], found: set[str]) -> dict[str, Any]:
    """A snapshot node's attributes, with its value redacted if it is a filled secret field."""
    value = attributes.get(_VALUE)
    if not isinstance(value, str) or not value or value == REDACTED:
        return attributes
    tag = tag.lower()
    kind = str(attributes.get("type", "")).lower()
    autocomplete = str(attributes.get("autocomplete", "")).lower().split()
    secret = (tag == "input" and kind == "password") or (
        tag in ("input", "textarea") and "one-time-code" in autocomplete
    )
    if not secret:
        return attributes
    found.add(value)
    return {**attributes, _VALUE: REDACTED}


def _replace_bytes(data: bytes, secrets: list[str]) -> bytes:
    """An entry's bytes with each secret replaced (as text when it is UTF-8, else byte for byte),
    and its secret JSON fields blocked if it is JSON."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for secret in secrets:
            data = data.replace(secret.encode("utf-8"), REDACTED.encode())
        return data
    replaced = block_in_json_text(replace_forms(text, secrets))[0]
    return replaced.encode("utf-8") if replaced != text else data
