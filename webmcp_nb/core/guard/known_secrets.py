"""Known secrets: values the session knows to be secret, scrubbed by value wherever they reappear.

A page can repeat what it was given: a typed password in its title, an alert, a console line, its
DOM; a cookie it logs. So redacting the call that typed it is not enough. `KnownSecrets` holds, in
memory only, every text typed into a secret field or passed as a secret argument (see
`webmcp_nb.core.guard.redaction`) and every cookie value of the instances' browser contexts (read again
as each call finishes, `refresh`). `scrub` replaces each of them, and its JSON-, URL- and
HTML-escaped forms, by ``[redacted]`` in any string, list or dict, and redacts the values of
secret query parameters (`redact_urls`) in any URL inside a string. The trace scrubber
(`webmcp_nb.core.evidence.trace_scrub`) uses the same forms and replacement.

Short values would garble ordinary text: typed values shorter than `SCRUB_MIN_LENGTH` (3) and
cookie values shorter than `COOKIE_MIN_LENGTH` (8: ``1``, ``true``, ``en-US``, ``dark``, consent
flags) are not searched for.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, quote_plus, unquote

from .secret_fields import normalise

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext

REDACTED = "[redacted]"
SCRUB_MIN_LENGTH = 3  # shorter typed values are not searched for in messages (they would garble them)
COOKIE_MIN_LENGTH = 8  # shorter cookie values are flags and words, not credentials
# Query parameters whose value is redacted: these names (compared as `normalise` does) or names
# containing one of the words.
SECRET_PARAMS = frozenset(
    normalise(name)
    for name in (
        "password", "passwd", "pwd", "secret", "token", "access_token", "refresh_token", "id_token", "api_key",
        "apikey", "client_secret", "private_key", "session", "sessionid", "sid", "auth", "credential",
        "credentials", "code_verifier", "signature", "sig",
    )
)  # fmt: skip
_SECRET_PARAM_WORDS = ("token", "secret", "password", "passwd", "apikey", "credential", "sessionid")
# A query parameter in a URL (after ? or &), or a URL's userinfo password (//user:password@).
_PARAM = re.compile(r"(?P<lead>[?&])(?P<name>[^=&#\s\"'<>?]{1,100})=(?P<value>[^&#\s\"'<>\\]*)")
_USERINFO = re.compile(r"(?P<lead>//[^/:@\s\"'<>]{0,200}:)(?P<value>[^/@\s\"'<>]{1,200})(?=@)")


def secret_param(name: str) -> bool:
    """Whether a query parameter named `name` carries a credential."""
    key = normalise(unquote(name))
    return key in SECRET_PARAMS or any(word in key for word in _SECRET_PARAM_WORDS)


def redact_urls(text: str) -> str:
    """`text` with the value of every secret query parameter, and every userinfo password, of the
    URLs in it replaced by ``[redacted]``."""
    if "=" not in text and "@" not in text:
        return text

    def param(match: re.Match[str]) -> str:
        if not match["value"] or match["value"] == REDACTED or not secret_param(match["name"]):
            return match[0]
        return f"{match['lead']}{match['name']}={REDACTED}"

    text = _PARAM.sub(param, text) if "=" in text else text
    return _USERINFO.sub(lambda match: match["lead"] + REDACTED, text) if "@" in text else text


def escaped_forms(secrets: Iterable[str], min_length: int = SCRUB_MIN_LENGTH) -> list[str]:
    """The secrets at least `min_length` long, with their JSON-, URL- and HTML-escaped forms,
    longest first (so a longer form is replaced before a shorter one inside it)."""
    forms: set[str] = set()
    for secret in secrets:
        if len(secret) >= min_length and secret != REDACTED:
            escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
            ascii_escaped = json.dumps(secret)[1:-1]
            forms.update((secret, escaped, ascii_escaped, quote(secret, safe=""), quote_plus(secret)))
            forms.add(html.escape(secret))
    return sorted(forms, key=len, reverse=True)


def replace_forms(value: Any, forms: list[str], urls: bool = False) -> Any:
    """`value` (a string, or lists, tuples and dicts of them) with each of `forms` replaced by
    ``[redacted]`` in every string value (keys, the shape of the data, stay), and with `urls`,
    secret URL parts too (`redact_urls`). Anything else (numbers, bytes) stays as it is."""
    if isinstance(value, str):
        for form in forms:
            if form in value:
                value = value.replace(form, REDACTED)
        return redact_urls(value) if urls else value
    if isinstance(value, list):
        return [replace_forms(item, forms, urls) for item in value]
    if isinstance(value, tuple):
        return tuple(replace_forms(item, forms, urls) for item in value)
    if isinstance(value, dict):
        return {key: replace_forms(item, forms, urls) for key, item in value.items()}
    return value


class KnownSecrets:
    """The secrets of a session's instances, by value (memory only, never written anywhere)."""

    def __init__(self) -> None:
        self.typed: set[str] = set()  # typed into secret fields, secret arguments
        self.cookies: dict[str, frozenset[str]] = {}  # instance id -> its cookie values
        self._forms: list[str] | None = None

    def add(self, values: Iterable[str]) -> None:
        new = {value for value in values if isinstance(value, str) and value and value != REDACTED} - self.typed
        if new:
            self.typed |= new
            self._forms = None

    def values(self) -> set[str]:
        """Every known secret long enough to search for."""
        found = {value for value in self.typed if len(value) >= SCRUB_MIN_LENGTH}
        for values in self.cookies.values():
            found |= values
        return found

    def set_cookies(self, instance_id: str, values: Iterable[str]) -> None:
        kept = frozenset(
            form
            for value in values
            for form in (value, unquote(value), value.strip('"'))
            if len(form) >= COOKIE_MIN_LENGTH
        )
        if self.cookies.get(instance_id) != kept:
            self.cookies[instance_id] = kept
            self._forms = None

    async def refresh(self, instance_id: str, context: BrowserContext | None) -> None:
        """Read the cookie values of `context` again (kept as they were if it cannot answer)."""
        if context is None:
            return
        try:
            cookies = await context.cookies()
        except Exception:  # noqa: BLE001 - a closed or crashed context: what was known stays known
            return
        self.set_cookies(instance_id, (cookie.get("value") or "" for cookie in cookies))

    def forms(self) -> list[str]:
        if self._forms is None:
            self._forms = escaped_forms(self.values())
        return self._forms

    def scrub(self, value: Any) -> Any:
        """`value` without any known secret nor secret URL part (see `replace_forms`)."""
        return replace_forms(value, self.forms(), urls=True)
