// Training charts, a plain ES module. uPlot (vendored, loaded before this
// module) draws each figure.chart of a .charts[data-chart] element from the
// JSON the server wrote in its script.chart-data element: one chart per metric, one line per run, the
// runs already aligned on the same steps. The server charts what people look
// for first (data.first: reward, loss, gradient norm, learning rate,
// entropy); every other metric is a button under "More metrics" that reads
// it from the server (data.metric_url) and charts it. Each container keeps
// its charts in a Map (element.charts, metric name → uPlot instance) so that
// what is drawn can be read back. A click on a chart opens that step's page
// (step_url).
// Live pages (.live-charts[data-live]) follow their data over server-sent
// events: a running job's page adds each gradient step as it arrives, a
// model's page each new checkpoint and each change of the latest one; a
// metric not charted gets no chart from them (a first one does), only its
// button. Markup is built only with textContent: no stored value is ever
// parsed as HTML.

const palette = ["#0b5cad", "#b35c00", "#1b7a3d", "#8e3fa8"];
const chartHeight = 180;

function figureFor(box, name) {
  for (const fig of box.querySelectorAll("figure.chart")) {
    if (fig.dataset.metric === name) return fig;
  }
  box.querySelector(".charts-empty")?.remove();
  const fig = document.createElement("figure");
  fig.className = "chart";
  fig.dataset.metric = name;
  const caption = document.createElement("figcaption");
  caption.textContent = name;
  const plot = document.createElement("div");
  plot.className = "chart-plot";
  plot.setAttribute("role", "img");
  plot.setAttribute("aria-label", "Chart of " + name + " by step");
  fig.append(caption, plot);
  box.append(fig);
  return fig;
}

