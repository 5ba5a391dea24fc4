"""Shared parameter and data models for tool declarations."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

InstanceName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
Identifier = Annotated[str, StringConstraints(min_length=1, max_length=64)]
REF_PATTERN = r"^(f\d{1,6})?e\d{1,9}$"
REF_DESCRIPTION = "An element ref from the latest browser_snapshot ('e12', 'f3e7')."
Ref = Annotated[str, StringConstraints(pattern=REF_PATTERN), Field(description=REF_DESCRIPTION)]
Url = Annotated[str, StringConstraints(min_length=1, max_length=8192)]

_SCHEME = re.compile(r"^(https?|file|about|data|blob|view-source|chrome|devtools|ftp|wss?):", re.IGNORECASE)
_LOCAL_HOST = re.compile(r"^(localhost|127\.|\[::1\])", re.IGNORECASE)


def _require_scheme(url: str) -> str:
    if not _SCHEME.match(url):
        example = url if len(url) <= 60 else url[:57] + "..."
        scheme = "http" if _LOCAL_HOST.match(url) else "https"
        raise ValueError(f"the URL has no known scheme; write it in full, e.g. '{scheme}://{example}'")
    return url


# A URL to load: checked for a scheme wherever it is accepted (navigate, tabs new),
# so a bad one is refused before anything is done.
AbsoluteUrl = Annotated[Url, AfterValidator(_require_scheme)]


class Params(BaseModel):
    """Strict input: no unknown fields, no type coercion."""

    model_config = ConfigDict(extra="forbid", strict=True)


class InstanceParams(Params):
    instance: InstanceName | None = Field(
        None,
        description="The browser instance; default: the current one ('default', created on first use).",
    )


class PageParams(InstanceParams):
    page_id: Identifier | None = Field(None, description="The tab (from browser_tabs); default: the current one.")


class FrameParams(PageParams):
    frame_id: Identifier | None = Field(None, description="The frame (from browser_frames); default: the main one.")


class Data(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModalState(Data):
    kind: Literal["dialog", "file_chooser"]
    resolved_by: str = Field(description="The tool that resolves this modal.")
    dialog_type: str | None = None
    message: str | None = None
    default_value: str | None = None
    multiple: bool | None = None


class ActionData(Data):
    """What a page action returns. If a dialog or file chooser opened during the
    action, `modal_state` describes it and the page waits for it to be resolved."""

    url: str
    modal_state: ModalState | None = None
    observation: dict[str, Any] | None = Field(
        None, description="What the call's `observe` condition saw (kind, elapsed_ms and its details)."
    )
