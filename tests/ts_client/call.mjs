// Calls tools of a webmcp_nb MCP server with the TypeScript SDK v2 client and reports each result.
// Usage: node call.mjs URL TOKEN '[["tool", {args}], ...]'. Prints one JSON report on stdout.
// A call the client rejects (for example "has an output schema but did not return structured
// content") is reported with its error instead of ending the script.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, token, calls] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "ts-sdk-call", version: "1.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
const report = { tools: Object.fromEntries(tools.map((t) => [t.name, { hasOutputSchema: Boolean(t.outputSchema) }])), calls: [] };
for (const [name, args] of JSON.parse(calls)) {
  try {
    const result = await client.callTool({ name, arguments: args });
    report.calls.push({
      name,
      isError: Boolean(result.isError),
      contentTypes: result.content.map((c) => c.type),
      hasStructuredContent: result.structuredContent !== undefined,
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
