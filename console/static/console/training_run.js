// A training run's page: poll the metrics API (only the steps after the last ones it has,
// per stage) and draw one plotly chart per metric, one line per stage; move the stage
// progress bars, ETA and status badges; refresh the running stage's log. Stops polling when
// the run has finished (and reloads once, so the summary and buttons appear).
(function () {
  "use strict";
  var root = document.getElementById("training-run");
  if (!root) return;
  var metricsUrl = root.dataset.metricsUrl;
  var grid = document.querySelector("[data-charts]");
  var moreBox = document.querySelector("[data-charts-more-box]");
  var moreGrid = document.querySelector("[data-charts-more]");
  var moreCount = document.querySelector("[data-charts-more-count]");
  // charts drawn while folded have no width: size them when the section opens
  moreBox.addEventListener("toggle", function () {
    if (moreBox.open && window.Plotly) {
      moreGrid.querySelectorAll(".chart").forEach(function (c) { window.Plotly.Plots.resize(c); });
    }
  });
  var after = {};      // stage id -> last step received
  var data = {};       // metric -> stage id -> {x: [], y: [], name}
  var charts = {};     // metric -> div
  var kinds = {};      // stage id -> label
  var LABELS = { hsa_sft: "HSA-SFT", opd: "General OPD", hsa_rl: "HSA-RL" };
  var COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"];
  var wasFinished = root.dataset.finished === "1";

  // The curves an operator reads first, in this order; every other metric (entropy
  // details, clip ratios, per-component reward spreads, ...) goes under "More metrics".
  var KEY = ["loss", "heldout_loss", "heldout_divergence", "reward", "kl", "grad_norm",
    "learning_rate", "completions/mean_length"];

  function isKey(metric) {
    return KEY.indexOf(metric) >= 0 || /^rewards\/[^/]+\/mean$/.test(metric);
  }

  function rank(metric) {
    var i = KEY.indexOf(metric);
    return i >= 0 ? i : KEY.length;
  }

  function chartFor(metric) {
    if (charts[metric]) return charts[metric];
    var key = isKey(metric);
    var target = key ? grid : moreGrid;
    var empty = grid.querySelector("[data-charts-empty]");
    if (empty) empty.remove();
    var box = document.createElement("div");
    var title = document.createElement("h3");
    title.textContent = metric;
    var div = document.createElement("div");
    div.className = "chart";
    div.setAttribute("data-metric", metric);
    div.setAttribute("role", "img");
    div.setAttribute("aria-label", metric + " by step");
    box.appendChild(title);
    box.appendChild(div);
    // key curves in KEY order, the rest by name
    var names = Object.keys(charts).filter(function (m) { return isKey(m) === key; })
      .concat([metric]).sort(function (a, b) {
        return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
      });
    var next = names[names.indexOf(metric) + 1];
    target.insertBefore(box, next ? charts[next].parentNode : null);
    charts[metric] = div;
    if (!key) {
      moreBox.hidden = false;
      moreCount.textContent = String(moreGrid.children.length);
    }
    return div;
  }

  function draw(metric) {
    if (!window.Plotly) return;
    var stages = data[metric];
    var traces = Object.keys(stages).map(function (sid, i) {
      var s = stages[sid];
      var color = COLORS[i % COLORS.length];
      // a metric logged once (a held-out loss before training) is a marker, not an empty chart
      return { x: s.x, y: s.y, name: s.name, mode: s.x.length > 1 ? "lines" : "markers", type: "scatter", line: { color: color }, marker: { color: color, size: 8 } };
    });
    window.Plotly.react(chartFor(metric), traces, {
      template: "plotly_white", height: 260, margin: { l: 56, r: 12, t: 8, b: 40 },
      xaxis: { title: { text: "step" } }, legend: { orientation: "h", y: 1.1 },
    }, { displaylogo: false, responsive: true });
  }

  function fmtEta(s) {
    if (s === null || s === undefined) return "–";
    if (s < 90) return Math.round(s) + " s";
    if (s < 5400) return Math.round(s / 60) + " min";
    return (s / 3600).toFixed(1) + " h";
  }

  function renderStage(stage) {
    var row = root.querySelector('[data-stage="' + stage.stage_id + '"]');
    if (!row) return;
    row.querySelector("[data-stage-bar]").style.width = stage.percent + "%";
    row.querySelector(".progress").setAttribute("aria-valuenow", stage.percent);
    row.querySelector("[data-stage-steps]").textContent = stage.progress_step + " / " + stage.progress_total;
    row.querySelector("[data-stage-eta]").textContent = fmtEta(stage.eta_seconds);
    var badge = row.querySelector("[data-stage-status]");
    var stopping = stage.status === "running" && stage.cancel_requested;
    badge.textContent = stopping ? "Stopping" : stage.status.charAt(0).toUpperCase() + stage.status.slice(1);
    badge.className = "badge badge-" + (stopping ? "cancelled" : stage.status);
    if (stage.status === "running") refreshLog(row, stage.stage_id);
  }

  function refreshLog(row, sid) {
    fetch(row.dataset.stageUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (s) {
        var pre = document.querySelector('[data-stage-log="' + sid + '"]');
        if (pre) { pre.textContent = s.log_tail.join("\n"); pre.scrollTop = pre.scrollHeight; }
      })
      .catch(function () {});
  }

  function merge(body) {
    var touched = {};
    body.stages.forEach(function (stage) {
      kinds[stage.stage_id] = LABELS[stage.kind] || stage.kind;
      Object.keys(stage.series).forEach(function (metric) {
        var s = stage.series[metric];
        data[metric] = data[metric] || {};
        var line = data[metric][stage.stage_id] = data[metric][stage.stage_id] || { x: [], y: [], name: kinds[stage.stage_id] };
        for (var i = 0; i < s.step.length; i++) { line.x.push(s.step[i]); line.y.push(s.value[i]); }
        if (s.step.length) {
          var last = s.step[s.step.length - 1];
          after[stage.stage_id] = Math.max(after[stage.stage_id] || -1, last);
          touched[metric] = true;
        }
      });
      renderStage(stage);
    });
    Object.keys(touched).forEach(draw);
    var badge = root.querySelector("[data-run-status]");
    badge.textContent = body.run_status.charAt(0).toUpperCase() + body.run_status.slice(1);
    badge.className = "badge badge-" + body.run_status;
    return ["succeeded", "failed", "cancelled"].indexOf(body.run_status) >= 0;
  }

  function query() {
    var parts = Object.keys(after).map(function (sid) { return sid + ":" + after[sid]; });
    return parts.length ? "?after=" + parts.join(",") : "";
  }

  function poll() {
    fetch(metricsUrl + query(), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (body) {
        var finished = merge(body);
        root.setAttribute("data-polled", "true");
        if (finished && !wasFinished) { location.reload(); return; }
        if (!finished) setTimeout(poll, 2000);
      })
      .catch(function () { setTimeout(poll, 4000); });
  }

  function start() {
    if (window.Plotly) poll(); else setTimeout(start, 100);
  }
  document.addEventListener("DOMContentLoaded", start);
})();
