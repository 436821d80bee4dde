// What the scripts that check a server share: a check that ends the script
// on a mismatch, and weft's JSON routes called with a bearer key.

// check prints what did not hold and exits non-zero.
export function check(condition, what, value) {
  if (!condition) {
    process.stderr.write(`mismatch: ${what}: ${JSON.stringify(value)}\n`);
    process.exit(1);
  }
}

// jsonAPI returns a caller of the server at url's routes, as ART's client
// calls the training routes: JSON with the bearer key; an answer that is
// not 2xx fails the check.
export function jsonAPI(url, key) {
  return async function api(method, path, body) {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    check(res.ok, `${method} ${path} answered ${res.status}`, text);
    return text === "" ? null : JSON.parse(text);
  };
}
