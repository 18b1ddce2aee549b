// Eval run page: poll the run's status, move the progress bar, reload when it finishes
// (the scores and per-item results are rendered server-side).
(function () {
  "use strict";
  // Also a latency replay's page ([data-run-progress]), which reloads when a level is stored.
  var root = document.getElementById("eval-run") || document.querySelector("[data-run-progress]");
  if (!root || root.dataset.finished === "1") return;
  var $ = function (sel) { return root.querySelector(sel); };
  function poll() {
    fetch(root.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (run) {
        $("[data-run-bar]").style.width = run.percent + "%";
        root.querySelector(".progress").setAttribute("aria-valuenow", run.percent);
        $("[data-run-percent]").textContent = run.percent + "%";
        $("[data-run-count]").textContent = run.progress_done + " / " + run.progress_total;
        var badge = $("[data-run-status]");
        badge.textContent = run.status.charAt(0).toUpperCase() + run.status.slice(1);
        badge.className = "badge badge-" + run.status;
        var levels = root.dataset.levels;
        if (run.finished || (levels !== undefined && String(run.levels) !== levels)) { location.reload(); return; }
        setTimeout(poll, 1000);
      })
      .catch(function () { setTimeout(poll, 2500); });
  }
  setTimeout(poll, 700);
})();
