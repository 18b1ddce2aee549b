"use strict";
// HSA preview: highlight every renamed identifier in both columns (a file, not an inline
// script, so the Content-Security-Policy can refuse inline script).
document.addEventListener("DOMContentLoaded", function () {
  var data = document.getElementById("hsa-renames");
  if (!data) return;
  var renames = JSON.parse(data.textContent);
  function esc(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }
  [["old", 1], ["new", 2]].forEach(function (side) {
    var el = document.querySelector('[data-highlight="' + side[0] + '"]');
    var names = renames.map(function (r) { var n = r[side[1]]; return n.indexOf(".") > 0 && r[0] === "parameter" ? n.split(".").pop() : n; });
    if (!el || !names.length) return;
    var re = new RegExp("\\b(" + names.map(esc).join("|") + ")\\b", "g");
    var text = el.textContent;
    el.textContent = "";
    var last = 0, m;
    while ((m = re.exec(text))) {
      el.appendChild(document.createTextNode(text.slice(last, m.index)));
      var mark = document.createElement("mark"); mark.className = side[0]; mark.textContent = m[0];
      el.appendChild(mark); last = m.index + m[0].length;
    }
    el.appendChild(document.createTextNode(text.slice(last)));
  });
});
