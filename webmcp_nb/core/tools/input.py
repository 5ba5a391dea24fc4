"""Acting on elements by ref: click, type, fill forms, select, hover, keys, drag, upload."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from ..browsers.observe import Observe, ObserveField
from ..browsers.pages import COUNTS_FILE_CHOOSER
from ..call.errors import ToolFailure
from ..call.registry import tool
from ..call.util import first_lines
from ..evidence.failure import actionability
from ..guard.grants import profiles_dir
from .models import ActionData, ModalState, PageParams, Params, Ref
from .storage import states_dir

if TYPE_CHECKING:
    from playwright.async_api import FileChooser, Locator

    from ..call.context import CallContext
    from ..call.envelope import ErrorType

Modifier = Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]
Text = Annotated[str, StringConstraints(max_length=100_000)]


# Playwright refuses these before it touches the element, so nothing was done:
# (fragment of its message, error type, what to tell the caller).
_REFUSALS: tuple[tuple[str, ErrorType, str], ...] = (
    ("Element is not an <input>", "element_not_found", "the element is not an editable field"),
    ("cannot be filled", "element_not_found", "the element is an input that does not take text"),
    ("Not a checkbox or radio button", "element_not_found", "the element is not a checkbox or radio button"),
    ("Cannot uncheck radio button", "invalid_params", "a radio button cannot be unchecked; check another one"),
    ("Cannot type text into input[type=number]", "invalid_params", "the field accepts numbers only"),
    ("Malformed value", "invalid_params", "the value does not match the field's format"),
)

# How long a click on a file input waits for its file chooser to be reported.
FILE_CHOOSER_GRACE_S = 2.0


async def perform(ctx: CallContext, action: Awaitable[object], what: str, *, secret: bool = False) -> None:
    """Run a Playwright action, map its timeout and refusals, then wait for the page to settle.

    On a `secret` field Playwright's own account is left out: it previews the element, with
    its attributes."""
    from playwright.async_api import Error, TimeoutError

    try:
        await action
    except TimeoutError as exc:
        said = (
            " (a secret field: Playwright's details are not shown)"
            if secret
            else (f" Playwright said: {first_lines(exc.message, 6)}")
        )
        raise ToolFailure(
            "wait_timeout",
            f"{what} timed out after {ctx.engine.limits.action_timeout_s:g} s waiting for the element to "
            f"become actionable (visible, enabled, not covered).{said}",
            context=actionability(exc.message, secret=secret),
        ) from None
    except Error as exc:
        for fragment, error_type, reason in _REFUSALS:
            if fragment in exc.message:
                message = f"{what} was refused: {reason}. Nothing was changed."
                raise ToolFailure(error_type, message, started=False) from None
        raise
    await ctx.settle()


async def verify_value(locator: Locator, expected: str, ref: str, *, secret: bool = False) -> None:
    """Fail loudly if the field does not hold what was typed (e.g. a maxlength clipped it);
    about a `secret` field, say so without its content or length."""
    from playwright.async_api import Error

    try:
        actual = await locator.input_value(timeout=1000)
    except Error:
        return  # not a form field (contenteditable): nothing to compare
    if actual != expected and secret:
        raise ToolFailure(
            "verification_failed",
            f"After typing into {ref}, a secret field, it does not hold the text requested; the field may "
            "limit or transform its input (its content is not shown).",
        )
    if actual != expected:
        raise ToolFailure(
            "verification_failed",
            f"After typing into {ref}, the field holds {actual!r} ({len(actual)} characters), not the "
            f"{len(expected)} characters requested; the field may limit or transform its input.",
        )


class ClickParams(PageParams):
    ref: Ref
    button: Literal["left", "right", "middle"] = "left"
    double: bool = False
    modifiers: list[Modifier] = Field(default_factory=list, max_length=5, description="Keys held down.")
    observe: Observe | None = ObserveField


@tool(
    name="browser_click",
    title="Click",
    description="Click an element; waits for a navigation it starts (a dialog it opens: `modal_state`).",
    params=ClickParams,
    data=ActionData,
    target="page",
)
async def click(ctx: CallContext, p: ClickParams) -> ActionData:
    # Chromium reports a file chooser only after the click has returned, so a click on a
    # file input waits for it; whether it is one is asked with the ref's existence check.

    def clicking(locator: Locator) -> Awaitable[None]:
        press = locator.dblclick if p.double else locator.click
        action = press(button=p.button, modifiers=p.modifiers or None, timeout=ctx.action_timeout_ms)
        return perform(ctx, action, f"Clicking {p.ref}")

    _, counted = await ctx.act(p.ref, clicking, probe=COUNTS_FILE_CHOOSER)
    if p.button == "left" and counted > 1:
        await _await_modal(ctx, FILE_CHOOSER_GRACE_S)
    return ActionData(url=ctx.page.url)


async def _await_modal(ctx: CallContext, seconds: float) -> None:
    page_state = ctx.require_page()
    try:
        await asyncio.wait_for(page_state.modal_opened.wait(), timeout=min(seconds, ctx.remaining_s()))
    except TimeoutError:
        pass  # the page cancelled the click's default action: no chooser


class TypeParams(PageParams):
    ref: Ref
    text: Text
    submit: bool = Field(False, description="Press Enter after.")
    slowly: bool = Field(False, description="Key by key.")
    observe: Observe | None = ObserveField


@tool(
    name="browser_type",
    title="Type text",
    description="Replace an editable element's text (checked after).",
    params=TypeParams,
    data=ActionData,
    target="page",
    typed_text=("text",),
)
async def type_text(ctx: CallContext, p: TypeParams) -> ActionData:
    locator = await ctx.locate(p.ref)
    secret = await ctx.typing_into(locator, ("text",))
    timeout = ctx.action_timeout_ms
    if p.slowly:
        await perform(ctx, locator.fill("", timeout=timeout), f"Clearing {p.ref}", secret=secret)
        typing = locator.press_sequentially(p.text, timeout=timeout)
    else:
        typing = locator.fill(p.text, timeout=timeout)
    await perform(ctx, typing, f"Typing into {p.ref}", secret=secret)
    await verify_value(locator, p.text, p.ref, secret=secret)
    if p.submit:
        await perform(ctx, locator.press("Enter", timeout=timeout), f"Pressing Enter in {p.ref}", secret=secret)
    return ActionData(url=ctx.page.url)


class FormField(Params):
    ref: Ref
    type: Literal["textbox", "checkbox", "radio", "combobox", "slider"]
    value: Text | bool = Field(description="Text; checkbox/radio: true/false.")
    name: Annotated[str, StringConstraints(max_length=200)] | None = Field(None, description="For the log.")

    @model_validator(mode="after")
    def _value_matches_type(self) -> FormField:
        wants_bool = self.type in ("checkbox", "radio")
        if wants_bool != isinstance(self.value, bool):
            kind = "true or false" if wants_bool else "a string"
            raise ValueError(f"a {self.type} field takes {kind} as its value")
        return self


class FillFormParams(PageParams):
    fields: list[FormField] = Field(min_length=1, max_length=100)
    observe: Observe | None = ObserveField


class FillFormData(ActionData):
    filled: int = 0


@tool(
    name="browser_fill_form",
    title="Fill form",
    description="Fill several fields; every ref is checked before any changes.",
    params=FillFormParams,
    data=FillFormData,
    target="page",
    typed_text=("fields.*.value",),
)
async def fill_form(ctx: CallContext, p: FillFormParams) -> FillFormData:
    locators = [await ctx.locate(field.ref) for field in p.fields]
    for index, (field, locator) in enumerate(zip(p.fields, locators, strict=True)):
        try:
            await _fill_one(ctx, field, locator, ("fields", index, "value"))
        except ToolFailure as failure:
            failure.started = failure.started or index > 0  # earlier fields were already set
            raise
    return FillFormData(url=ctx.page.url, filled=len(p.fields))


async def _fill_one(ctx: CallContext, field: FormField, locator: Locator, path: tuple[str | int, ...]) -> None:
    what = f"Setting {field.name or field.ref}"
    if isinstance(field.value, bool):
        await perform(ctx, locator.set_checked(field.value, timeout=ctx.action_timeout_ms), what)
        return
    secret = await ctx.typing_into(locator, path)
    if field.type == "combobox":
        await _select(ctx, locator, field.ref, [field.value])
    else:
        await perform(ctx, locator.fill(field.value, timeout=ctx.action_timeout_ms), what, secret=secret)
        await verify_value(locator, field.value, field.ref, secret=secret)


class SelectParams(PageParams):
    ref: Ref
    values: list[Annotated[str, StringConstraints(max_length=10_000)]] = Field(
        min_length=1, max_length=1000, description="Values or labels."
    )
    observe: Observe | None = ObserveField


class SelectData(ActionData):
    selected: list[str] = Field(default_factory=list, description="The values now selected.")


_OPTIONS_JS = """el => el instanceof HTMLSelectElement
  ? {multiple: el.multiple, options: [...el.options].map(o => ({value: o.value, label: o.label}))}
  : {tag: el.tagName.toLowerCase()}"""


async def _select(ctx: CallContext, locator: Locator, ref: str, wanted: list[str]) -> list[str]:
    info = await locator.evaluate(_OPTIONS_JS)
    if "options" not in info:
        raise ToolFailure("element_not_found", f"{ref} is a <{info['tag']}>, not a <select>.", started=False)
    by_value = {option["value"]: option["value"] for option in info["options"]}
    by_label = {option["label"]: option["value"] for option in info["options"]}
    missing = [value for value in wanted if value not in by_value and value not in by_label]
    if missing:
        offered = ", ".join(f"{o['value']!r} ({o['label']})" for o in info["options"]) or "none"
        raise ToolFailure(
            "element_not_found",
            f"No option {', '.join(map(repr, missing))} in {ref}; options: {offered}.",
            started=False,
        )
    if len(wanted) > 1 and not info["multiple"]:
        raise ToolFailure("invalid_params", f"{ref} accepts one value; {len(wanted)} were given.", started=False)
    values = [by_value[value] if value in by_value else by_label[value] for value in wanted]
    await perform(ctx, locator.select_option(value=values, timeout=ctx.action_timeout_ms), f"Selecting in {ref}")
    return values


@tool(
    name="browser_select_option",
    title="Select option",
    description="Select options of a <select>.",
    params=SelectParams,
    data=SelectData,
    target="page",
    idempotent=True,
)
async def select_option(ctx: CallContext, p: SelectParams) -> SelectData:
    locator = await ctx.locate(p.ref)
    selected = await _select(ctx, locator, p.ref, p.values)
    return SelectData(url=ctx.page.url, selected=selected)


class RefParams(PageParams):
    ref: Ref
    observe: Observe | None = ObserveField


@tool(
    name="browser_hover",
    title="Hover",
    description="Move the mouse over an element.",
    params=RefParams,
    data=ActionData,
    target="page",
    idempotent=True,
)
async def hover(ctx: CallContext, p: RefParams) -> ActionData:
    await ctx.act(
        p.ref, lambda locator: perform(ctx, locator.hover(timeout=ctx.action_timeout_ms), f"Hovering {p.ref}")
    )
    return ActionData(url=ctx.page.url)


class KeyParams(PageParams):
    key: Annotated[str, StringConstraints(min_length=1, max_length=64)] = Field(
        description="'Enter', 'ArrowDown', 'a', 'Control+A'..."
    )
    observe: Observe | None = ObserveField


@tool(
    name="browser_press_key",
    title="Press key",
    description="Press a key or chord in the focused element.",
    params=KeyParams,
    data=ActionData,
    target="page",
)
async def press_key(ctx: CallContext, p: KeyParams) -> ActionData:
    from playwright.async_api import Error

    try:
        await ctx.page.keyboard.press(p.key)
    except Error as exc:
        unknown = re.search(r'Unknown key: "(.*)"', exc.message)
        if unknown is None:
            raise
        # Playwright presses a chord's keys in order and stops at the unknown one, leaving
        # the keys before it held down (they would modify every later action): release them.
        tokens = chord_keys(p.key)
        held = tokens[: tokens.index(unknown.group(1))] if unknown.group(1) in tokens else tokens[:-1]
        for key in reversed(list(dict.fromkeys(held))):
            await ctx.page.keyboard.up(key)
        message = f"Unknown key {unknown.group(1)!r} in {p.key!r}."
        if held:
            message += f" {'+'.join(held)} had been pressed and was released."
        raise ToolFailure("invalid_params", message, started=bool(held)) from None
    await ctx.settle()
    return ActionData(url=ctx.page.url)


def chord_keys(chord: str) -> list[str]:
    """The keys of a chord as Playwright reads it: '+' separates keys, except as a key itself."""
    keys: list[str] = []
    current = ""
    for char in chord:
        if char == "+" and current:
            keys.append(current)
            current = ""
        else:
            current += char
    keys.append(current)
    return keys


class DragParams(PageParams):
    source_ref: Ref
    target_ref: Ref
    observe: Observe | None = ObserveField


@tool(
    name="browser_drag",
    title="Drag and drop",
    description="Drag one element onto another.",
    params=DragParams,
    data=ActionData,
    target="page",
)
async def drag(ctx: CallContext, p: DragParams) -> ActionData:
    source = await ctx.locate(p.source_ref)
    target = await ctx.locate(p.target_ref)
    await perform(ctx, source.drag_to(target, timeout=ctx.action_timeout_ms), f"Dragging {p.source_ref}")
    return ActionData(url=ctx.page.url)


class UploadParams(PageParams):
    paths: list[Annotated[str, StringConstraints(min_length=1, max_length=4096)]] = Field(
        max_length=100,
        description="Files (agents: under the upload roots, default the artifacts directory); [] cancels.",
    )


def _upload_paths(ctx: CallContext, paths: list[str]) -> list[Path]:
    """The real files `paths` name, symlinks resolved; for an agent, only under its upload roots."""
    if ctx.grant is not None:
        profiles = profiles_dir(ctx.engine.artifacts_dir).resolve()
        states = states_dir(ctx.engine.artifacts_dir).resolve()
        real = [ctx.grant.upload_path(path) for path in paths]
        kept = [str(path) for path in real if path.is_relative_to(profiles) or path.is_relative_to(states)]
        if kept:
            raise ToolFailure(
                "invalid_params",
                f"{', '.join(kept)}: in the session's browser profiles or states directory ({profiles}, {states}: "
                "cookies and logins), which agents never upload from.",
                started=False,
            )
        return real
    missing = [path for path in paths if not Path(path).is_file()]
    if missing:
        raise ToolFailure("invalid_params", f"Not a readable file: {', '.join(missing)}", started=False)
    return [Path(path).resolve() for path in paths]


class UploadData(ActionData):
    files: list[str] = Field(default_factory=list)


@tool(
    name="browser_file_upload",
    title="Upload files",
    description="Answer an open file chooser with local files.",
    params=UploadParams,
    data=UploadData,
    target="page",
    group="files",
    destructive=True,  # sends local files to the site
    resolves_modal=True,
    check=lambda ctx, p: _upload_paths(ctx, p.paths),
)
async def file_upload(ctx: CallContext, p: UploadParams) -> UploadData:
    page_state = ctx.require_page()
    modal = page_state.require_modal("file_chooser", "No file chooser is open; click the file input first")
    paths = _upload_paths(ctx, p.paths)
    chooser: FileChooser = modal.handle  # type: ignore[assignment]
    if len(paths) > 1 and not chooser.is_multiple():
        raise ToolFailure(
            "invalid_params", f"The file chooser takes one file; {len(p.paths)} were given.", started=False
        )
    page_state.clear_modal()
    # The page may answer the new files with a dialog (an alert in its change handler), which
    # holds set_files until it is resolved: the engine-style race reports that dialog instead.
    setting, finished = await page_state.run_until_modal(chooser.set_files(paths, timeout=ctx.action_timeout_ms))
    if finished:
        setting.result()
    data = UploadData(url=ctx.page.url, files=[str(path) for path in paths])
    if page_state.modal is not None:
        data.modal_state = ModalState.model_validate(page_state.modal.describe())
    return data