// markers draws the marked steps (saved checkpoints) as dashed lines.
function markers(steps) {
  return (u) => {
    if (!steps.length) return;
    const { ctx, bbox } = u;
    ctx.save();
    ctx.strokeStyle = "#8a94a3";
    ctx.setLineDash([4, 4]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (const step of steps) {
      const x = Math.round(u.valToPos(step, "x", true));
      if (x < bbox.left || x > bbox.left + bbox.width) continue;
      ctx.moveTo(x, bbox.top);
      ctx.lineTo(x, bbox.top + bbox.height);
    }
    ctx.stroke();
    ctx.restore();
  };
}

// decimalsOf is how many decimals x needs (at most 15).
function decimalsOf(x) {
  for (let d = 0; d < 15; d++) {
    const scaled = x * 10 ** d;
    if (Math.abs(scaled - Math.round(scaled)) <= 1e-9 * Math.max(1, Math.abs(scaled))) return d;
  }
  return 15;
}

// tickLabels writes an axis's ticks with as many digits as their spacing
// needs, so that no two ticks read the same ("0 / 0 / 0" for a learning
// rate of 1e-4, "11.918 11.918" for an entropy that barely moves), and very
// small or very large values with an exponent ("1.5e-4").
function tickLabels(u, splits) {
  const ticks = splits.filter((v) => v != null && Number.isFinite(v));
  if (!ticks.length) return splits.map((v) => (v == null ? "" : String(v)));
  let step = Infinity;
  for (let i = 1; i < ticks.length; i++) step = Math.min(step, Math.abs(ticks[i] - ticks[i - 1]));
  const largest = Math.max(...ticks.map(Math.abs));
  if (!(step > 0 && Number.isFinite(step))) step = largest || 1;
  if (largest !== 0 && (largest < 1e-3 || largest >= 1e6)) {
    const digits = decimalsOf(step / 10 ** Math.floor(Math.log10(largest)));
    return splits.map((v) => (v === 0 ? "0" : v.toExponential(digits).replace(/\.?0+e/, "e").replace("e+", "e")));
  }
  const decimals = decimalsOf(step);
  return splits.map((v) => (v == null ? "" : v.toFixed(decimals)));
}

function plot(box, data, metric) {
  const fig = figureFor(box, metric.name);
  const target = fig.querySelector(".chart-plot");
  const width = Math.max(240, Math.floor(target.clientWidth || fig.clientWidth || 480));
  const opts = {
    width,
    height: chartHeight,
    scales: { x: { time: false } },
    series: [{ label: "step" }, ...data.runs.map((run, i) => ({
      label: run, stroke: palette[i % palette.length], width: 1.5, spanGaps: true, points: { show: false },
    }))],
    axes: [{}, { size: 64, values: tickLabels }],
    hooks: { draw: [markers(data.markers)] },
  };
  const u = new window.uPlot(opts, [data.x, ...metric.values], target);
  if (data.step_url) {
    u.over.addEventListener("click", () => {
      const i = u.cursor.idx;
      if (i != null) window.location.assign(data.step_url + data.x[i]);
    });
    u.over.classList.add("clickable");
  }
  return u;
}

function draw(box) {
  const data = JSON.parse(box.querySelector("script.chart-data").textContent);
  box.chartData = data;
  box.charts = new Map();
  // unseen: live values of the metrics not charted, by name and step, kept
  // for when one is charted (its values read from the server may be older).
  box.unseen = new Map();
  for (const metric of data.metrics) box.charts.set(metric.name, plot(box, data, metric));
  const more = box.parentElement.querySelector(":scope > .more-metrics");
  box.more = more;
  more?.addEventListener("click", (event) => {
    const button = event.target.closest("button.metric-choice");
    if (button) chartOnDemand(box, button);
  });
  box.dataset.drawn = String(data.x.length);
}

// chartOnDemand reads one more metric from the server and charts it.
async function chartOnDemand(box, button) {
  const data = box.chartData;
  const name = button.dataset.metric;
  if (box.charts.has(name) || button.disabled) return;
  button.disabled = true;
  const res = await fetch(data.metric_url + encodeURIComponent(name), { headers: { Accept: "application/json" } });
  if (!res.ok) {
    button.disabled = false;
    return;
  }
  const read = await res.json();
  if (box.charts.has(name)) return;
  const at = new Map(read.x.map((step, i) => [step, i]));
  const metric = {
    name,
    values: data.runs.map((_, r) => data.x.map((step) => {
      const i = at.get(step);
      return i === undefined ? null : read.values[r][i];
    })),
  };
  for (const [step, value] of box.unseen.get(name) ?? []) {
    const i = data.x.indexOf(step);
    if (i >= 0) metric.values[0][i] = value;
  }
  box.unseen.delete(name);
  data.metrics.push(metric);
  data.more = data.more.filter((m) => m !== name);
  box.charts.set(name, plot(box, data, metric));
  button.remove();
  countMore(box);
}

// offerMetric adds a button for a metric first seen live.
function offerMetric(box, name) {
  const data = box.chartData;
  if (data.more.includes(name) || !box.more) return;
  data.more.push(name);
  const button = document.createElement("button");
  button.type = "button";
  button.className = "metric-choice secondary";
  button.dataset.metric = name;
  button.textContent = name;
  box.more.querySelector(".metric-choices").append(button, " ");
  countMore(box);
}

function countMore(box) {
  if (!box.more) return;
  const n = box.chartData.more.length;
  box.more.querySelector(".more-count").textContent = String(n);
  box.more.hidden = n === 0;
}

// putPoint sets the first run's (the page's own) values at step: a new step
// is added in order, a step already drawn gets the new values (a model's
// latest checkpoint gains the metrics logged after it). A first metric not
// yet charted gets a chart of its own, any other a button; marked adds the
// step to the markers.
function putPoint(box, step, numbers, marked) {
  const data = box.chartData;
  let i = data.x.indexOf(step);
  if (i < 0) {
    i = data.x.findIndex((s) => s > step);
    if (i < 0) i = data.x.length;
    data.x.splice(i, 0, step);
    for (const metric of data.metrics) {
      for (const values of metric.values) values.splice(i, 0, null);
    }
  }
  for (const [name, value] of Object.entries(numbers)) {
    let metric = data.metrics.find((m) => m.name === name);
    if (metric) {
      metric.values[0][i] = value;
      continue;
    }
    if (!data.first.includes(name)) {
      if (!box.unseen.has(name)) box.unseen.set(name, new Map());
      box.unseen.get(name).set(step, value);
      if (name !== "gradient_step") offerMetric(box, name);
      continue;
    }
    metric = { name, values: data.runs.map(() => data.x.map(() => null)) };
    metric.values[0][i] = value;
    data.metrics.push(metric);
    box.charts.set(name, plot(box, data, metric));
  }
  if (marked && !data.markers.includes(step)) data.markers.push(step);
  for (const metric of data.metrics) box.charts.get(metric.name).setData([data.x, ...metric.values]);
  box.dataset.drawn = String(data.x.length);
}

function addEventRow(type, step, payload) {
  const body = document.querySelector("#events tbody");
  if (!body) return;
  const row = document.createElement("tr");
  row.className = "event-" + type;
  const cells = [String(body.rows.length + 1), type, step ? String(step) : "", JSON.stringify(payload)];
  cells.forEach((text, i) => {
    const td = document.createElement("td");
    td.textContent = text;
    if (i === 0 || i === 2) td.className = "num";
    if (i === 3) td.className = "mono event-data";
    row.append(td);
  });
  body.append(row);
}

// follow listens to a page's live stream (data-live) and hands each event
// to its handler; an "end" event closes it. live.dataset.following says
// whether it is connecting ("connecting": the server has not answered yet),
// listening ("true"), waiting to reconnect ("reconnecting": the stream
// dropped, and the browser reconnects by itself, resuming after the last
// event it had), refused by the server ("closed"), or ended. A dropped
// stream is no error of the page, and nothing is logged. The stream is
// closed when the page is left.
function follow(live, handlers) {
  const source = new EventSource(live.dataset.live);
  live.dataset.following = "connecting";
  for (const [name, handle] of Object.entries(handlers)) {
    if (name !== "end") source.addEventListener(name, (e) => handle(e.data));
  }
  source.addEventListener("end", (e) => {
    source.close();
    live.dataset.following = "ended";
    handlers.end?.(e.data);
  });
  source.addEventListener("open", () => {
    if (live.dataset.following !== "ended") live.dataset.following = "true";
  });
  source.addEventListener("error", () => {
    if (live.dataset.following === "ended") return;
    live.dataset.following = source.readyState === EventSource.CLOSED ? "closed" : "reconnecting";
  });
  window.addEventListener("pagehide", () => source.close());
}

// A page restored from the back-forward cache lost its streams on the way
// in (pagehide): it is loaded afresh.
window.addEventListener("pageshow", (event) => {
  if (event.persisted && document.querySelector(".live-charts[data-live]")) window.location.reload();
});

// jobHandlers: a job's events, each gradient step the next step of its own
// (an overlaid job may have more), and its final status.
function jobHandlers(box) {
  const counter = document.getElementById("job-steps");
  let steps = Number(counter?.textContent) || 0;
  return {
    training(raw) {
      const event = JSON.parse(raw);
      let step = 0;
      if (event.type === "gradient_step") {
        step = ++steps;
        putPoint(box, step, event.numbers || {}, false);
        if (counter) counter.textContent = String(step);
      }
      addEventRow(event.type, step, event.data);
    },
    end(status) {
      const el = document.getElementById("job-status");
      if (el) {
        el.textContent = status;
        el.className = "job-status job-" + status;
      }
    },
  };
}

// modelHandlers: a model's checkpoints, new or with new metrics.
function modelHandlers(box) {
  return {
    checkpoint(raw) {
      const point = JSON.parse(raw);
      putPoint(box, point.step, point.numbers || {}, point.saved);
    },
  };
}

function start() {
  if (!window.uPlot) return;
  const began = performance.now();
  for (const box of document.querySelectorAll(".charts[data-chart]")) draw(box);
  // When the charts were drawn, and how long drawing took (the benchmark's figures).
  document.documentElement.dataset.chartsDrawMs = String(performance.now() - began);
  for (const live of document.querySelectorAll(".live-charts[data-live]")) {
    const box = live.querySelector(".charts[data-chart]");
    if (box) follow(live, live.id === "model-live" ? modelHandlers(box) : jobHandlers(box));
  }
  document.documentElement.dataset.chartsAt = String(performance.now());
}

start();
