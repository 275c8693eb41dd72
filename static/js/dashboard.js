/* Organisers' dashboard: on each live signal, fetch the panel again (the
 * server renders and escapes it) at most once a second. The sections fold
 * (<details data-fold>): each stays as the organiser left it, across live
 * updates and visits (localStorage). Charts are drawn by Chart.js from the
 * values and texts the server put in data-chart (no inline script: the
 * Content-Security-Policy allows none). */
(function () {
  "use strict";
  var root = document.getElementById("dashboard");
  if (!root) return;
  var panel = document.getElementById("panel");
  var status = document.getElementById("live-status");
  var url = root.getAttribute("data-panel");
  var doc = document.documentElement;
  var STORE = "bozka.dashboard.fold.";
  var busy = false, again = false;

  function stored(key) {
    try { return window.localStorage.getItem(STORE + key); } catch (e) { return null; }
  }

  // Only a state other than the section's default is kept.
  function remember(fold) {
    var key = STORE + fold.getAttribute("data-fold"), state = fold.open ? "open" : "closed";
    try {
      if (state === fold.getAttribute("data-default")) window.localStorage.removeItem(key);
      else window.localStorage.setItem(key, state);
    } catch (e) { /* storage refused: the folds are kept for this page only */ }
  }

  function restoreFolds(scope) {
    scope.querySelectorAll("details[data-fold]").forEach(function (fold) {
      var state = stored(fold.getAttribute("data-fold"));
      if (state) fold.open = state === "open";
    });
  }

  function color(name, fallback) {
    return getComputedStyle(doc).getPropertyValue(name).trim() || fallback;
  }

  function drawCharts(scope) {
    if (!window.Chart) return;
    var rtl = doc.dir === "rtl";
    var ink = color("--ink", "#1d1d1f"), line = color("--line", "#c9ced6");
    window.Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
    window.Chart.defaults.color = ink;
    scope.querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
      var spec = JSON.parse(canvas.getAttribute("data-chart"));
      new window.Chart(canvas, {
        type: "bar",
        data: {
          labels: spec.labels,
          datasets: [{ label: spec.legend, data: spec.values, backgroundColor: color("--accent", "#0b5cad") }],
        },
        options: {
          locale: doc.lang,  // numbers in the interface language
          animation: false,  // redrawn on every live update
          responsive: true,
          maintainAspectRatio: false,
          scales: {
            x: { reverse: rtl, title: { display: true, text: spec.x }, grid: { display: false },
                 ticks: { autoSkip: true, maxRotation: 0 } },
            y: { position: rtl ? "right" : "left", beginAtZero: true, title: { display: true, text: spec.y },
                 grid: { color: line } },
          },
          plugins: {
            legend: { display: true, position: "bottom", rtl: rtl },
            tooltip: { rtl: rtl },
          },
        },
      });
    });
  }

  function forgetCharts(scope) {
    if (!window.Chart) return;
    scope.querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
      var chart = window.Chart.getChart(canvas);
      if (chart) chart.destroy();
    });
  }

  // Replace the panel, keeping what the organiser did to it: folds, the
  // sideways scroll of each table, and the focus on a section's heading.
  function replacePanel(html) {
    var folds = {}, scrolls = {};
    panel.querySelectorAll("details[data-fold]").forEach(function (fold) {
      folds[fold.getAttribute("data-fold")] = fold.open;
    });
    panel.querySelectorAll(".table-scroll[aria-label]").forEach(function (box) {
      scrolls[box.getAttribute("aria-label")] = box.scrollLeft;
    });
    var focused = document.activeElement && panel.contains(document.activeElement) &&
      document.activeElement.matches("details[data-fold] > summary")
      ? document.activeElement.parentNode.getAttribute("data-fold") : null;
    // A focused link (a volunteer's review page) keeps the focus: same address, new panel.
    var link = document.activeElement && panel.contains(document.activeElement) &&
      document.activeElement.matches("a[href]") ? document.activeElement.getAttribute("href") : null;
    forgetCharts(panel);
    panel.innerHTML = html;
    panel.querySelectorAll("details[data-fold]").forEach(function (fold) {
      var key = fold.getAttribute("data-fold");
      if (key in folds) fold.open = folds[key];
    });
    panel.querySelectorAll(".table-scroll[aria-label]").forEach(function (box) {
      var left = scrolls[box.getAttribute("aria-label")];
      if (left) box.scrollLeft = left;
    });
    if (focused) {
      var summary = panel.querySelector('details[data-fold="' + focused + '"] > summary');
      if (summary) summary.focus();
    }
    if (link) {
      var same = Array.prototype.find.call(panel.querySelectorAll("a[href]"), function (a) {
        return a.getAttribute("href") === link;
      });
      if (same) same.focus();
    }
    drawCharts(panel);
  }

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(url, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) { if (html !== null) replacePanel(html); })
      .finally(function () {
        busy = false;
        if (again) { again = false; setTimeout(refresh, 1000); }
      });
  }

  // "toggle" does not bubble: listen while it goes down to the <details>.
  root.addEventListener("toggle", function (event) {
    var fold = event.target;
    if (fold.matches && fold.matches("details[data-fold]")) remember(fold);
  }, true);
  restoreFolds(root);
  // A link to a section (the lifecycle's next step) unfolds it.
  function unfoldTarget() {
    var target = window.location.hash && document.getElementById(window.location.hash.slice(1));
    if (target && target.matches("details[data-fold]")) target.open = true;
  }
  window.addEventListener("hashchange", unfoldTarget);
  unfoldTarget();
  drawCharts(root);

  if (!window.io) return;
  var socket = window.io({ transports: ["websocket", "polling"] });
  socket.on("connect", function () {
    socket.emit("watch", { campaign: root.getAttribute("data-campaign") });
    status.textContent = "";
    refresh(); // catch up after a reconnect
  });
  socket.on("disconnect", function () { status.textContent = "…"; });
  socket.on("dashboard", refresh);
  socket.on("bye", function () { socket.disconnect(); }); // logged out or a new password
})();
