// Blind test page: while replies are generated, poll the test's status, move the progress
// bar, and reload once generation ends (the pairs and results are rendered server-side).
(function () {
  "use strict";
  var root = document.getElementById("blind-test");
  if (!root || root.dataset.finished === "1") return;
  var $ = function (sel) { return root.querySelector(sel); };
  function poll() {
    fetch(root.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (test) {
        $("[data-blind-bar]").style.width = test.percent + "%";
        root.querySelector(".progress").setAttribute("aria-valuenow", test.percent);
        $("[data-blind-percent]").textContent = test.percent + "%";
        $("[data-blind-count]").textContent = test.progress_done + " / " + test.progress_total;
        var badge = $("[data-blind-status]");
        badge.textContent = test.status_display;
        badge.className = "badge badge-" + test.status;
        if (test.finished) { location.reload(); return; }
        setTimeout(poll, 1000);
      })
      .catch(function () { setTimeout(poll, 2500); });
  }
  setTimeout(poll, 700);
})();
