// Drives a webmcp_nb MCP server with the TypeScript SDK v2 client (a real third-party client).
// Usage: node check.mjs URL TOKEN DEMO_URL. Prints one JSON report on stdout.
// The client itself validates every structured result against the tool's outputSchema
// (it throws on a mismatch), so a call that returns is a call that validated.
import { Client, StreamableHTTPClientTransport, LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/client";

const [url, token, demo] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "ts-sdk-check", version: "1.0.0" });
await client.connect(transport);

const report = { protocol: LATEST_PROTOCOL_VERSION, calls: {} };
const { tools } = await client.listTools();
report.tools = tools.map((t) => ({ name: t.name, hasOutputSchema: Boolean(t.outputSchema) }));

async function call(name, args) {
  const result = await client.callTool({ name, arguments: args });
  report.calls[name] = {
    isError: Boolean(result.isError),
    contentTypes: result.content.map((c) => c.type),
    status: result.structuredContent?.status ?? null,
    errorType: result.structuredContent?.error_type ?? null,
    imageMime: result.content.find((c) => c.type === "image")?.mimeType ?? null,
    imageBytes: result.content.find((c) => c.type === "image")?.data?.length ?? 0,
    text: result.content.find((c) => c.type === "text")?.text ?? "",
  };
  return result;
}

await call("browser_navigate", { url: `${demo}index.html` });
const snapshot = await call("browser_snapshot", {});
const ref = /button "Add Banana" \[ref=([^\]]+)\]/.exec(snapshot.structuredContent.data.snapshot)[1];
await call("browser_click", { ref });
await call("browser_screenshot", {});
await call("browser_health", {});
await call("browser_tabs", { action: "list" });
await call("browser_list_instances", {});
await call("browser_wait_for", { text: "Demo Shop" });
await call("browser_handle_dialog", { accept: true });  // an error result: no dialog is open
await client.close();
console.log(JSON.stringify(report));
