"""Secret fields in snapshots of big pages: no secret value appears whatever the page's size, and the
secret-field pass asks a fixed number of questions per frame, not one per field.

The page is built in the demo's blank form page: rows of a link, a button and a filled text field,
with password fields and one-time-code fields (text inputs, a number input, a text area) among
them, in an open shadow root and in an iframe of another origin, holding values that Playwright
writes quoted or with its whitespace folded.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.async_api import Frame, Locator

from tests.helpers import ok
from webmcp_nb import Session
from webmcp_nb.demo import DemoServer

pytestmark = pytest.mark.playwright_sensitive  # see tests/test_compat_scope.py

ROWS = 1500
# Values Playwright writes quoted (": ", a leading dash, digits, "#") or folded (runs of spaces).
SECRETS = ["hunter2-Sesame", "a: b #c", "-dash-secret", "424242", "  spaced   out  ", 'quote "me"']

BUILD = """([rows, secrets]) => {
  const table = document.createElement("table");
  const secretAt = new Map(secrets.map((value, index) => [Math.floor((index + 1) * rows / (secrets.length + 1)), value]));
  for (let i = 0; i < rows; i++) {
    const row = table.insertRow();
    row.insertCell().innerHTML = `<a href="#r${i}">Row ${i}</a>`;
    row.insertCell().innerHTML = `<button>Edit ${i}</button>`;
    const field = document.createElement("input");
    field.setAttribute("aria-label", `Note ${i}`);
    if (secretAt.has(i)) {
      const kind = [...secretAt.keys()].indexOf(i) % 3;
      if (kind === 0) field.type = "password";
      else field.setAttribute("autocomplete", kind === 1 ? "one-time-code" : "off ONE-TIME-CODE");
      field.value = secretAt.get(i);
    } else {
      field.value = `v${i}`;
    }
    row.insertCell().append(field);
  }
  document.body.append(table);
  const code = document.createElement("input");
  code.type = "number";
  code.autocomplete = "one-time-code";
  code.setAttribute("aria-label", "Number code");
  code.value = "987654";
  const host = document.createElement("div");
  host.attachShadow({mode: "open"}).innerHTML =
    '<textarea autocomplete="one-time-code" aria-label="Shadow code"></textarea>' +
    '<input type="password" aria-label="Shadow password">';
  host.shadowRoot.querySelector("textarea").value = "line one\\n  line two";
  host.shadowRoot.querySelector("input").value = "shadow-Sesame";
  document.body.append(code, host);
}"""

ALL_SECRETS = [*SECRETS, "987654", "line one", "line two", "shadow-Sesame", "framed-Sesame"]


def folded(value: str) -> str:
    return " ".join(value.split())


@pytest.fixture
def questions(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times the page is asked something, by kind: frame evaluations and per-field checks."""
    counts = {"frame": 0, "field": 0}

    def counting(cls: Any, name: str, kind: str) -> None:
        original = getattr(cls, name)

        async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
            counts[kind] += 1
            return await original(self, *args, **kwargs)

        monkeypatch.setattr(cls, name, counted)

    counting(Frame, "evaluate", "frame")
    counting(Frame, "evaluate_handle", "frame")
    counting(Locator, "evaluate", "field")
    return counts


def build(session: Session, demo: DemoServer, rows: int = ROWS) -> None:
    ok(session.navigate(demo.url_for("form.html")))
    ok(session.evaluate(f"() => ({BUILD})({json.dumps([rows, SECRETS])})"))
    other_origin = demo.url_for("form.html").replace("://127.0.0.1:", "://localhost:")
    ok(
        session.evaluate(f"""() => new Promise((done) => {{
        const frame = document.createElement("iframe");
        frame.onload = done;
        frame.src = {other_origin!r};
        document.body.append(frame);
    }})""")
    )
    inner = next(f["frame_id"] for f in ok(session.frames())["frames"] if f["url"] == other_origin)
    ok(session.evaluate("() => { document.querySelector('#password').value = 'framed-Sesame'; }", frame_id=inner))


def assert_no_secret(yaml: str) -> None:
    for value in ALL_SECRETS:
        assert value not in yaml and folded(value) not in yaml and f'"{folded(value)}"' not in yaml
    assert 'quote \\"me\\"' not in yaml


def test_a_big_form_page_shows_no_secret_value_and_asks_each_frame_twice(
    session: Session, demo: DemoServer, questions: dict[str, int]
) -> None:
    build(session, demo)
    frames = len(ok(session.frames())["frames"])
    questions.update(frame=0, field=0)
    yaml = ok(session.snapshot())["snapshot"]
    assert questions == {"frame": 2 * frames, "field": 0}  # one read beside the snapshot, one check after
    assert_no_secret(yaml)
    redacted = [line.strip() for line in yaml.splitlines() if "[redacted]" in line]
    names = [re.search(r'"([^"]+)"', line)[1] for line in redacted]  # type: ignore[index]
    secret_rows = [f"Note {(index + 1) * ROWS // (len(SECRETS) + 1)}" for index in range(len(SECRETS))]
    assert sorted(names) == sorted([*secret_rows, "Number code", "Shadow code", "Shadow password", "Password"])
    assert all(line.endswith("]: [redacted]") for line in redacted)
    # Every ordinary field keeps its value.
    assert len(re.findall(r'- textbox "Note \d+" \[ref=(?:f\d+)?e\d+\]: v\d+$', yaml, re.MULTILINE)) == ROWS - len(
        SECRETS
    )


def test_a_field_the_values_cannot_settle_is_asked_itself(
    session: Session, demo: DemoServer, questions: dict[str, int]
) -> None:
    build(session, demo, rows=50)
    # The page's own script now reads other values than the fields hold (Playwright's snapshot,
    # in its own world, still shows what they hold): the values cannot tell the fields apart.
    ok(
        session.evaluate("""() => {
        const real = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value");
        Object.defineProperty(HTMLInputElement.prototype, "value", {
          get() { return this.type === "password" ? "something else" : real.get.call(this); },
          set(value) { real.set.call(this, value); },
        });
    }""")
    )
    questions.update(frame=0, field=0)
    yaml = ok(session.snapshot())["snapshot"]
    assert questions["field"] > 0
    assert "hunter2-Sesame" not in yaml and "shadow-Sesame" not in yaml
    assert re.search(r'- textbox "Shadow password" \[ref=(?:f\d+)?e\d+\]: \[redacted\]', yaml)
    assert re.search(r'- textbox "Note 8" \[ref=(?:f\d+)?e\d+\]: v8$', yaml, re.MULTILINE)
