// The result contract's edges with the TypeScript SDK v2 client: a big snapshot, a screenshot,
// save=true, and page tools' MCP-style results (isError, images) through their mirrors.
// Usage: node results.mjs URL TOKEN DEMO_URL ERA   (ERA: "legacy" = 2025-11-25, or "2026-07-28").
// The client validates every structured result against the tool's outputSchema and throws on a
// mismatch, so a call that returns is a call that validated. Prints one JSON report on stdout.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, token, demo, era] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const options = era === "legacy" ? {} : { versionNegotiation: { mode: { pin: era } } };
const client = new Client({ name: "ts-sdk-results", version: "1.0.0" }, options);
await client.connect(transport);

const report = { protocol: client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null, calls: {} };

async function call(label, name, args) {
  const result = await client.callTool({ name, arguments: args });
  const text = result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
  const image = result.content.find((c) => c.type === "image");
  report.calls[label] = {
    isError: Boolean(result.isError),
    contentTypes: result.content.map((c) => c.type),
    structured: result.structuredContent ?? null,
    text,
    imageMime: image?.mimeType ?? null,
    imageData: image?.data ?? null,
  };
  return result;
}

await call("navigate_table", "browser_navigate", { url: `${demo}table.html` });
await call("snapshot", "browser_snapshot", {});
await call("snapshot_saved", "browser_snapshot", { save: true });
await call("screenshot", "browser_screenshot", {});
await call("navigate_tools", "browser_navigate", { url: `${demo}webmcp-results.html` });

// The mirrored page tools appear once the page has registered them.
let tools = [];
for (let attempt = 0; attempt < 50; attempt++) {
  tools = (await client.listTools()).tools;
  if (tools.some((t) => t.name === "webmcp_draw_badge")) break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}
report.tools = tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema, outputSchema: t.outputSchema ?? null }));
await call("reserve", "webmcp_reserve_item", { item: "Kiwi" });
await call("badge", "webmcp_draw_badge", { colour: "green" });
await call("shout", "browser_webmcp_call", { name: "shout", input: { text: "hi" } });
await client.close();
console.log(JSON.stringify(report));
