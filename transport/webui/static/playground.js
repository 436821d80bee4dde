// The playground, a plain ES module: it turns the form into a
// chat-completion request, sends it through the server's gateway (POST
// …/playground/run, which traces it into the project) and writes the answer
// into the page as it streams in. Text is only ever set with textContent.

const form = document.getElementById("pg-form");

function csrf() {
  try {
    return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRF-Token"] || "";
  } catch {
    return "";
  }
}

// showError puts a failed run's message where the answer goes, in place of
// the answer.
function showError(message) {
  const el = document.getElementById("pg-error");
  el.textContent = message;
  el.hidden = !message;
  if (message) {
    document.getElementById("pg-output").textContent = "";
    document.getElementById("pg-reasoning-pane").hidden = true;
  }
}

// parseJSON reads a JSON field, naming it in the error.
function parseJSON(text, what) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(what + " is not valid JSON: " + e.message);
  }
}

function number(name, integer) {
  const value = form.elements[name].value.trim();
  if (value === "") return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) throw new Error(name + " must be a number");
  return n;
}

// request builds the chat-completion body from the form.
export function request() {
  const body = { model: form.elements.model.value.trim(), messages: [] };
  if (!body.model) throw new Error("Choose a model");
  for (const li of document.querySelectorAll("#pg-message-list .pg-message")) {
    const content = li.querySelector("textarea[name=content]");
    const extra = li.querySelector("input[name=extra]");
    const message = extra ? parseJSON(extra.value, "a message's other fields") : {};
    message.role = li.querySelector("select[name=role]").value;
    if (content.dataset.json === "true") message.content = parseJSON(content.value, "a message's content");
    else message.content = content.value;
    body.messages.push(message);
  }
  for (const [name, integer] of [["temperature", false], ["top_p", false], ["max_tokens", true], ["seed", true]]) {
    const n = number(name, integer);
    if (n !== undefined) body[name] = n;
  }
  const stop = form.elements.stop.value.trim();
  if (stop) body.stop = stop.startsWith("[") ? parseJSON(stop, "stop") : stop;
  const tools = form.elements.tools.value.trim();
  if (tools) body.tools = parseJSON(tools, "tools");
  const format = form.elements.response_format.value.trim();
  if (format) body.response_format = parseJSON(format, "response format");
  const kwargs = form.elements.chat_template_kwargs.value.trim();
  const switches = kwargs ? parseJSON(kwargs, "the other template switches") : {};
  if (switches === null || typeof switches !== "object" || Array.isArray(switches)) throw new Error("the other template switches must be a JSON object");
  if (form.elements.enable_thinking.value) switches.enable_thinking = form.elements.enable_thinking.value === "true";
  if (Object.keys(switches).length) body.chat_template_kwargs = switches;
  if (form.elements.stream.checked) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

// toolCalls accumulates streamed tool-call deltas by index.
function addToolCalls(acc, deltas) {
  for (const d of deltas) {
    const at = d.index ?? acc.length;
    const call = acc[at] ||= { id: "", type: "function", function: { name: "", arguments: "" } };
    if (d.id) call.id = d.id;
    if (d.function?.name) call.function.name += d.function.name;
    if (d.function?.arguments) call.function.arguments += d.function.arguments;
  }
}

function showToolCalls(calls) {
  const el = document.getElementById("pg-tool-calls");
  el.hidden = calls.length === 0;
  el.textContent = calls.length ? JSON.stringify(calls, null, 2) : "";
}

// readStream reads server-sent events from a fetch body, calling onData with
// each data payload.
async function readStream(body, onData) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replaceAll("\r\n", "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
      if (data) onData(data);
    }
  }
}

