// HAT Console: draw the plotly figures a page embeds. Each chart is an element with
// data-plotly-figure="<id>" next to a <script type="application/json" id="<id>"> holding the
// figure (built server-side by console/charts.py). plotly.js is served from the installed
// plotly package (see console/views/vendor.py), never a CDN.
(function () {
  "use strict";

  function draw() {
    if (!window.Plotly) return;
    document.querySelectorAll("[data-plotly-figure]").forEach(function (el) {
      var source = document.getElementById(el.getAttribute("data-plotly-figure"));
      if (!source) return;
      var figure = JSON.parse(source.textContent);
      window.Plotly.newPlot(el, figure.data || [], figure.layout || {}, {
        displaylogo: false,
        responsive: true,
        modeBarButtonsToRemove: ["select2d", "lasso2d"],
      });
      el.setAttribute("data-plotly-drawn", "true");
    });
  }

  document.addEventListener("DOMContentLoaded", draw);
})();
