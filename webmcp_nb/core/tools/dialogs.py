"""Resolving a JavaScript dialog (alert, confirm, prompt, beforeunload)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field, StringConstraints

from ..call.errors import ToolFailure
from ..call.registry import tool
from .models import ActionData, PageParams

if TYPE_CHECKING:
    from playwright.async_api import Dialog

    from ..call.context import CallContext


class DialogParams(PageParams):
    accept: bool = Field(description="OK or Cancel.")
    prompt_text: Annotated[str, StringConstraints(max_length=100_000)] | None = Field(
        None, description="A prompt()'s answer."
    )


class DialogData(ActionData):
    dialog_type: str = ""
    message: str = ""
    accepted: bool = False


@tool(
    name="browser_handle_dialog",
    title="Handle dialog",
    description="Accept or dismiss the page's dialog (also while the action that opened it waits).",
    params=DialogParams,
    data=DialogData,
    target="page",
    resolves_modal=True,
)
async def handle_dialog(ctx: CallContext, p: DialogParams) -> DialogData:
    page_state = ctx.require_page()
    modal = page_state.require_modal("dialog", "No dialog is open on this page")
    if p.prompt_text is not None and (modal.handle.type != "prompt" or not p.accept):  # type: ignore[union-attr]
        raise ToolFailure("invalid_params", "prompt_text applies only when accepting a prompt() dialog.", started=False)
    dialog: Dialog = modal.handle  # type: ignore[assignment]
    page_state.clear_modal()
    if p.accept:
        # OK on a prompt() answers with what its field holds: the default value unless told otherwise.
        answer = p.prompt_text if p.prompt_text is not None else dialog.default_value
        await dialog.accept(answer) if dialog.type == "prompt" else await dialog.accept()
    else:
        await dialog.dismiss()
    return DialogData(
        url=ctx.page.url,
        dialog_type=dialog.type,
        message=dialog.message,
        accepted=p.accept,
        modal_state=page_state.modal.describe() if page_state.modal else None,
    )
