// Calls tools of a webmcp_nb MCP server with the TypeScript SDK v2 client and reports each result.
// Usage: node call.mjs URL TOKEN '[["tool", {args}], ...]' [ERA]. Prints one JSON report on stdout.
// ERA: "legacy" (2025-11-25, the default) or a protocol version to pin (e.g. "2026-07-28").
// A call the client rejects (for example "has an output schema but did not return structured
// content") is reported with its error instead of ending the script.
//
// Each call is reported as the three kinds of client read it: `text` (a client that shows only
// the text), `structured` (one that forwards only structuredContent) and `schemaCheck` (one that
// validates output schemas). The client validates a success itself (it throws on a mismatch);
// it skips error results, so `schemaCheck` runs the client's own validator on every structured
// result against the tool's listed outputSchema (null when the tool declares none).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";

const [url, token, calls, era = "legacy"] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const validator = new AjvJsonSchemaValidator();
const options = { jsonSchemaValidator: validator };
if (era !== "legacy") options.versionNegotiation = { mode: { pin: era } };
const client = new Client({ name: "ts-sdk-call", version: "1.0.0" }, options);
await client.connect(transport);

const { tools } = await client.listTools();
const schemas = Object.fromEntries(tools.map((t) => [t.name, t.outputSchema ?? null]));
const report = {
  protocol: client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null,
  tools: Object.fromEntries(tools.map((t) => [t.name, { hasOutputSchema: Boolean(t.outputSchema) }])),
  calls: [],
};
for (const [name, args] of JSON.parse(calls)) {
  try {
    const result = await client.callTool({ name, arguments: args });
    const schema = schemas[name];
    const checked = schema && result.structuredContent !== undefined ? validator.getValidator(schema)(result.structuredContent) : null;
    report.calls.push({
      name,
      isError: Boolean(result.isError),
      contentTypes: result.content.map((c) => c.type),
      hasStructuredContent: result.structuredContent !== undefined,
      structured: result.structuredContent ?? null,
      schemaCheck: checked && { valid: checked.valid, errorMessage: checked.errorMessage ?? null },
      imageMime: result.content.find((c) => c.type === "image")?.mimeType ?? null,
      imageBase64: result.content.find((c) => c.type === "image")?.data ?? null,
      text: result.content.find((c) => c.type === "text")?.text ?? "",
    });
  } catch (error) {
    report.calls.push({ name, thrown: String(error?.message ?? error) });
  }
}
await client.close();
console.log(JSON.stringify(report));
