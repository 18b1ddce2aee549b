// Judge page: poll a running calibration and move its progress bar; reload when it ends so
// the report, the heatmap and the trust badge show.
(function () {
  "use strict";
  var root = document.getElementById("calibration");
  if (!root) return;
  var url = root.dataset.statusUrl;
  function render(cal) {
    root.querySelector("[data-cal-bar]").style.width = cal.percent + "%";
    root.querySelector(".progress").setAttribute("aria-valuenow", cal.percent);
    root.querySelector("[data-cal-count]").textContent = cal.progress_done + " / " + cal.progress_total;
    var badge = root.querySelector("[data-cal-status]");
    badge.textContent = cal.status.charAt(0).toUpperCase() + cal.status.slice(1);
    badge.className = "badge badge-" + cal.status;
    return cal.status === "succeeded" || cal.status === "failed";
  }
  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (cal) { if (render(cal)) location.reload(); else setTimeout(poll, 800); })
      .catch(function () { setTimeout(poll, 2000); });
  }
  setTimeout(poll, 500);
})();