async function run(event) {
  event.preventDefault();
  showError("");
  let body;
  try {
    body = request();
  } catch (e) {
    showError(e.message);
    form.dataset.state = "failed";
    return;
  }
  const output = document.getElementById("pg-output");
  // A thinking model's reasoning (reasoning_content) is shown apart from its answer.
  const reasoning = document.getElementById("pg-reasoning");
  const reasoningPane = document.getElementById("pg-reasoning-pane");
  const showReasoning = (text) => { reasoning.textContent = text; reasoningPane.hidden = text === ""; };
  const status = document.getElementById("pg-status");
  const runButton = document.getElementById("pg-run");
  output.textContent = "";
  showReasoning("");
  showToolCalls([]);
  document.getElementById("pg-diff").hidden = true;
  document.getElementById("pg-save").hidden = true;
  document.getElementById("pg-saved").hidden = true;
  status.textContent = "Running…";
  form.dataset.state = "running";
  runButton.disabled = true;
  try {
    const res = await fetch(form.dataset.run, {
      method: "POST", headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
      body: JSON.stringify(body), credentials: "same-origin",
    });
    const callID = res.headers.get("Weft-Call-Id") || "";
    const calls = [];
    let finish = "";
    let usage = null;
    if (!res.ok) {
      const text = await res.text();
      let message = text;
      try { message = JSON.parse(text).error?.message || text; } catch { /* not JSON */ }
      throw new Error("The model answered " + res.status + ": " + message);
    }
    if ((res.headers.get("Content-Type") || "").startsWith("text/event-stream")) {
      await readStream(res.body, (data) => {
        if (data === "[DONE]") return;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new Error(chunk.error.message || JSON.stringify(chunk.error));
        if (chunk.usage) usage = chunk.usage;
        for (const choice of chunk.choices || []) {
          if (choice.index && choice.index !== 0) continue;
          const delta = choice.delta || {};
          const thought = delta.reasoning_content || delta.reasoning;
          if (thought) showReasoning(reasoning.textContent + thought);
          if (delta.content) output.textContent += delta.content;
          if (delta.tool_calls) { addToolCalls(calls, delta.tool_calls); showToolCalls(calls); }
          if (choice.finish_reason) finish = choice.finish_reason;
        }
      });
    } else {
      const answer = await res.json();
      const message = answer.choices?.[0]?.message || {};
      output.textContent = typeof message.content === "string" ? message.content : "";
      showReasoning(message.reasoning_content || message.reasoning || "");
      if (message.tool_calls) { calls.push(...message.tool_calls); showToolCalls(calls); }
      finish = answer.choices?.[0]?.finish_reason || "";
      usage = answer.usage || null;
    }
    status.textContent = "Done" + (finish ? " (" + finish + ")" : "") +
      (usage ? ", " + usage.prompt_tokens + " prompt and " + usage.completion_tokens + " completion tokens" : "") + ".";
    form.dataset.rerun = callID;
    if (callID && form.dataset.original) {
      const diff = document.getElementById("pg-diff");
      diff.href = form.dataset.diff + "?left=" + encodeURIComponent(form.dataset.original) + "&right=" + encodeURIComponent(callID);
      diff.hidden = false;
      document.getElementById("pg-save").hidden = false;
    }
    form.dataset.state = "done";
  } catch (e) {
    status.textContent = "Failed.";
    showError(e.message);
    form.dataset.state = "failed";
  } finally {
    runButton.disabled = false;
  }
}

async function save(event) {
  event.preventDefault();
  showError("");
  const dataset = document.getElementById("pg-dataset").value.trim();
  const res = await fetch(form.dataset.save, {
    method: "POST", headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() }, credentials: "same-origin",
    body: JSON.stringify({ dataset, original: form.dataset.original, rerun: form.dataset.rerun }),
  });
  const answer = await res.json();
  if (!res.ok) {
    showError("Not saved: " + (answer.error?.message || res.status));
    return;
  }
  const saved = document.getElementById("pg-saved");
  saved.href = answer.url;
  saved.textContent = "Saved as " + answer.ref;
  saved.hidden = false;
  form.dataset.saved = answer.ref;
}

function onClick(event) {
  const add = event.target.closest("[data-action=pg-add-message]");
  if (add) {
    const row = document.getElementById("pg-message-template").content.firstElementChild.cloneNode(true);
    document.getElementById("pg-message-list").append(row);
    row.querySelector("textarea").focus();
    return;
  }
  const remove = event.target.closest("[data-action=pg-remove-message]");
  if (remove) remove.closest(".pg-message").remove();
}

if (form) {
  form.addEventListener("submit", run);
  form.addEventListener("click", onClick);
  document.getElementById("pg-save").addEventListener("submit", save);
  form.dataset.ready = "true";
}
