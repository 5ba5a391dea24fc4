"""Secrets: what a password or one-time-code field holds never leaves the core.

- Secret fields are ``<input type=password>`` and inputs or text areas whose ``autocomplete``
  names ``one-time-code``, in any frame or shadow root (`SECRET_FIELD_JS`).
- Snapshots (`redact_snapshot`): a secret field that holds anything reads
  ``textbox "Password" [ref=e2]: [redacted]`` whatever its length; an empty one is shown as it is.
  Fields are told by the value they show, with a fixed number of questions per frame (the values
  are read beside the snapshot and matched in the page: none leaves it); each field is asked
  itself only when values cannot tell.
- Typed text (`redact_call`): a tool declares where its arguments carry text typed into a field
  (`ToolSpec.typed_text`, such as ``"fields.*.value"``); its handler tells the call context which
  of those went into an ordinary field (`CallContext.typing_into`). Every other value, a secret
  one or one whose field was never checked (the call failed first), is recorded as
  ``[redacted]`` in the call record (``Session.history``, call logs, anything exported from them)
  and scrubbed from the envelope, before anyone sees the call. A person asked to approve the
  call sees the text only for a field that is ordinary when asked (`redact_for_approval`).
- Secret arguments (`redact_secrets`): values at `ToolSpec.secret_args` paths (a grid's token in
  ``headers.*``) are recorded as ``[redacted]``, URLs at `ToolSpec.credential_urls` without their
  userinfo and query; both are scrubbed from the envelope, and a person approving sees neither.
- Screenshots paint every secret field over (`secret_field_masks`): no dots to count, no code.
- Cookies and request headers are not part of any tool's result; only script the operator
  granted (``js``/``code``) can read them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from ..browsers.aria import REF
from ..call.util import spawn
from .known_secrets import REDACTED, SCRUB_MIN_LENGTH, escaped_forms, replace_forms

if TYPE_CHECKING:
    from playwright.async_api import Frame, JSHandle, Locator, Page

    from ..browsers.pages import PageState
    from ..call.envelope import Envelope
    from ..call.registry import ToolSpec

__all__ = ["REDACTED", "SCRUB_MIN_LENGTH"]  # also for the modules that import them from here
T = TypeVar("T")
# Asking a field that has just been found; a vanished one counts as secret after it. Generous: on a
# loaded machine the questions of a snapshot's ~50 unsettled fields took over 1 s (a CI run).
CHECK_TIMEOUT_MS = 5000
Path = tuple[str | int, ...]

SECRET_FIELD_JS = """(el) => {
  const tag = el.localName;
  if (tag !== "input" && tag !== "textarea") return false;
  if (tag === "input" && String(el.type).toLowerCase() === "password") return true;
  return (el.getAttribute("autocomplete") || "").toLowerCase().split(/\\s+/).includes("one-time-code");
}"""

# Whether typing now goes into an ordinary field: the focused element, followed into open shadow
# roots and same-origin frames, is a field that is not secret, or nothing is focused (the body).
# Anything else cannot be told (a closed shadow root's host, a cross-origin frame): secret.
FOCUS_IS_PLAIN_JS = """() => {
  const secret = IS_SECRET;
  let el = document.activeElement;
  for (;;) {
    if (el && el.shadowRoot && el.shadowRoot.activeElement) { el = el.shadowRoot.activeElement; continue; }
    if (el && (el.localName === "iframe" || el.localName === "frame")) {
      let inner = null;
      try { inner = el.contentDocument; } catch (e) { inner = null; }
      if (!inner) return false;
      el = inner.activeElement;
      continue;
    }
    break;
  }
  if (!el || el.localName === "body" || el.localName === "html") return true;
  const field = el.localName === "input" || el.localName === "textarea" || el.isContentEditable;
  return Boolean(field) && !secret(el);
}""".replace("IS_SECRET", SECRET_FIELD_JS)

# The same fields for Playwright's CSS engine (which pierces open shadow roots), one frame at a time.
SECRET_FIELD_CSS = (
    'input[type=password i], input[autocomplete~="one-time-code" i], textarea[autocomplete~="one-time-code" i]'
)
MASK_COLOR = "#7f7f7f"

# A field's line in an AI-mode snapshot: `- textbox "Name" [active] [ref=e2]: value` (or ending in
# ":" with the value and placeholder as child lines).
_FIELD_LINE = re.compile(
    r'^(?P<head>(?P<indent> *)- (?:textbox|spinbutton|combobox|searchbox|slider)(?: "(?:[^"\\]|\\.)*")?'
    r"(?: \[[^\]]*\])*)(?P<rest>:.*)?$"
)


async def is_secret(locator: Locator) -> bool:
    """Whether the element is a secret field; True when it cannot be told (fail closed)."""
    from playwright.async_api import Error

    try:
        return bool(await locator.evaluate(SECRET_FIELD_JS, timeout=CHECK_TIMEOUT_MS))
    except Error:
        return True


async def focus_is_plain(page: Page) -> bool:
    """Whether keys typed now go into an ordinary field (or nowhere); False when it cannot be told."""
    from playwright.async_api import Error

    try:
        return bool(await page.evaluate(FOCUS_IS_PLAIN_JS))
    except Error:
        return False


# snapshots ----------------------------------------------------------------------------------
# The values the secret fields of a frame's document hold (its open shadow roots too), each as a
# snapshot shows it (whitespace normalised as Playwright's snapshot does) and whether the field is
# rendered. The values stay in the page: Python only holds a handle to them.
_SECRET_VALUES_JS = f"""() => {{
  const isSecret = {SECRET_FIELD_JS};
  // The value as the element holds it (a value property the page put on the element is passed by).
  const input = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").get;
  const area = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").get;
  const values = [];
  const visit = (root) => {{
    for (const el of root.querySelectorAll("input, textarea"))
      if (isSecret(el)) values.push([
        String((el.localName === "input" ? input : area).call(el)).replace(/[\\u200b\\u00ad]/g, "").trim().replace(/\\s+/g, " "),
        el.checkVisibility ? el.checkVisibility({{visibilityProperty: true}}) : true,
      ]);
    for (const el of root.querySelectorAll("*")) if (el.shadowRoot) visit(el.shadowRoot);
  }};
  visit(document);
  return values;
}}"""

# Which shown values (`candidates`) a secret field of this frame holds, now or when `before` was
# read; whether a rendered secret field holds a value that no candidate shows (then the values
# cannot be told apart by what they read, and each field is asked instead); whether any holds one.
_MATCH_JS = f"""([before, shownJSON]) => {{
  const candidates = JSON.parse(shownJSON);
  const now = ({_SECRET_VALUES_JS})();
  const held = [...(before || []), ...now].filter(([value]) => value !== "");
  const secret = new Set(held.map(([value]) => value));
  const shown = new Set(candidates);
  return {{
    matched: candidates.flatMap((value, index) => secret.has(value) ? [index] : []),
    unmatched: held.some(([value, rendered]) => rendered && !shown.has(value)),
    holds: held.length > 0,
  }};
}}"""


class SecretRead:
    """The secret fields' values of the frames a snapshot covers, read as it is taken (started just
    before it, answered beside it), so that a value changed or cleared right after the snapshot is
    still recognised in it. `redact_snapshot` uses and releases it."""

    def __init__(self, frames: list[Frame], timeout_s: float, *, before: bool) -> None:
        self.frames, self.timeout_s = frames, timeout_s
        self.filled = False  # whether the snapshot showed a filled field (set by `redact_snapshot`)
        self._before = [
            spawn(_bounded(frame.evaluate_handle(_SECRET_VALUES_JS), timeout_s)) if before else None for frame in frames
        ]

    async def matches(self, candidates: list[str]) -> tuple[set[int], bool, bool] | None:
        """The candidates a secret field holds, whether some rendered secret value is shown by none,
        and whether any secret field holds a value; None when a frame could not be asked."""
        before = [
            (await asyncio.gather(task, return_exceptions=True))[0] if task is not None else None
            for task in self._before
        ]
        shown = json.dumps(candidates)  # one string: Playwright's own serialisation of a long list is slow
        answers = await asyncio.gather(
            *(
                _bounded(frame.evaluate(_MATCH_JS, [handle, shown]), self.timeout_s)
                for frame, handle in zip(self.frames, before, strict=True)
                if not isinstance(handle, BaseException)
            ),
            return_exceptions=True,
        )
        if len(answers) < len(self.frames) or any(isinstance(answer, BaseException) for answer in answers):
            return None
        matched = {index for answer in answers for index in answer["matched"]}  # type: ignore[index]
        unmatched = any(answer["unmatched"] for answer in answers)  # type: ignore[index]
        return matched, unmatched, any(answer["holds"] for answer in answers)  # type: ignore[index]

    def release(self) -> None:
        """Let the page forget the values (in the background: nothing waits for it)."""
        for before in self._before:
            if before is not None:
                before.add_done_callback(_dispose)


def read_secret_fields(root: Frame, timeout_ms: float, *, before: bool = True) -> SecretRead:
    """Start reading the secret fields of `root` and the frames inside it, for a snapshot of `root`
    that is about to be taken (and given `timeout_ms`: the read waits behind it). Without `before`
    (the last snapshot of the document showed no filled field), they are read after it only."""
    frames, pending = [], [root]
    while pending:
        frame = pending.pop()
        if not frame.is_detached():
            frames.append(frame)
            pending += frame.child_frames
    return SecretRead(frames, timeout_ms / 1000, before=before)


async def redact_snapshot(page: Page, yaml: str, read: SecretRead) -> str:
    """`yaml` with the value of every filled secret field replaced by ``[redacted]``.

    The fields are told by the value they show: one question per frame, whatever the page's size.
    A field showing what a secret field of the snapshot's frames holds reads ``[redacted]`` (an
    ordinary field that shows the very same text too). When that cannot settle it (a frame does not
    answer; a rendered secret value is shown by no field, as when Playwright renders a value
    differently), each remaining filled field is asked whether it is secret, as `is_secret` does.
    """
    try:
        return await _redact(page, yaml, read)
    finally:
        read.release()


async def _redact(page: Page, yaml: str, read: SecretRead) -> str:
    lines = yaml.split("\n")
    filled: dict[int, tuple[str | None, str | None]] = {}  # line of a filled field -> (its ref, value shown)
    for index, line in enumerate(lines):
        match = _FIELD_LINE.match(line)
        if match is None or not _has_value(lines, index, match):
            continue
        ref = REF.search(match["head"])
        filled[index] = (ref.group(1) if ref else None, _shown_value(lines, index, match))
    read.filled = bool(filled)
    if not filled:
        return yaml
    shown = [(index, value) for index, (_, value) in filled.items() if value is not None]
    answer = await read.matches([value for _, value in shown])
    secret = {shown[position][0] for position in answer[0]} if answer else set()
    # Each field not settled is asked itself, so frames and shadow roots are covered; a field
    # without a ref cannot be asked and counts as secret. Unsettled: every field when the values
    # cannot tell, else those whose value could not be read while some secret field holds one.
    rest = [(index, ref) for index, (ref, value) in filled.items() if index not in secret]
    if answer is not None and not answer[1]:
        rest = [(index, ref) for index, ref in rest if answer[2] and filled[index][1] is None]
    if rest:
        verdicts = await asyncio.gather(
            *(is_secret(page.locator(f"aria-ref={ref}")) if ref else _true() for _, ref in rest)
        )
        secret |= {index for (index, _), verdict in zip(rest, verdicts, strict=True) if verdict}
    if not secret:
        return yaml
    kept: list[str] = []
    skip_deeper_than: int | None = None
    for index, line in enumerate(lines):
        if skip_deeper_than is not None:
            if _indent(line) > skip_deeper_than:
                continue  # the value (and placeholder) lines of a redacted field
            skip_deeper_than = None
        if index in secret:
            match = _FIELD_LINE.match(line)
            assert match is not None
            kept.append(f"{match['head']}: {REDACTED}")
            skip_deeper_than = len(match["indent"])
        else:
            kept.append(line)
    return "\n".join(kept)


async def _bounded(work: Awaitable[T], timeout_s: float) -> T:
    async with asyncio.timeout(timeout_s):
        return await work


def _dispose(before: asyncio.Task[JSHandle]) -> None:
    if not before.cancelled() and before.exception() is None:
        spawn(_quietly(before.result().dispose()))


async def _quietly(work: Awaitable[object]) -> None:
    from playwright.async_api import Error

    try:
        await work
    except Error:
        pass  # the document (and the handle with it) is gone


async def _true() -> bool:
    return True


async def secret_field_masks(page: Page) -> list[Locator]:
    """Locators of the secret fields, one per frame that has any, for a screenshot's `mask`."""
    from playwright.async_api import Error

    async def count(frame: Frame) -> int:
        try:
            return int(await frame.evaluate(f"() => ({_SECRET_VALUES_JS})().length"))  # a count: no value leaves
        except Error:
            return 0 if frame.is_detached() else 1  # cannot tell: mask whatever matches

    frames = [frame for frame in page.frames if not frame.is_detached()]
    counts = await asyncio.gather(*(count(frame) for frame in frames))
    return [frame.locator(SECRET_FIELD_CSS) for frame, found in zip(frames, counts, strict=True) if found]


