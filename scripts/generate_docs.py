"""Generate `docs/reference/tools.md`, the tools reference, from the registry (one source).

One section per tool, in the registry's order: its title and description, its group and hints
(read-only, destructive, idempotent, open world), and a table of its parameters (name, type,
required or default, description) from the tool's own input schema.

    python scripts/generate_docs.py          # write the page (what `make docs` runs first)
    python scripts/generate_docs.py --check  # exit 1 if the committed page is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "reference" / "tools.md"
STALE_HINT = "docs/reference/tools.md is stale: run `make docs` (or scripts/generate_docs.py) and commit it."

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def type_of(schema: dict[str, Any]) -> str:
    """A short type name for a JSON schema: `string`, `integer[]`, `"png" | "jpeg"`, a model's name."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "enum" in schema:
        return " | ".join(json.dumps(value) for value in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return " | ".join(type_of(option) for option in schema[union])
    kind = schema.get("type", "any")
    if kind == "array":
        return type_of(schema.get("items", {})) + "[]"
    return " | ".join(kind) if isinstance(kind, list) else str(kind)


def cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def section(spec: Any) -> str:
    schema = spec.params.model_json_schema()
    required = set(schema.get("required", []))
    hints = [
        name
        for name, on in (
            ("read-only", spec.read_only),
            ("destructive", spec.destructive),
            ("idempotent", spec.idempotent),
            ("open world", spec.open_world),
        )
        if on
    ]
    lines = [
        f"## `{spec.name}`",
        "",
        f"**{spec.title}.** {spec.description.strip()}",
        "",
        f"Group `{spec.group}`" + (f"; {', '.join(hints)}." if hints else "."),
        "",
    ]
    properties = schema.get("properties", {})
    if not properties:
        return "\n".join([*lines, "No parameters.", ""])
    lines += ["| Parameter | Type | | Description |", "|---|---|---|---|"]
    for name, field in properties.items():
        given = (
            "required"
            if name in required
            else f"default `{json.dumps(field['default'])}`"
            if "default" in field
            else ""
        )
        lines.append(f"| `{name}` | {cell(type_of(field))} | {cell(given)} | {cell(field.get('description', ''))} |")
    return "\n".join([*lines, ""])


def render() -> str:
    from webmcp_nb.client import tool_registry

    registry = tool_registry()
    header = [
        "# Tools reference",
        "",
        "Generated from the tool registry by `scripts/generate_docs.py`: every tool, with the parameters",
        "its Python method, its `%browser` command and its MCP tool take. Which of them an agent sees",
        "depends on its grants (see [MCP and agents](../mcp.md)).",
        "",
    ]
    return "\n".join([*header, *(section(spec) for spec in registry)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed page is stale")
    text = render()
    if parser.parse_args().check:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text:
            print(STALE_HINT, file=sys.stderr)
            return 1
        return 0
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
