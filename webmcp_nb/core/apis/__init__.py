"""APIs as tools: an OpenAPI 3.0 or 3.1 document becomes tool calls under browser_http's result policy.

`spec` loads, validates (openapi-spec-validator, cached by the document's hash) and dereferences
(`referencing`) the document into `Operation`s; `transport` sends a request from the kernel with
httpx behind browser_http's fetch interface, so its bounded reader, SSE and NDJSON code applies;
`calls` turns each operation into a `ToolSpec` and holds the result policy (auth, secrets,
show-once fields, previews, idempotency, verification).
"""
