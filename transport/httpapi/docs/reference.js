// The API reference at /docs: Swagger UI (vendored, loaded before this
// script) over the server's own OpenAPI document, whose address the page
// carries (data-spec, relative to the page, so that the API may be mounted
// under a prefix). Nothing is loaded from another host: no validator badge.
window.addEventListener("load", () => {
  const spec = new URL(document.body.dataset.spec, document.baseURI).href;
  window.ui = window.SwaggerUIBundle({
    url: spec,
    dom_id: "#reference",
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
  });
});
