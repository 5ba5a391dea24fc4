// The live view, call log and approval prompt of a webmcp_nb session, as an MCP App.
// It reaches the server only through its host (App.callServerTool), with the app-only tools
// webmcp_nb/mcp/app.py declares; frames arrive as image content, so the page needs no network.
import { App } from "@modelcontextprotocol/ext-apps";

const STATE = "webmcp_nb_app_state";
const CLICK = "webmcp_nb_app_click";
const DECIDE = "webmcp_nb_app_decide";
const MIN_INTERVAL_MS = 200; // at most 5 frames a second; the server keeps only the newest

type Call = { caller: string; tool: string; status: string };
type Pending = { id: number; summary: string };
type Decided = { id: number; approved: boolean; by: string };
type State = {
  seq: number; // of the frame
  version: number; // of everything shown
  frame?: { width: number; height: number; url: string };
  calls: Call[];
  pending: Pending[];
  decided: Decided[];
};

const view = document.getElementById("view") as HTMLImageElement;
const url = document.getElementById("url") as HTMLElement;
const log = document.getElementById("log") as HTMLTableSectionElement;
const approvals = document.getElementById("approvals") as HTMLElement;
const status = document.getElementById("status") as HTMLElement;

const app = new App({ name: "webmcp-nb-live", version: "1" });
let frame: State["frame"];
let shownPending = "";

function cell(row: HTMLTableRowElement, text: string): void {
  row.insertCell().textContent = text;
}

function render(state: State, image: string | undefined): void {
  if (image !== undefined && state.frame) {
    frame = state.frame;
    view.src = `data:image/jpeg;base64,${image}`;
    view.dataset.seq = String(state.seq);
    url.textContent = state.frame.url;
  }
  log.replaceChildren();
  for (const call of state.calls.slice().reverse()) {
    const row = log.insertRow();
    cell(row, call.caller);
    cell(row, call.tool);
    cell(row, call.status);
  }
  const key = JSON.stringify([state.pending, state.decided]);
  if (key === shownPending) return; // keep the buttons under the pointer
  shownPending = key;
  approvals.replaceChildren();
  for (const pending of state.pending) {
    const row = document.createElement("div");
    row.className = "pending";
    row.dataset.id = String(pending.id);
    const text = document.createElement("code");
    text.textContent = pending.summary;
    row.append(text, button("Approve", pending.id, true), button("Deny", pending.id, false));
    approvals.append(row);
  }
  for (const decided of state.decided.slice().reverse()) {
    const row = document.createElement("div");
    row.className = "decided";
    row.textContent = `#${decided.id} ${decided.approved ? "approved" : "denied"} (${decided.by})`;
    approvals.append(row);
  }
  if (!approvals.childElementCount) approvals.textContent = "No approvals pending.";
}

function button(label: string, id: number, approve: boolean): HTMLButtonElement {
  const element = document.createElement("button");
  element.textContent = label;
  element.className = approve ? "approve" : "deny";
  element.onclick = async () => {
    element.disabled = true;
    const result = await app.callServerTool({ name: DECIDE, arguments: { id, approve } });
    status.textContent = text(result.content) ?? "";
  };
  return element;
}

function text(content: unknown): string | undefined {
  const blocks = (content ?? []) as { type: string; text?: string }[];
  return blocks.find((block) => block.type === "text")?.text;
}

view.addEventListener("click", async (event) => {
  if (!frame) return;
  const box = view.getBoundingClientRect();
  const x = ((event.clientX - box.left) / box.width) * frame.width;
  const y = ((event.clientY - box.top) / box.height) * frame.height;
  const result = await app.callServerTool({ name: CLICK, arguments: { x, y } });
  status.textContent = result.isError ? (text(result.content) ?? "click failed") : `clicked ${Math.round(x)},${Math.round(y)}`;
});

async function follow(): Promise<void> {
  let seq: number | undefined;
  let version: number | undefined;
  for (;;) {
    const started = Date.now();
    try {
      const result = await app.callServerTool({ name: STATE, arguments: version === undefined ? {} : { after: version, frame: seq } });
      const state = result.structuredContent as State | undefined;
      if (state) {
        const image = (result.content as { type: string; data?: string }[]).find((b) => b.type === "image");
        render(state, image?.data); // only a frame the view has not shown comes with its image
        seq = state.seq;
        version = state.version;
      }
      status.dataset.live = "1";
    } catch (error) {
      status.textContent = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, MIN_INTERVAL_MS - (Date.now() - started))));
  }
}

app.connect().then(follow, (error) => (status.textContent = `not connected: ${error}`));
