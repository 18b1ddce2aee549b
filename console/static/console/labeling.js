// Labeling page: a single pair at a time, the next already fetched. A choice shows the
// prefetched pair at once and posts the label behind it; requests go out in turn
// and the server's answer (the pair to show now and the next) is what the page keeps.
// Keys: 1/A, 2/T, 3/B, 4/X choose; Z undoes the last label; S skips (not while typing).
(function () {
  "use strict";
  var root = document.getElementById("labeling");
  if (!root) return;
  var pairView = document.getElementById("labeling-pair");
  var doneView = document.getElementById("labeling-done");
  var progressView = document.getElementById("labeling-progress");
  var statusView = document.getElementById("labeling-status");
  var reasonBox = document.getElementById("labeling-reason");
  var preview = root.dataset.preview === "1";
  var KEYS = { "1": "a", a: "a", "2": "tie", t: "tie", "3": "b", b: "b", "4": "both_bad", x: "both_bad" };
  var state = { pair: null, next: null, progress: null };
  var shown = null; // the pair on screen
  var shownAt = 0;
  var queue = Promise.resolve();
  var pending = 0;

  function $(sel) { return pairView.querySelector(sel); }

  function say(text, isError) {
    statusView.textContent = text || "";
    statusView.className = "labeling-status" + (isError ? " note note-error" : "");
  }

  function showProgress(progress) {
    if (!progress) return;
    progressView.textContent = progress.done + " labeled of " + progress.available + " available to you";
  }

  function showProduct(product) {
    var list = $("[data-product]");
    list.textContent = "";
    var keys = Object.keys(product || {});
    keys.forEach(function (key) {
      var term = document.createElement("dt");
      term.textContent = key;
      var value = document.createElement("dd");
      value.textContent = product[key];
      list.appendChild(term);
      list.appendChild(value);
    });
    list.hidden = keys.length === 0;
  }

  function show(pair) {
    var wasDone = !doneView.hidden;
    shown = pair;
    if (!pair) {
      pairView.hidden = true;
      doneView.hidden = false;
      if (!wasDone) doneView.querySelector("h2").focus();
      return;
    }
    var fresh = pairView.hidden;
    doneView.hidden = true;
    pairView.hidden = false;
    pairView.dataset.pair = pair.token;
    $("[data-comment]").textContent = pair.comment;
    showProduct(pair.product);
    $("[data-reply-a]").textContent = pair.reply_a;
    $("[data-reply-b]").textContent = pair.reply_b;
    shownAt = Date.now();
    if (fresh) document.getElementById("labeling-comment-title").focus();
  }

  function apply(body) {
    state.pair = body.pair;
    state.next = body.next;
    state.progress = body.progress;
    showProgress(body.progress);
    if (pending === 0 && statusView.textContent === "Loading the next pair…") say("");
    // Show the server's pair unless the page already moved ahead and more answers are due.
    if (pending === 0 && (!shown || !body.pair || shown.token !== body.pair.token)) show(body.pair);
  }

  function request(method, url, payload) {
    var init = {
      method: method,
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    };
    if (method !== "GET") {
      init.headers["Content-Type"] = "application/json";
      init.headers["X-CSRFToken"] = root.dataset.csrf;
      init.body = JSON.stringify(payload || {});
    }
    return fetch(url, init).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (!response.ok) {
          var error = new Error(body.detail || "The server refused (" + response.status + ").");
          throw error;
        }
        return body;
      });
    });
  }

  // Run requests in turn; the last answer wins.
  function enqueue(method, url, payload, after) {
    pending += 1;
    queue = queue.then(function () {
      return request(method, url, payload).then(function (body) {
        pending -= 1;
        if (after) after(body);
        apply(body);
      }, function (error) {
        pending -= 1;
        say(error.message, true);
        return request("GET", root.dataset.nextUrl).then(apply, function () {});
      });
    });
    return queue;
  }

  function moveAhead() {
    // The next pair is already here: show it now, the server confirms behind it. Call it
    // after enqueue(): with nothing prefetched, the page waits for the server's answer.
    var next = state.next;
    state.pair = next;
    state.next = null;
    if (next) { show(next); return; }
    shown = null;
    pairView.hidden = true;
    say("Loading the next pair…");
  }

  function choose(choice) {
    if (preview) { say("Preview: labels are not stored."); return; }
    if (!shown) return;
    var payload = {
      pair: shown.token,
      choice: choice,
      reason: reasonBox.value,
      seconds: Math.round((Date.now() - shownAt) / 100) / 10,
    };
    reasonBox.value = "";
    say("");
    enqueue("POST", root.dataset.labelsUrl, payload);
    moveAhead();
  }

  function skip() {
    if (preview) { say("Preview: nothing to skip."); return; }
    if (!shown) return;
    var payload = { pair: shown.token };
    say("Skipped.");
    enqueue("POST", root.dataset.skipUrl, payload);
    moveAhead();
  }

  function undo() {
    if (preview) { say("Preview: nothing to undo."); return; }
    say("");
    enqueue("POST", root.dataset.undoUrl, {}, function (body) {
      say(body.pair ? "Your last label was taken back." : "");
      shown = null; // show the undone pair again
    });
  }

  root.addEventListener("click", function (event) {
    var button = event.target.closest("button");
    if (!button || !root.contains(button)) return;
    if (button.dataset.choice) choose(button.dataset.choice);
    else if (button.hasAttribute("data-undo")) undo();
    else if (button.hasAttribute("data-skip")) skip();
  });

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    var target = event.target;
    var tag = target && target.tagName;
    if (tag === "TEXTAREA" || tag === "INPUT" || tag === "SELECT" || (target && target.isContentEditable)) return;
    var key = event.key.toLowerCase();
    if (KEYS[key] && !pairView.hidden) { event.preventDefault(); choose(KEYS[key]); }
    else if (key === "z") { event.preventDefault(); undo(); }
    else if (key === "s" && !pairView.hidden) { event.preventDefault(); skip(); }
  });

  if (preview) {
    root.querySelectorAll("[data-choice], [data-undo], [data-skip]").forEach(function (b) {
      b.setAttribute("aria-disabled", "true");
    });
  }
  enqueue("GET", root.dataset.nextUrl);
})();
