"""The typed API as a type checker sees it: `make lint` runs mypy (strict) on this file.

Each line that must be refused carries an ignore for exactly the error it must raise; strict mode
warns about an unused ignore, so mypy fails here if a Literal type of the generated methods, of the
tool inputs or of the error types ever widens and the line is accepted.
"""

from webmcp_nb import Session
from webmcp_nb.core.call.errors import ToolFailure

ToolFailure("stale_ref", "fine")
ToolFailure("no_such_error", "refused")  # type: ignore[arg-type]
s = Session()
s.click("e1", button="right", modifiers=["Shift"])
s.click("e1", button="centre")  # type: ignore[arg-type]
s.fill_form([{"ref": "e1", "type": "textbox", "value": "x"}])
s.fill_form([{"ref": "e1", "type": "textarea", "value": "x"}])  # type: ignore[typeddict-item]


async def main() -> None:
    envelope = await s.anavigate("https://example.org/", wait_until="commit")
    error_type: str | None = envelope.error_type
    assert error_type is None or error_type
    await s.anavigate(url=1)  # type: ignore[arg-type]
