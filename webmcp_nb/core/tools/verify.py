"""Verifying what the page shows: an element, a text, a list, a field's value (read-only).

A mismatch is `verification_failed` with outcome ``completed`` (the check ran) and retry
``read_only``; the message says what was found instead. A secret field's value is never quoted.
Group ``testing``: agents get these tools with that grant (`--caps testing`), the notebook always.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, StringConstraints

from ..call.errors import ToolFailure
from ..call.registry import tool
from .models import Data, FrameParams, Ref

if TYPE_CHECKING:
    from ..call.context import CallContext

Text = Annotated[str, StringConstraints(min_length=1, max_length=10_000)]
Role = Annotated[str, StringConstraints(pattern=r"^[a-z]{2,40}$")]
_SHOWN = 5  # candidates named in a failure message
_CLIP = 200

READ_VALUE_JS = """el => {
  if (el.type === 'checkbox' || el.type === 'radio') return el.checked ? 'checked' : 'unchecked';
  if (el.tagName === 'SELECT') return Array.from(el.selectedOptions).map(o => o.label || o.value).join(', ');
  if ('value' in el && el.tagName !== 'BUTTON' && el.tagName !== 'LI') return String(el.value);
  return (el.innerText || el.textContent || '').trim();
}"""


class VerifyData(Data):
    url: str
    verified: str = Field(description="What was checked and held.")


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _CLIP else text[: _CLIP - 3] + "..."


def _failed(message: str) -> ToolFailure:
    return ToolFailure("verification_failed", message, completed=True)


def _quote_all(texts: list[str]) -> str:
    shown = ", ".join(repr(_clip(text)) for text in texts[:_SHOWN])
    more = f" and {len(texts) - _SHOWN} more" if len(texts) > _SHOWN else ""
    return shown + more


# element ----------------------------------------------------------------------
class ElementParams(FrameParams):
    role: Role = Field(description="As in the snapshot: button, link...")
    name: Text = Field(description="Exact accessible name.")


@tool(
    name="browser_verify_element_visible",
    title="Verify element visible",
    description="Check that an element with this role and name is visible (else verification_failed).",
    params=ElementParams,
    data=VerifyData,
    target="page",
    read_only=True,
    idempotent=True,
    group="testing",
)
async def verify_element_visible(ctx: CallContext, p: ElementParams) -> VerifyData:
    frame = ctx.require_frame()
    matches = frame.get_by_role(p.role, name=p.name, exact=True)  # type: ignore[arg-type]
    if await matches.filter(visible=True).count() == 0:
        visible = frame.get_by_role(p.role).filter(visible=True)  # type: ignore[arg-type]
        names = [name for name in await visible.evaluate_all(_NAMES_JS) if name][:50]
        found = (
            f"found {len(names)} visible {p.role} elements: {_quote_all(names)}"
            if names
            else (f"found no visible {p.role} element")
        )
        hidden = " (one matches, but it is hidden)" if await matches.count() else ""
        raise _failed(f"No visible {p.role} named {p.name!r}{hidden}; {found}.")
    return VerifyData(url=ctx.page.url, verified=f"{p.role} {p.name!r} is visible")


_NAMES_JS = """els => els.map(el => (el.getAttribute('aria-label') || el.innerText || el.value || el.title || '')
  .trim().replace(/\\s+/g, ' '))"""


# text -------------------------------------------------------------------------
class TextParams(FrameParams):
    text: Text = Field(description="A substring (case-sensitive).")


@tool(
    name="browser_verify_text_visible",
    title="Verify text visible",
    description="Check that this text is visible on the page.",
    params=TextParams,
    data=VerifyData,
    target="page",
    read_only=True,
    idempotent=True,
    group="testing",
)
async def verify_text_visible(ctx: CallContext, p: TextParams) -> VerifyData:
    frame = ctx.require_frame()
    matches = frame.get_by_text(p.text)
    if await matches.filter(visible=True).count() == 0:
        hidden = " (it is in the page, but hidden)" if await matches.count() else ""
        raise _failed(f"Text {p.text!r} is not visible{hidden}.")
    return VerifyData(url=ctx.page.url, verified=f"text {p.text!r} is visible")


# list -------------------------------------------------------------------------
class ListParams(FrameParams):
    ref: Ref
    items: list[Text] = Field(min_length=1, max_length=200, description="Texts it must show.")


@tool(
    name="browser_verify_list_visible",
    title="Verify list visible",
    description="Check that each text is visible inside the element `ref` (a list, a table...).",
    params=ListParams,
    data=VerifyData,
    target="page",
    read_only=True,
    idempotent=True,
    group="testing",
)
async def verify_list_visible(ctx: CallContext, p: ListParams) -> VerifyData:
    container = await ctx.locate(p.ref)
    missing = [item for item in p.items if await container.get_by_text(item).filter(visible=True).count() == 0]
    if missing:
        shown = _clip(await container.inner_text())
        raise _failed(f"Not visible in {p.ref}: {_quote_all(missing)}; found {shown!r}.")
    return VerifyData(url=ctx.page.url, verified=f"{len(p.items)} items visible in {p.ref}")


# value ------------------------------------------------------------------------
class ValueParams(FrameParams):
    ref: Ref
    value: Annotated[str, StringConstraints(max_length=100_000)] = Field(
        description="Text; 'checked'/'unchecked'; a select's labels, comma-separated."
    )


@tool(
    name="browser_verify_value",
    title="Verify value",
    description="Check the value of the element `ref` (a field, checkbox, select or text).",
    params=ValueParams,
    data=VerifyData,
    target="page",
    read_only=True,
    idempotent=True,
    typed_text=("value",),  # the expected value of a secret field is one: recorded as [redacted]
    group="testing",
)
async def verify_value(ctx: CallContext, p: ValueParams) -> VerifyData:
    element = await ctx.locate(p.ref)
    secret = await ctx.typing_into(element, ("value",))
    actual: Any = await element.evaluate(READ_VALUE_JS)
    if actual != p.value:
        if secret:
            raise _failed(f"The value of {p.ref} differs from the expected one (a secret field: not shown).")
        raise _failed(f"The value of {p.ref} is not {_clip(p.value)!r}; found {_clip(str(actual))!r}.")
    shown = "the expected value" if secret else repr(_clip(p.value))
    return VerifyData(url=ctx.page.url, verified=f"{p.ref} has {shown}")
