/* Organisers' dashboard: on each live signal, fetch the panel again (the
 * server renders and escapes it) at most once a second. */
(function () {
  "use strict";
  var root = document.getElementById("dashboard");
  if (!root || !window.io) return;
  var panel = document.getElementById("panel");
  var status = document.getElementById("live-status");
  var url = root.getAttribute("data-panel");
  var busy = false, again = false;

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(url, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) { if (html !== null) panel.innerHTML = html; })
      .finally(function () {
        busy = false;
        if (again) { again = false; setTimeout(refresh, 1000); }
      });
  }

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
