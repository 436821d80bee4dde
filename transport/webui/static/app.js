// The UI's script for every page, a plain ES module: it adds what the
// server-rendered pages and htmx leave to the browser (local times, tree
// toggles, ...); keys.js holds the keyboard and each page family that needs
// more has its own module (tracelist.js, traceview.js, training.js,
// playground.js). It never builds markup from data: every value on a page
// comes escaped from the server.

// Times: the server writes UTC; show each in the reader's zone, keeping UTC
// in the tooltip.
const timeFormat = new Intl.DateTimeFormat(undefined, {
  year: "numeric", month: "short", day: "numeric",
  hour: "2-digit", minute: "2-digit", second: "2-digit",
});

function localizeTimes(root) {
  for (const el of root.querySelectorAll("time[datetime]")) {
    const when = new Date(el.getAttribute("datetime"));
    if (Number.isNaN(when.getTime()) || el.dataset.localized) continue;
    el.title = el.textContent;
    el.textContent = timeFormat.format(when);
    el.dataset.localized = "1";
  }
}

// Tree: a toggle opens or closes its node. The first opening also loads the
// children (htmx, "click once"); later clicks only show or hide them.
function onToggle(event) {
  const toggle = event.target.closest("button.toggle");
  if (!toggle) return;
  const node = toggle.closest("li.node");
  const open = node.getAttribute("aria-expanded") === "true";
  node.setAttribute("aria-expanded", open ? "false" : "true");
}

// Selection: the node whose detail is shown is marked.
function markSelected(callID) {
  for (const el of document.querySelectorAll("li.node.selected")) el.classList.remove("selected");
  if (!callID) return;
  for (const el of document.querySelectorAll("li.node")) {
    if (el.dataset.call === callID) el.classList.add("selected");
  }
}

function selectedFromDetail() {
  const detail = document.querySelector("#detail .call-detail");
  return detail ? detail.dataset.call : "";
}

// Errors of htmx requests are shown in the flash area instead of failing
// silently.
function showError(message) {
  const flash = document.getElementById("flash");
  if (!flash) return;
  flash.textContent = message;
  flash.hidden = false;
}

document.addEventListener("click", onToggle);
document.addEventListener("htmx:load", (event) => localizeTimes(event.target));
document.addEventListener("htmx:afterSwap", (event) => {
  if (event.target.id === "detail") markSelected(selectedFromDetail());
});
document.addEventListener("htmx:responseError", (event) => {
  const xhr = event.detail.xhr;
  showError(`The server answered ${xhr.status}: ${xhr.statusText || "error"}.`);
});
document.addEventListener("htmx:sendError", () => showError("The server could not be reached."));

localizeTimes(document);
markSelected(selectedFromDetail());
