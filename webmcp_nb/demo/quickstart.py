"""A headless tour of the core against the bundled demo site; prints each envelope.

Run with ``python -m webmcp_nb.demo.quickstart`` (what ``make demo`` does).
Exits non-zero if any step fails.
"""

from __future__ import annotations

import re
import sys

from webmcp_nb import Envelope, Session
from webmcp_nb.demo import DemoServer


def show(step: str, envelope: Envelope) -> Envelope:
    op = envelope.operation
    print(f"\n== {step}: {envelope.status} ({op.tool}, {op.duration_ms:.0f} ms)")
    if not envelope.ok:
        print(f"   {envelope.error_type}: {envelope.message}")
        return envelope
    for key, value in (envelope.data or {}).items():
        if isinstance(value, bytes):
            value = f"<{len(value)} bytes>"
        text = str(value)
        print(f"   {key}: {text if len(text) < 400 else text[:400] + ' ...'}")
    return envelope


def ref(snapshot: str, fragment: str) -> str:
    for line in snapshot.splitlines():
        if fragment in line and (match := re.search(r"\[ref=(\w+)\]", line)):
            return match.group(1)
    raise LookupError(fragment)


def main() -> int:
    with DemoServer() as demo, Session() as session:
        steps = [show("navigate to the demo shop", session.navigate(demo.url))]
        snap = show("snapshot", session.snapshot())
        steps.append(snap)
        steps.append(show("click 'Add Banana' by ref", session.click(ref(snap.data["snapshot"], "Add Banana"))))
        steps.append(show("read the cart", session.wait_for(text="Cart: 1 item")))
        steps.append(show("open the form", session.navigate(demo.url_for("form.html"))))
        form = session.snapshot().data["snapshot"]
        steps.append(
            show(
                "fill the form",
                session.fill_form(
                    [
                        {"ref": ref(form, 'textbox "Name"'), "type": "textbox", "value": "Ada Lovelace"},
                        {"ref": ref(form, 'checkbox "Subscribe"'), "type": "checkbox", "value": True},
                        {"ref": ref(form, 'combobox "Country"'), "type": "combobox", "value": "Japan"},
                    ]
                ),
            )
        )
        steps.append(show("submit", session.click(ref(form, 'button "Submit"'))))
        steps.append(show("screenshot", session.screenshot()))
        steps.append(show("a mistake, reported as an envelope", session.click("e99999")))
        steps.append(show("health", session.health()))
    failures = [envelope for envelope in steps[:-2] + steps[-1:] if not envelope.ok]
    print(f"\n{len(steps) - len(failures)} of {len(steps)} steps as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
