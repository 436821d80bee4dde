// Keyboard shortcuts of the UI, a plain ES module. It builds no markup: the
// help dialog ("?") is rendered by the server, and every action below clicks,
// focuses or checks what the page already has.
//
// The contract with the pages (markup any page may use):
//   - Rows: the items j/k move through are the visible [role=treeitem] of a
//     [role=tree] when the page has one, else the [data-key-item] elements,
//     else the rows of table.grid bodies. The current item is the one holding
//     the focus, else the one marked .selected or aria-selected="true".
//     Moving focuses the item's opener: its [data-key-open] element, else its
//     first link. Enter on an opener opens it (the browser's own behaviour).
//   - Tree: h collapses the current node (or moves to its parent), l expands
//     it (or moves to its first child) by clicking the node's button.toggle;
//     [ and ] move to the previous and next sibling.
//   - "/" focuses [data-key-search], else input[type=search], else the first
//     text field of form.filters.
//   - "e" dispatches a cancelable "weft:next-error" event on document. A page
//     that finds the next error itself (for example on the server, through
//     subtrees not loaded yet) calls preventDefault() on it, or marks a
//     button [data-action="next-error"] (or button[data-next-error], the
//     trace view's), which is then clicked. Otherwise the
//     next item after the current one whose own row shows .status-error is
//     focused.
//   - Annotation queues: 1–9 check the n-th radio of the current
//     fieldset[data-choices] (the one holding the focus, else the first) and
//     fire its change event, which autosaves; "n" clicks
//     [data-action="next-item"].
//   - "?" opens dialog#keys-help; so does any [data-action="keys-help"].
// Keys typed into text fields, selects and editable content are left alone,
// as are keys pressed with Ctrl, Alt or Meta.

const textTypes = new Set(["text", "search", "number", "email", "password", "url", "tel",
  "date", "datetime-local", "month", "time", "week"]);

function isTyping(el) {
  if (!el) return false;
  if (el.isContentEditable) return true;
  const tag = el.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  return tag === "INPUT" && textTypes.has((el.getAttribute("type") || "text").toLowerCase());
}

function visible(el) {
  return el.getClientRects().length > 0;
}

// items lists what j/k move through, in document order.
function items() {
  const tree = document.querySelector("[role=tree]");
  if (tree) return [...tree.querySelectorAll("[role=treeitem]")].filter(visible);
  const marked = [...document.querySelectorAll("[data-key-item]")].filter(visible);
  if (marked.length) return marked;
  return [...document.querySelectorAll("table.grid tbody tr")].filter(visible);
}

function currentItem(list) {
  const active = document.activeElement;
  // The innermost item holding the focus (tree items nest).
  let found = null;
  for (const it of list) if (it.contains(active)) found = it;
  if (found) return found;
  return list.find((it) => it.matches(".selected, [aria-selected=true]")) || null;
}

function opener(item) {
  // The item's own opener, not one of a nested item.
  const own = (el) => el.closest("[role=treeitem], [data-key-item], tr") === item;
  return [...item.querySelectorAll("[data-key-open]")].find(own) ||
    [...item.querySelectorAll("a[href]")].find(own) || null;
}

function focusItem(item) {
  if (!item) return;
  const target = opener(item) || item;
  if (target === item && !item.hasAttribute("tabindex")) item.setAttribute("tabindex", "-1");
  target.focus();
  target.scrollIntoView({ block: "nearest" });
}

// move focuses the item step places after the focused one. Without a
// focused item the first key shows where the page is: the selected item, else
// the first (j) or last (k).
function move(step) {
  const list = items();
  if (!list.length) return;
  const current = currentItem(list);
  if (!current || !current.contains(document.activeElement)) {
    focusItem(current || (step > 0 ? list[0] : list[list.length - 1]));
    return;
  }
  const at = list.indexOf(current);
  focusItem(list[Math.min(Math.max(at + step, 0), list.length - 1)]);
}

// Tree: a node's toggle, children and parent.
function treeNode() {
  const list = items();
  const node = currentItem(list);
  return node && node.matches("[role=treeitem]") ? node : null;
}

