// Training charts, a plain ES module. uPlot (vendored, loaded before this
// module) draws each figure.chart of a .charts[data-chart] element from the
// JSON the server wrote in its script.chart-data element: one chart per metric, one line per run, the
// runs already aligned on the same steps. Each container keeps its charts in
// a Map (element.charts, metric name → uPlot instance) so that what is drawn
// can be read back. A click on a chart opens that step's page (step_url).
// Live pages (.live-charts[data-live]) follow their data over server-sent
// events: a running job's page adds each gradient step as it arrives, a
// model's page each new checkpoint and each change of the latest one. Markup is
// built only with textContent: no stored value is ever parsed as HTML.

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
    axes: [{}, { size: 64 }],
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
  for (const metric of data.metrics) box.charts.set(metric.name, plot(box, data, metric));
  box.dataset.drawn = String(data.x.length);
}

// putPoint sets the first run's (the page's own) values at step: a new step
// is added in order, a step already drawn gets the new values (a model's
// latest checkpoint gains the metrics logged after it). A metric not yet
// charted gets a chart of its own; marked adds the step to the markers.
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
    if (!metric) {
      metric = { name, values: data.runs.map(() => data.x.map(() => null)) };
      metric.values[0][i] = value;
      data.metrics.push(metric);
      box.charts.set(name, plot(box, data, metric));
      continue;
    }
    metric.values[0][i] = value;
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
// whether it is listening ("true"), waiting to reconnect ("reconnecting": the
// stream dropped, and the browser reconnects by itself, resuming after the
// last event it had), refused by the server ("closed"), or ended. A dropped
// stream is no error of the page, and nothing is logged. The stream is
// closed when the page is left.
function follow(live, handlers) {
  const source = new EventSource(live.dataset.live);
  live.dataset.following = "true";
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
