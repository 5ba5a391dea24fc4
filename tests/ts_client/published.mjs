// Reads a webmcp_nb MCP server's published resources, resource templates and prompts with the
// TypeScript SDK v2 client. Usage: node published.mjs URL TOKEN '{"read": [uri, ...], "prompts":
// [[name, {args}], ...]}' [ERA]. Prints one JSON report on stdout; a request the server refuses
// is reported with its error.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, token, asks, era = "legacy"] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const options = era === "legacy" ? {} : { versionNegotiation: { mode: { pin: era } } };
const client = new Client({ name: "ts-sdk-published", version: "1.0.0" }, options);
await client.connect(transport);
const { read, prompts } = JSON.parse(asks);
const attempt = async (work) => {
  try {
    return await work();
  } catch (error) {
    return { thrown: String(error?.message ?? error) };
  }
};
const report = {
  protocol: client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null,
  resources: (await client.listResources()).resources,
  templates: (await client.listResourceTemplates()).resourceTemplates,
  prompts: (await client.listPrompts()).prompts,
  read: [],
  got: [],
};
for (const uri of read) report.read.push(await attempt(() => client.readResource({ uri })));
for (const [name, args] of prompts) report.got.push(await attempt(() => client.getPrompt({ name, arguments: args })));
await client.close();
console.log(JSON.stringify(report));
