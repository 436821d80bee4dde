// The trace view's module: the timeline bars of the call tree and "next
// error". Like app.js it builds no markup from data: the server renders
// every value; this module only places bars (through the CSSOM, which the
// Content-Security-Policy allows) and opens nodes the server already drew.

// Timeline: each tree row carries its call's start and end (ms since the
// epoch) and the tree the span of the trace; a bar is placed in percent of
// that span. Rows loaded later (subtrees, further pages) are placed as they
// arrive; a running call's bar reaches the end of the span.
function drawTimeline(root) {
  const tree = document.querySelector("ul.tree[data-timeline-start]");
  if (!tree) return;
  const start = Number(tree.dataset.timelineStart);
  const end = Number(tree.dataset.timelineEnd);
  const span = Math.max(end - start, 1);
  const rows = root.matches?.(".node-row[data-start]") ? [root] : root.querySelectorAll(".node-row[data-start]");
  for (const row of rows) {
    const bar = row.querySelector(".timeline-bar");
    if (!bar) continue;
    const from = Number(row.dataset.start);
    const to = row.dataset.end === "" ? end : Number(row.dataset.end);
    const left = Math.min(Math.max((from - start) / span, 0), 1);
    const right = Math.min(Math.max((to - start) / span, left), 1);
    bar.style.left = `${(left * 100).toFixed(3)}%`;
    // A call too short to see still gets a sliver.
    bar.style.width = `max(2px, ${((right - left) * 100).toFixed(3)}%)`;
    row.dataset.timelineDrawn = "1";
  }
}

// until resolves once check() holds, or rejects after timeoutMS.
function until(check, timeoutMS = 15000) {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    const poll = () => {
      const value = check();
      if (value) return resolve(value);
      if (performance.now() - began > timeoutMS) return reject(new Error("timed out"));
      setTimeout(poll, 25);
    };
    poll();
  });
}

const nodeOf = (id) => {
  for (const el of document.querySelectorAll("li.node")) {
    if (el.dataset.call === id) return el;
  }
  return null;
};

// reveal makes the node of id visible inside the already-visible parent
// node (or the tree's top level), loading further pages of children until
// it is there.
async function reveal(parent, id) {
  const list = parent ? parent.querySelector(":scope > ul.children") : document.querySelector("ul.tree");
  for (;;) {
    const node = [...list.querySelectorAll(":scope > li.node")].find((el) => el.dataset.call === id);
    if (node) return node;
    const more = list.querySelector(":scope > li.more > .load-more");
    if (!more) throw new Error(`call ${id} is not in the tree`);
    const before = list.querySelectorAll(":scope > li.node").length;
    more.click();
    await until(() => list.querySelectorAll(":scope > li.node").length > before);
  }
}

// expand opens a node, loading its children the first time.
async function expand(node) {
  if (node.getAttribute("aria-expanded") !== "true") {
    node.querySelector(":scope > .node-row > .toggle")?.click();
  }
  const children = node.querySelector(":scope > ul.children");
  await until(() => children.querySelector(":scope > li"));
}

function setStatus(text) {
  const status = document.getElementById("tree-status");
  if (status) status.textContent = text;
}

// nextError asks the server for the next failed call after the selected
// one, opens the nodes on its path and selects it.
async function nextError(button) {
  const selected = document.querySelector("#detail .call-detail")?.dataset.call || "";
  button.disabled = true;
  try {
    const url = `${button.dataset.nextError}?after=${encodeURIComponent(selected)}`;
    const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!response.ok) throw new Error(`the server answered ${response.status}`);
    const answer = await response.json();
    if (!answer.call) {
      setStatus("No call in this trace failed.");
      return;
    }
    let parent = null;
    for (const id of answer.path) {
      parent = await reveal(parent, id);
      await expand(parent);
    }
    const target = await reveal(parent, answer.call);
    const link = target.querySelector(":scope > .node-row > .call-link");
    await until(() => link["htmx-internal-data"]?.initHash);
    link.click();
    await until(() => document.querySelector("#detail .call-detail")?.dataset.call === answer.call);
    target.scrollIntoView({ block: "nearest" });
    link.focus({ preventScroll: true });
    setStatus(answer.wrapped ? "Back at the first failed call." : "");
  } catch (err) {
    setStatus(`Next error: ${err.message}`);
  } finally {
    button.disabled = false;
  }
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("#next-error");
  if (button) nextError(button);
});
document.addEventListener("htmx:load", (event) => drawTimeline(event.target));
drawTimeline(document);
