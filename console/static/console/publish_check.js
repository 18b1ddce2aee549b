// Publish page: while the safety check runs, poll its status, move the progress bar and
// reload when the verdict is in (the deltas and the publish or override form are
// rendered server-side).
(function () {
  "use strict";
  var root = document.getElementById("publish-check");
  if (!root || root.dataset.decided === "1") return;
  var $ = function (sel) { return root.querySelector(sel); };
  function poll() {
    fetch(root.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (check) {
        $("[data-check-bar]").style.width = check.percent + "%";
        $(".progress").setAttribute("aria-valuenow", check.percent);
        $("[data-check-count]").textContent = check.done + " / " + check.total;
        if (check.decided) { location.reload(); return; }
        setTimeout(poll, 1000);
      })
      .catch(function () { setTimeout(poll, 2500); });
  }
  setTimeout(poll, 700);
})();
