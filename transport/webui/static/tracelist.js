// The trace list's live state, a plain ES module: the results are marked
// data-live="open" while their event stream (htmx's sse extension) is
// connected and "closed" when it drops, so that people can tell a live list
// from one that stopped updating (the stylesheet shows it by the count).
//
// The extension reports every error event of its stream as an error of the
// page (console.error of the event: "[object Event]"). Most are none: a
// stream that ends (a proxy's idle timeout, a server restarting) or that the
// page cuts by being left is reconnected by the browser itself. So the
// streams are made here (htmx.createEventSource, which the extension calls):
// such an interruption only marks the list closed until it reopens, and the
// extension hears of a stream only when the browser gave it up (the server
// refused it: readyState CLOSED), which it retries with a growing delay.
// Streams are closed when the page is hidden for good or for the
// back-forward cache, whose restored page is loaded afresh.

document.addEventListener("htmx:sseOpen", (event) => {
  event.target.dataset.live = "open";
});
document.addEventListener("htmx:sseError", (event) => {
  event.target.dataset.live = "closed";
});

const streams = new Set();
let leaving = false;

function listOf(url) {
  for (const el of document.querySelectorAll("[sse-connect]")) {
    if (el.getAttribute("sse-connect") === url) return el;
  }
  return null;
}

const createEventSource = window.htmx?.createEventSource;
if (createEventSource) {
  window.htmx.createEventSource = (url) => {
    const source = createEventSource(url);
    let reportError = null;
    Object.defineProperty(source, "onerror", { get: () => reportError, set: (fn) => { reportError = fn; } });
    source.addEventListener("error", (event) => {
      if (leaving) return;
      if (source.readyState === EventSource.CLOSED) {
        streams.delete(source);
        reportError?.call(source, event);
        return;
      }
      const list = listOf(url);
      if (list) list.dataset.live = "closed";
    });
    streams.add(source);
    return source;
  };
}

window.addEventListener("pagehide", () => {
  leaving = true;
  for (const source of streams) source.close();
  streams.clear();
});
window.addEventListener("pageshow", (event) => {
  if (event.persisted) window.location.reload();
});

// A filter change swaps only the results and pushes the view into the URL,
// so the form that saves the view takes the view from the URL when it is
// sent, not from the page as it was first drawn.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.matches("[data-save-view]")) return;
  form.elements.namedItem("query").value = location.search.replace(/^\?/, "");
});

// The selection: the rows' boxes belong to the form #selection. The chosen
// ids are kept here too, so that a live update or a filter change, which
// draws the rows afresh, shows the chosen rows still chosen; the count says
// how many the form will send (those on the page).
const chosen = new Set();
const selection = document.getElementById("selection");
function showSelection() {
  if (!selection) return;
  const boxes = [...document.querySelectorAll('#traces input[name="call"]')];
  for (const box of boxes) box.checked = chosen.has(box.value);
  const n = boxes.filter((box) => box.checked).length;
  const all = document.querySelector("#traces [data-select-all]");
  if (all) {
    all.checked = n > 0 && n === boxes.length;
    all.indeterminate = n > 0 && n < boxes.length;
  }
  // Written only when it changes: the write is itself a change of the
  // page that the observer below hears.
  const count = selection.querySelector("[data-selection-count]");
  const text = n === 0 ? "Select traces to add them to a queue or a dataset." : `${n} selected`;
  if (count.textContent !== text) count.textContent = text;
}
document.addEventListener("change", (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement)) return;
  if (box.matches('#traces input[name="call"]')) {
    if (box.checked) chosen.add(box.value); else chosen.delete(box.value);
  } else if (box.matches("#traces [data-select-all]")) {
    for (const row of document.querySelectorAll('#traces input[name="call"]')) {
      if (box.checked) chosen.add(row.value); else chosen.delete(row.value);
    }
  } else {
    return;
  }
  showSelection();
});
// A filter change replaces #results itself, so the page is watched.
if (selection) {
  new MutationObserver(showSelection).observe(document.querySelector("main") ?? document.body, { childList: true, subtree: true });
}