def _has_value(lines: list[str], index: int, match: re.Match[str]) -> bool:
    """Whether the field on `lines[index]` shows a value: inline, or as a ``- text:`` child (a
    select's options, a placeholder are none)."""
    rest = match["rest"]
    if rest is None:
        return False
    if rest.strip() != ":":
        return True
    base = len(match["indent"])
    for line in lines[index + 1 :]:
        if _indent(line) <= base:
            return False
        if line.lstrip().startswith("- text:"):
            return True
    return False


def _shown_value(lines: list[str], index: int, match: re.Match[str]) -> str | None:
    """The text the filled field on `lines[index]` shows (inline, or its ``- text:`` child line),
    unquoted; None when it is not in a form Playwright writes."""
    rest = match["rest"]
    assert rest is not None
    if rest.strip() != ":":
        return _unquote(rest[2:]) if rest.startswith(": ") else None
    base = len(match["indent"])
    for line in lines[index + 1 :]:
        if _indent(line) <= base:
            break
        child = line.lstrip()
        if child.startswith("- text: "):
            return _unquote(child[len("- text: ") :])
    return None


_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|(.))")
_ESCAPED = {"\\": "\\", '"': '"', "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unquote(value: str) -> str | None:
    """A YAML scalar as Playwright writes one: plain, or double-quoted with its escapes."""
    if not value.startswith('"'):
        return value
    if len(value) < 2 or not value.endswith('"'):
        return None
    unknown = False

    def unescape(found: re.Match[str]) -> str:
        nonlocal unknown
        if found[1]:
            return chr(int(found[1], 16))
        if found[2] not in _ESCAPED:
            unknown = True
        return _ESCAPED.get(found[2], "")

    text = _ESCAPE.sub(unescape, value[1:-1])
    return None if unknown else text


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


# typed text ---------------------------------------------------------------------------------
def typed_paths(patterns: tuple[str, ...], args: dict[str, Any]) -> list[Path]:
    """The concrete argument paths matching `patterns` (``"text"``, ``"fields.*.value"``) that
    hold a string."""
    found: list[Path] = []

    def walk(value: Any, parts: list[str], path: Path) -> None:
        if not parts:
            if isinstance(value, str):
                found.append(path)
            return
        head, rest = parts[0], parts[1:]
        if head == "*" and isinstance(value, list):
            for position, item in enumerate(value):
                walk(item, rest, (*path, position))
        elif head == "*" and isinstance(value, dict):
            for key, item in value.items():
                walk(item, rest, (*path, key))
        elif head != "*" and isinstance(value, dict) and head in value:
            walk(value[head], rest, (*path, head))

    for pattern in patterns:
        walk(args, pattern.split("."), ())
    return found


def redact_args(patterns: tuple[str, ...], args: dict[str, Any], plain: set[Path]) -> tuple[dict[str, Any], list[str]]:
    """`args` with every typed value not known to go into an ordinary field (`plain`) replaced by
    ``[redacted]``, and the values replaced."""
    secrets: list[str] = []
    redacted = args
    for path in typed_paths(patterns, args):
        if path not in plain:
            secrets.append(_get(args, path))
            redacted = _set(redacted, path, REDACTED)
    return redacted, secrets


def redact_secrets(spec: ToolSpec, args: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`args` with the spec's secret arguments replaced by ``[redacted]`` and its credential URLs
    stripped (see `webmcp_nb.core.backends.remote.public_url`), and the values taken out."""
    from ..backends.remote import public_url, url_secrets

    redacted, secrets = redact_args(spec.secret_args, args, set())
    for path in typed_paths(spec.credential_urls, args):
        url = _get(args, path)
        if public_url(url) != url:
            secrets += url_secrets(url)
            redacted = _set(redacted, path, public_url(url))
    return redacted, secrets


def redact_call(
    spec: ToolSpec, args: dict[str, Any], plain: set[Path], envelope: Envelope
) -> tuple[dict[str, Any], Envelope, list[str]]:
    """The arguments to record and the envelope to return (see `redact_args`, `redact_secrets`),
    with the redacted values also scrubbed from the envelope's data and message; and those values
    (for the instance's trace, see `webmcp_nb.core.evidence.trace_scrub`)."""
    if not (spec.typed_text or spec.secret_args or spec.credential_urls):
        return args, envelope, []  # the tool takes nothing to redact (most calls)
    recorded, secrets = redact_args(spec.typed_text, args, plain)
    recorded, more = redact_secrets(spec, recorded)
    secrets += more
    forms = escaped_forms(secrets)
    if forms:
        envelope = scrub_envelope(envelope, forms)
    return recorded, envelope, secrets


async def redact_for_approval(spec: ToolSpec, args: dict[str, Any], page_state: PageState | None) -> dict[str, Any]:
    """`args` as a person approving the call sees them: text for a field is shown only when the
    field (the ``ref`` beside the text) is an ordinary one now; secret arguments never."""
    from ..call.errors import ToolFailure

    args = redact_secrets(spec, args)[0]
    patterns = spec.typed_text
    plain: set[Path] = set()
    for path in typed_paths(patterns, args):
        container = _get(args, path[:-1])
        ref = container.get("ref") if isinstance(container, dict) else None
        if page_state is None or not isinstance(ref, str):
            continue
        try:
            locator = page_state.ref_locator(ref)
        except ToolFailure:
            continue
        if not await is_secret(locator):
            plain.add(path)
    return redact_args(patterns, args, plain)[0]


def value_at(value: Any, path: Path) -> Any:
    """What `value` holds at `path` (as `typed_paths` gives them)."""
    return _get(value, path)


def _get(value: Any, path: Path) -> Any:
    for part in path:
        value = value[part]
    return value


def _set(value: Any, path: Path, new: Any) -> Any:
    """A copy of `value` with `path` set to `new` (only the containers on the path are copied)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy: Any = list(value) if isinstance(value, list) else dict(value)
    copy[head] = _set(value[head], rest, new)
    return copy


def scrub_envelope(envelope: Envelope, forms: list[str], urls: bool = False) -> Envelope:
    """`envelope` with `forms` (and with `urls`, secret URL parts) replaced in its data, message
    and context (see `webmcp_nb.core.guard.known_secrets.replace_forms`); the same object if nothing was."""
    data = replace_forms(envelope.data, forms, urls)
    message = replace_forms(envelope.message, forms, urls)
    context = replace_forms(envelope.context, forms, urls)
    if data == envelope.data and message == envelope.message and context == envelope.context:
        return envelope
    return dataclasses.replace(envelope, data=data, message=message, context=context)
