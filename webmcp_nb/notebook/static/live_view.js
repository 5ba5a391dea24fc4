// The live view of webmcp_nb's BrowserPanel: shows JPEG frames, sends clicks, keys
// and wheel events back to the kernel, which turns them into tool calls.
function render({ model, el }) {
  const box = document.createElement("div");
  box.className = "webmcp-nb-live";
  box.tabIndex = 0;
  // Keys typed here go to the page, not to JupyterLab's notebook shortcuts.
  box.dataset.lmSuppressShortcuts = "true";
  box.dataset.pSuppressShortcuts = "true";
  const img = document.createElement("img");
  img.alt = "Live view of the browser page (click to interact)";
  box.appendChild(img);
  el.appendChild(box);

  let objectUrl = null;
  function show() {
    const data = model.get("frame");
    if (!data || data.byteLength === 0) return;
    const next = URL.createObjectURL(new Blob([data], { type: "image/jpeg" }));
    img.src = next;
    if (objectUrl) URL.revokeObjectURL(objectUrl);
    objectUrl = next;
  }
  model.on("change:frame", show);
  show();

  function pagePoint(event) {
    const rect = img.getBoundingClientRect();
    return {
      x: ((event.clientX - rect.left) * model.get("viewport_width")) / rect.width,
      y: ((event.clientY - rect.top) * model.get("viewport_height")) / rect.height,
    };
  }
  function click(event, button) {
    event.preventDefault();
    box.focus();
    const point = pagePoint(event);
    model.send({ event: "click", x: point.x, y: point.y, button });
  }
  img.addEventListener("click", (event) => click(event, "left"));
  img.addEventListener("contextmenu", (event) => click(event, "right"));
  box.addEventListener("keydown", (event) => {
    if (["Shift", "Control", "Alt", "Meta"].includes(event.key)) return;
    const chord = event.ctrlKey || event.metaKey || event.altKey;
    if (event.key.length === 1 && !chord) {
      model.send({ event: "type", text: event.key });
    } else {
      const parts = [];
      if (event.ctrlKey) parts.push("Control");
      if (event.altKey) parts.push("Alt");
      if (event.metaKey) parts.push("Meta");
      if (event.shiftKey && event.key.length > 1) parts.push("Shift");
      parts.push(event.key);
      model.send({ event: "key", key: parts.join("+") });
    }
    event.preventDefault();
    event.stopPropagation();
  });
  box.addEventListener(
    "wheel",
    (event) => {
      event.preventDefault();
      model.send({ event: "scroll", dy: event.deltaY });
    },
    { passive: false },
  );
  return () => {
    if (objectUrl) URL.revokeObjectURL(objectUrl);
  };
}

export default { render };
