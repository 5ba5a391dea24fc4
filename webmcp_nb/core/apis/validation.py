"""openapi-spec-validator over a document: in full (once per content), or one operation at a time.

`format` is an annotation, not an assertion, when a `default` is checked: JSON Schema 2020-12
(OpenAPI 3.1) makes it one unless a format-assertion vocabulary is asked for, and OpenAPI 3.0
requires a default to conform to its schema's type while JSON Schema's validation draft lets an
implementation switch format checks off. Every other rule of the document is checked.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any

from .spec import ApiSpecError, escape

_VALIDATED: set[str] = set()  # hashes of the documents that passed a full validation


def version_of(document: dict[str, Any]) -> str:
    version = str(document.get("openapi", ""))
    if not version.startswith(("3.0", "3.1")):
        raise ApiSpecError(f"openapi: expected an OpenAPI 3.0 or 3.1 document, got {version or 'no version'!r}")
    return version[:3]


@cache
def validator_class(version: str) -> type[Any]:
    """openapi-spec-validator's validator for `version`, its `default` check treating format as an annotation."""
    from openapi_spec_validator import OpenAPIV30SpecValidator, OpenAPIV31SpecValidator
    from openapi_spec_validator.validation import keywords

    base: type[Any] = OpenAPIV30SpecValidator if version == "3.0" else OpenAPIV31SpecValidator
    values = keywords.OpenAPIV30ValueValidator if version == "3.0" else keywords.OpenAPIV31ValueValidator
    defaults = type("DefaultValidator", (values,), {"value_validator_format_checker": None})
    return type(
        f"Annotated{base.__name__}", (base,), {"keyword_validators": {**base.keyword_validators, "default": defaults}}
    )


def validate_document(document: dict[str, Any]) -> None:
    """The whole document, once per content (by its hash); the first problem, with its place, raised."""
    version = version_of(document)
    digest = hashlib.sha256(json.dumps(document, sort_keys=True, default=str).encode()).hexdigest()
    if digest in _VALIDATED:
        return
    error = next(validator_class(version)(document).iter_errors(), None)
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "(document)"
        raise ApiSpecError(f"The OpenAPI document is invalid at {where}: {error.message}")
    _VALIDATED.add(digest)


@cache
def path_item_validator(version: str) -> Any:
    """The OpenAPI meta-schema's own rule for one path item (its structure, every operation in it)."""
    from openapi_spec_validator.schemas import openapi_v30_schema_validator, openapi_v31_schema_validator

    if version == "3.0":
        meta = openapi_v30_schema_validator.schema
        return openapi_v30_schema_validator.evolve(schema={**meta, "$ref": "#/definitions/PathItem"})
    meta = openapi_v31_schema_validator.schema
    root = {key: meta[key] for key in ("$id", "$schema", "$defs")}
    return openapi_v31_schema_validator.evolve(schema={**root, "$ref": "#/$defs/path-item"})


class OperationChecks:
    """One operation at a time, before its first use: the path item's structure (the meta-schema),
    each schema it uses (openapi-spec-validator's schema rules, defaults included) and the operation's
    own rules (parameters, responses). Each result is kept, so an operation is checked once."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.version = version_of(document)
        self.validator = validator_class(self.version)(document)
        self.results: dict[tuple[str, str], str | None] = {}

    def problem(self, path: str, method: str, pointers: list[str]) -> str | None:
        """Where and how the operation is invalid, or None."""
        key = (path, method)
        if key not in self.results:
            self.results[key] = self._check(path, method.lower(), pointers)
        return self.results[key]

    def _check(self, path: str, method: str, pointers: list[str]) -> str | None:
        from jsonschema.exceptions import best_match

        keywords = self.validator.keyword_validators_registry
        root = self.validator.schema_path
        item_at = f"/paths/{escape(path)}"
        for pointer in pointers:
            try:
                error = next(iter(keywords["schema"](self._node(root, pointer))), None)
            except Exception as exc:  # noqa: BLE001 - an unresolvable $ref, a missing node
                return f"at {pointer}: {exc}"
            if error is not None:
                return f"at {pointer}{''.join(f'/{part}' for part in error.path)}: {error.message}"
        item = (self.validator.schema.get("paths") or {}).get(path)
        error = best_match(path_item_validator(self.version).iter_errors(item))
        if error is not None:
            return f"at {item_at}{''.join(f'/{escape(str(part))}' for part in error.absolute_path)}: {error.message}"
        node = root / "paths" / path
        try:
            shared = node / "parameters" if "parameters" in node else None
            error = next(iter(keywords["operation"](path, method, node / method, shared)), None)
        except Exception as exc:  # noqa: BLE001
            return f"at {item_at}/{method}: {exc}"
        return None if error is None else f"at {item_at}/{method}: {error.message}"

    @staticmethod
    def _node(root: Any, pointer: str) -> Any:
        node = root
        for part in pointer.lstrip("/").split("/"):
            text = part.replace("~1", "/").replace("~0", "~")
            node = node / (int(text) if text.isdigit() and isinstance(node.read_value(), list) else text)
        return node