function toggleOf(node) {
  return node.querySelector(":scope > .node-row > button.toggle, :scope > * > button.toggle");
}

function collapse() {
  const node = treeNode();
  if (!node) return;
  if (node.getAttribute("aria-expanded") === "true") {
    toggleOf(node)?.click();
    focusItem(node);
    return;
  }
  const parent = node.parentElement?.closest("[role=treeitem]");
  if (parent) focusItem(parent);
}

function expand() {
  const node = treeNode();
  if (!node) return;
  const state = node.getAttribute("aria-expanded");
  if (state === "false") {
    toggleOf(node)?.click();
    focusItem(node);
  } else if (state === "true") {
    const child = node.querySelector("[role=group] > [role=treeitem]");
    if (child) focusItem(child);
  }
}

function sibling(step) {
  const node = treeNode();
  if (!node) {
    move(step);
    return;
  }
  let el = step > 0 ? node.nextElementSibling : node.previousElementSibling;
  while (el && !el.matches("[role=treeitem]")) el = step > 0 ? el.nextElementSibling : el.previousElementSibling;
  if (el) focusItem(el);
}

function focusSearch() {
  const field = document.querySelector("[data-key-search]") ||
    document.querySelector("input[type=search]") ||
    [...document.querySelectorAll("form.filters input, form.filters textarea")].find((el) => isTyping(el) && visible(el));
  if (!field) return;
  field.focus();
  if (typeof field.select === "function") field.select();
}

function hasError(item) {
  const row = item.matches("[role=treeitem]") ? item.querySelector(":scope > .node-row") || item : item;
  return !!row.querySelector(".status-error");
}

function nextError() {
  const event = new CustomEvent("weft:next-error", { cancelable: true });
  if (!document.dispatchEvent(event)) return;
  const action = document.querySelector("[data-action=next-error], button[data-next-error]");
  if (action) {
    action.click();
    return;
  }
  const list = items();
  const at = list.indexOf(currentItem(list));
  const ordered = [...list.slice(at + 1), ...list.slice(0, at + 1)];
  const found = ordered.find(hasError);
  if (found) focusItem(found);
}

// Annotation queues.
function chooseLabel(n) {
  const groups = [...document.querySelectorAll("fieldset[data-choices]")];
  if (!groups.length) return;
  const group = groups.find((g) => g.contains(document.activeElement)) || groups[0];
  const radio = group.querySelectorAll("input[type=radio]")[n - 1];
  if (!radio) return;
  radio.checked = true;
  radio.focus();
  radio.dispatchEvent(new Event("change", { bubbles: true }));
}

function clickAction(name) {
  const el = document.querySelector(`[data-action="${name}"]`);
  if (el) el.click();
}

function showHelp() {
  const dialog = document.getElementById("keys-help");
  if (dialog && !dialog.open) dialog.showModal();
}

const actions = {
  j: () => move(1),
  k: () => move(-1),
  h: collapse,
  l: expand,
  "[": () => sibling(-1),
  "]": () => sibling(1),
  "/": focusSearch,
  e: nextError,
  n: () => clickAction("next-item"),
  "?": showHelp,
};

function onKey(event) {
  if (event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey) return;
  const target = event.target;
  if (event.key === "Escape" && isTyping(target)) {
    target.blur();
    return;
  }
  if (isTyping(target) || document.querySelector("dialog[open]")) return;
  let action = actions[event.key];
  if (!action && /^[1-9]$/.test(event.key)) action = () => chooseLabel(Number(event.key));
  if (!action) return;
  event.preventDefault();
  action();
}

document.addEventListener("keydown", onKey);
document.addEventListener("click", (event) => {
  if (event.target.closest("[data-action=keys-help]")) showHelp();
});

// An autosave the server refuses (422) shows its reason in the field's
// status line rather than as a page error.
document.addEventListener("htmx:beforeSwap", (event) => {
  const { xhr, target } = event.detail;
  if (xhr.status === 422 && target.classList.contains("save-status")) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});
