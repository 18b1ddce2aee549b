// Poll a job's JSON status and move its progress bar until the job finishes.
(function () {
  "use strict";
  var root = document.getElementById("job");
  if (!root || root.dataset.finished === "1") return;
  var url = root.dataset.statusUrl;
  var $ = function (sel) { return root.querySelector(sel); };
  function render(job) {
    $("[data-job-bar]").style.width = job.percent + "%";
    root.querySelector(".progress").setAttribute("aria-valuenow", job.percent);
    $("[data-job-percent]").textContent = job.percent + "%";
    $("[data-job-count]").textContent = job.progress_done + " / " + job.progress_total;
    var badge = $("[data-job-status]");
    badge.textContent = job.status.charAt(0).toUpperCase() + job.status.slice(1);
    badge.className = "badge badge-" + job.status;
    if (job.failures) $("[data-job-failures]").textContent = "(" + job.failures + " failed verification)";
    if (job.output_id) {
      $("[data-job-output]").hidden = false;
      $("[data-job-output-link]").href = "/training/datasets/" + job.output_id + "/";
    }
    return ["succeeded", "failed", "cancelled"].indexOf(job.status) >= 0;
  }
  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (job) {
        if (render(job)) { var f = root.querySelector("[data-job-cancel]"); if (f) f.remove(); if (job.error) location.reload(); }
        else setTimeout(poll, 700);
      })
      .catch(function () { setTimeout(poll, 2000); });
  }
  setTimeout(poll, 500);
})();
