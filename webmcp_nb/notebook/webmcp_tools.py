"""The page's WebMCP tools in a notebook: ``nb.webmcp.tools()`` gives callable objects.

``tool(query="x")`` calls the page tool (`browser_webmcp_call`) and returns its envelope; a
tool's display is a form generated from its inputSchema (an ipywidget, with an HTML
description for static viewers), for teaching demos.
"""

from __future__ import annotations

import builtins
import html
import json
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from ..core.call.schema_fields import SchemaField, read_fields
from ..core.render.renderer import ERROR_COLOUR, render_html

if TYPE_CHECKING:
    from ..client import Session
    from ..core.call.envelope import Envelope

FORM_CALLER = "form"


class WebMCP:
    """``nb.webmcp``: the page's WebMCP tools (current instance and tab unless told otherwise)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def list(self, **where: Any) -> Envelope:
        """`browser_webmcp_list` (instance, page_id, frame_id)."""
        return self.session.call("browser_webmcp_list", **where)

    def tools(self, **where: Any) -> builtins.list[PageToolCall]:
        """The page's tools as callables; raises `ToolCallError` if they cannot be listed."""
        envelope = self.list(**where).raise_for_status()
        target = {"instance": envelope.instance, "page_id": envelope.operation.page_id}
        return [PageToolCall(self.session, info, target) for info in envelope.data["tools"]]  # type: ignore[index]

    def call(self, name: str, /, **input: Any) -> Envelope:
        """Call the page tool `name` with `input` as keyword arguments."""
        return self.session.call("browser_webmcp_call", name=name, input=input)


class PageToolCall:
    """One page tool: call it like a function (``tool(query="x")``); displays as a form."""

    def __init__(self, session: Session, info: dict[str, Any], target: dict[str, Any]) -> None:
        self.session = session
        self.info = info
        self.name: str = info["name"]
        self.description: str = info["description"]
        self.input_schema: dict[str, Any] = info["input_schema"]
        self._target = {"frame_id": info["frame_id"], **{k: v for k, v in target.items() if v is not None}}

    def __call__(self, **input: Any) -> Envelope:
        return self.session.call("browser_webmcp_call", name=self.name, input=input, **self._target)

    def __repr__(self) -> str:
        return f"<page tool {self.name}: {self.description}>"

    def form(self) -> widgets.VBox:
        """A form for the tool's inputs with a Call button; the result shows below it."""
        fields = [_Field(field) for field in read_fields(self.input_schema)]
        button = widgets.Button(description=f"Call {self.name}", button_style="primary")
        result = widgets.HTML()

        def call(_button: Any) -> None:
            try:
                arguments = {f.name: f.value() for f in fields if f.given()}
            except ValueError as exc:
                result.value = f"<span style='color:{ERROR_COLOUR}'>{html.escape(str(exc))}</span>"
                return
            future = self.session.submit(
                "browser_webmcp_call", {"name": self.name, "input": arguments, **self._target}, caller=FORM_CALLER
            )
            future.add_done_callback(lambda done: setattr(result, "value", render_html(done.result())))

        button.on_click(call)
        header = widgets.HTML(_header_html(self.info))
        return widgets.VBox([header, *(f.widget for f in fields), button, result])

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.form()._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/plain"] = f"{self.name}: {self.description}\ninput: {json.dumps(self.input_schema)}"
        bundle["text/html"] = _header_html(self.info)
        return bundle


class _Field:
    """One input of the form, chosen from its schema."""

    def __init__(self, field: SchemaField) -> None:
        self.field = field
        self.name, self.required = field.name, field.required
        label = field.name + (" *" if field.required else "")
        tip = field.description
        style = {"description_width": "initial"}
        if field.choices is not None:
            options = list(field.choices) if field.required else [None, *field.choices]
            self.widget: widgets.Widget = widgets.Dropdown(options=options, description=label, tooltip=tip, style=style)
        elif field.kind == "boolean":
            self.widget = widgets.Checkbox(value=bool(self._default(False)), description=label, indent=False)
        elif field.kind in ("integer", "number") and field.required:
            cls = widgets.IntText if field.kind == "integer" else widgets.FloatText
            start = field.minimum if field.minimum is not None else 0
            self.widget = cls(value=self._default(start), description=label, style=style)
        else:
            hint = tip if self._is_text else "JSON"
            self.widget = widgets.Text(description=label, placeholder=hint, tooltip=tip, style=style)

    @property
    def _is_text(self) -> bool:
        """Whether the typed text is the value itself (else it is read as JSON)."""
        return self.field.kind == "string" or not self.field.types

    def _default(self, fallback: Any) -> Any:
        return self.field.default if self.field.has_default and self.field.default is not None else fallback

    def given(self) -> bool:
        """Whether to send this input: required ones always, others once filled in."""
        if self.required:
            return True
        if isinstance(self.widget, widgets.Checkbox):
            return bool(self.widget.value != self._default(False))
        return self.widget.value not in ("", None)

    def value(self) -> Any:
        value = self.widget.value
        if isinstance(self.widget, widgets.Text) and not self._is_text:
            try:
                return json.loads(value)
            except ValueError:
                raise ValueError(f"{self.name}: not valid JSON: {value!r}") from None
        return value


def _header_html(info: dict[str, Any]) -> str:
    title = f" — {info['title']}" if info.get("title") else ""
    hints = [key for key, value in (info.get("annotations") or {}).items() if value is True]
    hint_text = f" <span style='opacity:.7'>({html.escape(', '.join(hints))})</span>" if hints else ""
    return (
        f"<div><b><code>{html.escape(info['name'])}</code></b>{html.escape(title)}{hint_text}"
        f"<div>{html.escape(info.get('description', ''))}</div></div>"
    )
