// The trace list's live state, a plain ES module: the results are marked
// data-live="open" while their event stream (htmx's sse extension) is
// connected and "closed" when it drops, so that people can tell a live list
// from one that stopped updating (the stylesheet shows it by the count).
document.addEventListener("htmx:sseOpen", (event) => {
  event.target.dataset.live = "open";
});
document.addEventListener("htmx:sseError", (event) => {
  event.target.dataset.live = "closed";
});
