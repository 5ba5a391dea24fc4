"""Loading an OpenAPI document into operations (dereferenced lazily; `validation` checks them)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4, DRAFT202012

from ..tools.http_models import NDJSON_TYPES, SAFE_METHODS, STREAMING_TYPES, is_binary

if TYPE_CHECKING:
    from .validation import OperationChecks

METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
BASE_URI = "urn:webmcp-nb:api"
SECRET_FORMATS = frozenset({"password"})


class ApiSpecError(ValueError):
    """The document is not a valid OpenAPI description; the message names the place."""


def load_document(spec: Any) -> dict[str, Any]:
    """A dict as is; a path or URL read as JSON or YAML."""
    if isinstance(spec, dict):
        return spec
    text: str
    source = str(spec)
    if re.match(r"https?://", source):
        import httpx

        response = httpx.get(source, timeout=30, follow_redirects=True)
        response.raise_for_status()
        text = response.text
    else:
        text = Path(source).read_text(encoding="utf-8")
    if source.endswith((".yaml", ".yml")) or not text.lstrip().startswith(("{", "[")):
        import yaml

        document = yaml.safe_load(text)
    else:
        document = json.loads(text)
    if not isinstance(document, dict):
        raise ApiSpecError(f"{source}: an OpenAPI document is an object, not {type(document).__name__}")
    return document


def escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def sanitise(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_")
    return cleaned if cleaned and not cleaned[0].isdigit() else f"op_{cleaned}"


@dataclass
class Document:
    """A document and its `$ref` resolver."""

    content: dict[str, Any]

    @cached_property
    def checks(self) -> OperationChecks:
        from .validation import OperationChecks

        return OperationChecks(self.content)

    @cached_property
    def registry(self) -> Registry[Any]:
        draft = DRAFT4 if str(self.content.get("openapi", "")).startswith("3.0") else DRAFT202012
        resource: Resource[Any] = Resource.from_contents(self.content, default_specification=draft)
        registry: Registry[Any] = Registry().with_resource(BASE_URI, resource)
        return registry

    def deref(self, node: Any, pointer: str) -> tuple[Any, str]:
        """`node` with its `$ref`s followed (and where it now is, as a JSON pointer)."""
        resolver = self.registry.resolver(base_uri=BASE_URI)
        seen = 0
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and seen < 32:
            ref = node["$ref"]
            node = resolver.lookup(ref).contents
            pointer = ref.partition("#")[2]
            seen += 1
        return node, pointer


@dataclass
class Parameter:
    name: str
    where: str  # query, header, path, cookie
    required: bool
    schema: dict[str, Any]
    pointer: str
    description: str = ""

    @property
    def key(self) -> str:
        return sanitise(self.name)


@dataclass
class Operation:
    name: str
    method: str
    path: str
    summary: str
    consequential: bool
    parameters: list[Parameter]
    body: dict[str, Any] | None  # media type -> schema pointer / required
    responses: dict[str, dict[str, str]]  # status -> media type -> schema pointer
    idempotency_header: str | None
    security: list[dict[str, Any]] | None
    media_types: set[str] = field(default_factory=set)

    @property
    def streaming(self) -> bool:
        return any(media in STREAMING_TYPES for media in self.media_types)

    @property
    def binary(self) -> bool:
        return any(is_binary(media) for media in self.media_types)

    @property
    def ndjson(self) -> bool:
        return any(media in NDJSON_TYPES for media in self.media_types)

    def row(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": self.method,
            "path": self.path,
            "summary": self.summary,
            "consequential": self.consequential,
        }


def operations(document: Document) -> list[Operation]:
    """Every operation of the document, named by operationId (sanitised) or method and path."""
    found: list[Operation] = []
    names: set[str] = set()
    root_security = document.content.get("security")
    for path, item in (document.content.get("paths") or {}).items():
        item, item_pointer = document.deref(item, f"/paths/{escape(path)}")
        shared = item.get("parameters") or []
        for method in METHODS:
            raw = item.get(method)
            if not isinstance(raw, dict):
                continue
            pointer = f"{item_pointer}/{method}"
            name = sanitise(raw.get("operationId") or f"{method}_{path}")
            while name in names:
                name += "_"
            names.add(name)
            params = _parameters(document, shared, f"{item_pointer}/parameters", raw.get("parameters") or [], pointer)
            body = None
            if "requestBody" in raw:
                request, request_pointer = document.deref(raw["requestBody"], f"{pointer}/requestBody")
                content = request.get("content") or {}
                media = "application/json" if "application/json" in content else next(iter(content), None)
                if media is not None:
                    body = {
                        "media_type": media,
                        "required": bool(request.get("required")),
                        "pointer": f"{request_pointer}/content/{escape(media)}/schema",
                        "has_schema": "schema" in content[media],
                    }
            responses: dict[str, dict[str, str]] = {}
            media_types: set[str] = set()
            for status, response in (raw.get("responses") or {}).items():
                response, response_pointer = document.deref(response, f"{pointer}/responses/{escape(str(status))}")
                content = response.get("content") or {}
                responses[str(status)] = {
                    media.split(";")[0].strip().lower(): f"{response_pointer}/content/{escape(media)}/schema"
                    for media, value in content.items()
                    if isinstance(value, dict) and "schema" in value
                }
                if str(status).startswith("2") or status == "default":
                    media_types |= {media.split(";")[0].strip().lower() for media in content}
            marked = raw.get("x-consequential")
            consequential = bool(marked) if isinstance(marked, bool) else method.upper() not in SAFE_METHODS
            idempotency = next(
                (p.name for p in params if p.where == "header" and p.name.lower() == "idempotency-key"), None
            )
            found.append(
                Operation(
                    name=name,
                    method=method.upper(),
                    path=path,
                    summary=str(raw.get("summary") or raw.get("description") or "")[:300],
                    consequential=consequential,
                    parameters=[p for p in params if p.name != idempotency],
                    body=body,
                    responses=responses,
                    idempotency_header=idempotency,
                    security=raw.get("security", root_security),
                    media_types=media_types,
                )
            )
    return found


def _parameters(
    document: Document, shared: list[Any], shared_pointer: str, own: list[Any], pointer: str
) -> list[Parameter]:
    merged: dict[tuple[str, str], Parameter] = {}
    for items, base in ((shared, shared_pointer), (own, f"{pointer}/parameters")):
        for index, raw in enumerate(items):
            param, at = document.deref(raw, f"{base}/{index}")
            if not isinstance(param, dict) or "name" not in param:
                continue
            where = str(param.get("in", "query"))
            merged[(param["name"], where)] = Parameter(
                name=str(param["name"]),
                where=where,
                required=bool(param.get("required")) or where == "path",
                schema=param.get("schema") or {},
                pointer=f"{at}/schema",
                description=str(param.get("description") or "")[:200],
            )
    return list(merged.values())
