// Raw YAML editor: keep the line-number gutter in step with the textarea, and let each
// "line L, column C" error link put the caret on that spot (keyboard and mouse alike).
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var frame = document.querySelector("[data-yaml-editor]");
    if (!frame) return;
    var area = frame.querySelector("textarea");
    var gutter = frame.querySelector(".code-gutter");
    if (!area || !gutter) return;
    var minRows = 36;
    var maxGutterLines = 20000; // as MAX_GUTTER_LINES in console/views/editor.py

    function lineCount() {
      var text = area.value;
      var count = text.split("\n").length;
      return text.endsWith("\n") ? count - 1 : count;
    }

    function refresh() {
      var count = Math.max(lineCount(), 1);
      area.rows = Math.max(minRows, count + 2);
      count = Math.min(count, maxGutterLines);
      var items = gutter.children;
      while (items.length > count) gutter.removeChild(gutter.lastElementChild);
      while (items.length < count) {
        var li = document.createElement("li");
        li.textContent = String(items.length + 1);
        gutter.appendChild(li);
      }
    }

    function offsetOf(line, column) {
      var lines = area.value.split("\n");
      var offset = 0;
      for (var i = 0; i < line - 1 && i < lines.length; i++) offset += lines[i].length + 1;
      var current = lines[line - 1] || "";
      return { start: offset + Math.min(column - 1, current.length), end: offset + current.length };
    }

    function goTo(line, column) {
      var spot = offsetOf(line, column);
      area.focus({ preventScroll: true });
      area.setSelectionRange(spot.start, spot.end);
      var mark = frame.querySelector('.code-gutter [data-error-line="' + line + '"]');
      (mark || area).scrollIntoView({ block: "center" });
    }

    area.addEventListener("input", refresh);
    document.querySelectorAll("a[data-yaml-line]").forEach(function (link) {
      link.addEventListener("click", function (event) {
        event.preventDefault();
        goTo(Number(link.dataset.yamlLine), Number(link.dataset.yamlColumn || 1));
      });
    });
    refresh();
    var first = document.querySelector("a[data-yaml-line]");
    if (first) {
      var spot = offsetOf(Number(first.dataset.yamlLine), Number(first.dataset.yamlColumn || 1));
      area.setSelectionRange(spot.start, spot.end);
    }
  });
})();
