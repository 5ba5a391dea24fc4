"""Guided exercises in a notebook: checks that answer a student in plain words.

A check never raises: it returns a `Check`, shown as one line that says whether the task is done
and, if not, what to look at. `ShopExercise` holds the checks and solutions of
``notebooks/04-teaching.ipynb`` (the bundled demo shop); `solution` shows and runs a solution only
when the teacher's flag says so.
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec

from ..core.browsers.aria import REF, target_of
from ..core.render.renderer import SUCCESS_COLOUR, WARN_COLOUR

if TYPE_CHECKING:
    from ..client import Session

P = ParamSpec("P")


@dataclass(frozen=True)
class Check:
    """The answer of a check: `passed`, and a message for the student (with what to look at)."""

    task: str
    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return f"{'Done' if self.passed else 'Not yet'}: {self.task}. {self.message}"

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        colour, mark = (SUCCESS_COLOUR, "✔ Done") if self.passed else (WARN_COLOUR, "✘ Not yet")
        return (
            f"<div class='webmcp-nb-check' style='border-left:4px solid {colour};padding:4px 8px'>"
            f"<b style='color:{colour}'>{mark}</b>: {html.escape(self.task)}. {html.escape(self.message)}</div>"
        )


def check(task: str) -> Callable[[Callable[P, str]], Callable[P, Check]]:
    """Decorator: the function returns the success message or raises `NotYet(hint)`; any other
    error becomes a failed check that says the check itself could not run (never a traceback)."""

    def wrap(function: Callable[P, str]) -> Callable[P, Check]:
        @functools.wraps(function)
        def checked(*args: P.args, **kwargs: P.kwargs) -> Check:
            try:
                return Check(task, True, function(*args, **kwargs))
            except NotYet as hint:
                return Check(task, False, str(hint))
            except Exception as exc:  # noqa: BLE001 - a student sees a sentence, not a traceback
                return Check(
                    task,
                    False,
                    f"The check could not look at the page ({type(exc).__name__}: {exc}). "
                    "Run the cells above again from the top, then this one.",
                )

        return checked

    return wrap


class NotYet(Exception):
    """Raised inside a `check` function: the task is not done; the message says what to look at."""


def solution(code: str, namespace: dict[str, Any], *, show: bool) -> None:
    """Show and run `code` (Python, with ``%browser`` lines in IPython) in `namespace` when `show`
    (the teacher's flag); else say it is hidden."""
    if not show:
        print("The solution is hidden. (Teachers: set SHOW_SOLUTIONS = True at the top to show and run it.)")
        return
    print("Solution:\n\n" + "\n".join(f"    {line}" for line in code.strip().splitlines()) + "\n")
    shell = _ipython()
    source = shell.transform_cell(code) if shell is not None else code  # %browser lines, as in a cell
    exec(compile(source, "<solution>", "exec"), namespace)  # the teacher's own code


def _ipython() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


CALLER = "check"  # how checks appear in the call log


def page_value(session: Session, expression: str) -> Any:
    """Evaluate `expression` in the current page (a check looking without touching)."""
    envelope = session.call_as(CALLER, "browser_evaluate", {"expression": expression})
    if not envelope.ok:
        raise NotYet(f"The page could not be read ({envelope.error_type}: {envelope.message}).")
    return (envelope.data or {})["result"]


def require_page(session: Session, path: str, how: str) -> None:
    """The current page must be `path` of the site (e.g. ``form.html``); `how` says how to go there."""
    url = str(page_value(session, "location.href"))
    if (url.split("?")[0].split("#")[0].rsplit("/", 1)[-1] or "index.html") != path:
        raise NotYet(f"The browser is on {url}, not on {path}. Go there first: {how}")


# -- the demo shop exercise (notebooks/04-teaching.ipynb) ---------------------------------------
SOLUTIONS = {
    "find_product": """
%browser navigate {demo.url}
shop = %browser snapshot
cherry_ref = find_ref(shop, "Add Cherry", role="button")
""",
    "fill_form": """
%browser navigate {demo.url_for("form.html")}
form = %browser snapshot
nb.fill_form([
    {"ref": find_ref(form, "Name", role="textbox"), "type": "textbox", "value": "Ada Lovelace"},
    {"ref": find_ref(form, "Email", role="textbox"), "type": "textbox", "value": "ada@example.org"},
    {"ref": find_ref(form, "Country", role="combobox"), "type": "combobox", "value": "Japan"},
])
%browser click {find_ref(form, "Submit", role="button")}
""",
    "read_cart": """
%browser navigate {demo.url}
shop = %browser snapshot
%browser click {find_ref(shop, "Add Apple", role="button")}
%browser click {find_ref(shop, "Add Fig", role="button")}
shop = %browser snapshot
cart_line = next(line for line in shop.data["snapshot"].splitlines() if "Cart:" in line)
cart_text = cart_line.split(": ", 1)[1].strip('"')   # the line reads: - status [ref=...]: "Cart: ..."
""",
    "page_tool": """
%browser navigate {demo.url_for("webmcp.html")}
%browser webmcp_call add_to_cart --input '{"item": "Grape", "quantity": 3}'
""",
}
FORM_ANSWER = {"name": "Ada Lovelace", "email": "ada@example.org", "country": "jp"}
GO_TO = {  # how the notebook goes to each page of the demo site
    "index.html": "%browser navigate {demo.url}",
    "form.html": '%browser navigate {demo.url_for("form.html")}',
    "webmcp.html": '%browser navigate {demo.url_for("webmcp.html")}',
}


class ShopExercise:
    """The checks and solutions of the demo shop exercise, on `session`."""

    def __init__(self, session: Session, *, show_solutions: bool = False) -> None:
        self.session = session
        self.show_solutions = show_solutions

    def _on(self, path: str) -> None:
        require_page(self.session, path, GO_TO[path])

    def solution(self, task: str, namespace: dict[str, Any]) -> None:
        solution(SOLUTIONS[task], namespace, show=self.show_solutions)

    @check("Task 1, find a product")
    def find_product(self, ref: Any) -> str:
        if ref is None:
            raise NotYet(
                "cherry_ref is still None. Take a snapshot of the shop (%browser snapshot) and find the "
                'line `button "Add Cherry" [ref=...]`; the ref is the part after ref=.'
            )
        if not isinstance(ref, str) or not REF.fullmatch(f"[ref={ref}]"):
            raise NotYet(f"cherry_ref should be a ref such as 'e12' (text), but it is {ref!r}.")
        snapshots = [
            str((record.envelope.data or {})["snapshot"])
            for record in self.session.history
            if record.tool == "browser_snapshot" and record.envelope.ok and (record.envelope.data or {}).get("snapshot")
        ]
        if not snapshots:
            raise NotYet("There is no snapshot yet to find refs in: take one with %browser snapshot.")
        target = target_of(snapshots[-1], ref)
        if target is None:
            raise NotYet(f"{ref} is not in your latest snapshot. Use a ref from the snapshot you just took.")
        if (target.role, target.name) != ("button", "Add Cherry"):
            raise NotYet(
                f'{ref} is the {target.role} "{target.name}", not the button "Add Cherry". Look again '
                "at the snapshot: each line is one element, its role first, then its name."
            )
        return f'{ref} is the button "Add Cherry". You can click it with %browser click {ref}.'

    @check("Task 2, fill and send the form")
    def fill_form(self) -> str:
        self._on("form.html")
        sent = page_value(self.session, "document.getElementById('result').textContent")
        if not sent:
            raise NotYet(
                "The form has not been sent yet: the 'Submitted data' box under it is empty. Fill the "
                "fields, then click the Submit button."
            )
        values = json.loads(sent)
        for field, wanted in FORM_ANSWER.items():
            if values.get(field) != wanted:
                raise NotYet(
                    f"The form was sent with {field} = {values.get(field)!r}; the task asks for {wanted!r}. "
                    "Fix that field and send the form again."
                )
        return "The form was sent with the name, email and country the task asked for."

    @check("Task 3, read the cart")
    def read_cart(self, cart_text: Any) -> str:
        self._on("index.html")
        shown = page_value(self.session, "document.getElementById('cart').textContent")
        count = int(str(shown).split()[1])
        if count < 2:
            raise NotYet(f"The page says {shown!r}: add at least two products first (click two Add buttons).")
        if cart_text is None:
            raise NotYet(
                "cart_text is still None. Take a new snapshot and copy the text of the status line "
                "that starts with 'Cart:'."
            )
        if cart_text != shown:
            raise NotYet(
                f"cart_text is {cart_text!r}, but the page says {shown!r}. Did you read it from a snapshot "
                "taken after the last click?"
            )
        return f"cart_text matches the page: {shown!r}."

    @check("Task 4, use a page tool")
    def page_tool(self) -> str:
        self._on("webmcp.html")
        calls = [
            record
            for record in self.session.history
            if record.tool == "browser_webmcp_call" and record.args.get("name") == "add_to_cart"
        ]
        if not calls:
            raise NotYet(
                "No call of the page tool add_to_cart yet. List the page's tools with %browser webmcp, "
                "then call it with %browser webmcp_call add_to_cart --input '{...}'."
            )
        last = calls[-1]
        if not last.envelope.ok:
            raise NotYet(
                f"The last add_to_cart call failed ({last.envelope.error_type}: {last.envelope.message}). "
                "Read the message: it says which input was wrong."
            )
        shown = page_value(self.session, "document.getElementById('webmcp-cart').textContent")
        if last.args.get("input") != {"item": "Grape", "quantity": 3}:
            raise NotYet(
                f"add_to_cart was called with {json.dumps(last.args.get('input'))}; the task asks for "
                '3 grapes: --input \'{"item": "Grape", "quantity": 3}\'.'
            )
        return f"The page tool added 3 grapes; the page now says {shown!r}."
