// HAT Console: small progressive enhancements. Every page works without this file.
(function () {
  "use strict";

  // Formsets: "Add skill" etc. clone the formset's empty form (<template id="<prefix>-empty">)
  // instead of a round trip. Without JavaScript the button submits and the server adds it.
  function addFormsetEntry(prefix) {
    var total = document.getElementById("id_" + prefix + "-TOTAL_FORMS");
    var template = document.getElementById(prefix + "-empty");
    var list = document.getElementById(prefix + "-entries");
    if (!total || !template || !list) return false;
    var index = parseInt(total.value, 10);
    var html = template.innerHTML.replace(/__prefix__/g, String(index))
      .replace(/__number__/g, String(index + 1));
    var holder = document.createElement("div");
    holder.innerHTML = html.trim();
    var entry = holder.firstElementChild;
    list.appendChild(entry);
    total.value = String(index + 1);
    wireEntry(entry);
    var first = entry.querySelector("input[type=text], textarea");
    if (first) first.focus();
    var count = document.querySelector("[data-count-for='" + prefix + "']");
    if (count) count.textContent = String(index + 1);
    var empty = list.parentElement.querySelector("[data-empty-note]");
    if (empty) empty.hidden = true;
    return true;
  }

  function wireEntry(entry) {
    var remove = entry.querySelector("input[name$='-DELETE']");
    if (remove) {
      var sync = function () { entry.classList.toggle("is-removed", remove.checked); };
      remove.addEventListener("change", sync);
      sync();
    }
    var kind = entry.querySelector("select[name$='-executor_kind']");
    if (kind) {
      var show = function () {
        entry.querySelectorAll("[data-executor]").forEach(function (el) {
          el.hidden = el.getAttribute("data-executor") !== kind.value;
        });
      };
      kind.addEventListener("change", show);
      show();
    }
  }

  function copyText(button) {
    var target = document.getElementById(button.getAttribute("data-copy-target"));
    if (!target) return;
    var text = target.textContent.trim();
    var done = function () {
      var label = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = label; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done);
    } else {
      var range = document.createRange();
      range.selectNodeContents(target);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      try { document.execCommand("copy"); done(); } catch (e) { /* the text stays selected */ }
    }
  }

  document.addEventListener("click", function (event) {
    var add = event.target.closest("[data-add-entry]");
    if (add && addFormsetEntry(add.getAttribute("data-add-entry"))) {
      event.preventDefault();
      return;
    }
    var copy = event.target.closest("[data-copy-target]");
    if (copy) {
      event.preventDefault();
      copyText(copy);
    }
  });

  // Slow POSTs (try-it, connection test): show "Running…" and block double submits. The
  // button is disabled after the submit event, so the form still submits normally.
  document.addEventListener("submit", function (event) {
    var form = event.target.closest("[data-running-form]");
    if (!form || event.defaultPrevented) return;
    form.querySelectorAll("[data-running-label]").forEach(function (button) {
      button.setAttribute("data-idle-label", button.textContent);
      button.textContent = button.getAttribute("data-running-label");
      button.classList.add("is-running");
      setTimeout(function () { button.disabled = true; }, 0);
    });
    form.querySelectorAll("[data-running-note]").forEach(function (note) { note.hidden = false; });
  });

  // Coming back with the Back button restores the page from cache: re-enable its buttons.
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("[data-idle-label]").forEach(function (button) {
      button.textContent = button.getAttribute("data-idle-label");
      button.classList.remove("is-running");
      button.disabled = false;
    });
    document.querySelectorAll("[data-running-note]").forEach(function (note) { note.hidden = true; });
  });

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".entry").forEach(wireEntry);
    // Jump to the first field with an error after a rejected save.
    var firstError = document.querySelector(".field.has-error");
    if (firstError && document.querySelector("[data-focus-first-error]")) {
      firstError.scrollIntoView({ block: "center" });
      var input = firstError.querySelector("input, textarea, select");
      if (input) input.focus({ preventScroll: true });
    }
  });
})();
