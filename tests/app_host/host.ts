// A minimal MCP Apps host for tests/test_mcp_app.py, on the SDK's host side (AppBridge).
// Its MCP client is the test's (a Python client over streamable HTTP): window.webmcpRelay,
// which Playwright exposes, forwards each request to it. The app runs in a sandboxed frame
// (scripts only, an opaque origin) under the CSP its resource declares: no network at all.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

declare global {
  interface Window {
    webmcpRelay(method: string, params: unknown): Promise<any>;
    hostReady: Promise<void>;
    appInitialized: boolean;
  }
}

const URI = "ui://webmcp-nb/live";

function policy(csp: { connectDomains?: string[]; resourceDomains?: string[] } | undefined): string {
  const connect = (csp?.connectDomains ?? []).join(" ") || "'none'";
  const resources = (csp?.resourceDomains ?? []).join(" ");
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`,
    `style-src 'unsafe-inline' ${resources}`,
    `img-src data: ${resources}`,
    `connect-src ${connect}`,
  ].join("; ");
}

async function start(): Promise<void> {
  const read = await window.webmcpRelay("resources/read", { uri: URI });
  const content = read.contents[0];
  if (content.mimeType !== "text/html;profile=mcp-app") throw new Error(`not an app: ${content.mimeType}`);
  const meta = content._meta?.ui;
  const html = content.text.replace("<head>", `<head><meta http-equiv="Content-Security-Policy" content="${policy(meta?.csp)}">`);

  const frame = document.createElement("iframe");
  frame.id = "app";
  frame.setAttribute("sandbox", "allow-scripts");
  frame.title = "webmcp_nb live view";
  document.getElementById("frame-slot")!.append(frame);

  const bridge = new AppBridge(null, { name: "test-host", version: "1" }, { serverTools: {} });
  bridge.oncalltool = (params) => window.webmcpRelay("tools/call", params);
  bridge.oninitialized = () => {
    window.appInitialized = true;
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow!, frame.contentWindow!));
  frame.srcdoc = html;
}

window.hostReady = start();
