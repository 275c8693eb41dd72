/* Bozka evaluation page: judging without reloads, live ranking and progress.
 * The page works without this file as a plain form. Untrusted text (MT
 * output, usernames) is only ever set with textContent. */
(function () {
  "use strict";
  var form = document.getElementById("task");
  if (!form) return;
  var i18n = JSON.parse(document.getElementById("i18n").textContent);
  var known = new Set(i18n.known_tickets || []);
  var api = form.getAttribute("data-api");
  var slug = form.getAttribute("data-campaign");
  var csrf = form.querySelector("input[name=csrf_token]").value;
  var tokenInput = form.querySelector("input[name=token]");
  var nextButton = document.getElementById("next");
  var sending = document.getElementById("sending");
  var notices = document.getElementById("notices");
  var missing = document.getElementById("missing"); // "no answer yet", beside the answers
  var pending = null; // the answer being sent: {token, choice} or {token, score}
  // Numbers as the server's Babel writes them in the interface language
  // (the browser may lack the language's data: Chromium formats Basque
  // "1,190", Babel "1.190"). The page carries 1,000,000 in that format.
  var million = i18n.million || "1000000";
  var group = million.length > 7 ? million.charAt(1) : "";
  var numberFormat = {
    format: function (n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, group); },
  };

  function $(id) { return document.getElementById(id); }

  function notice(text, kind) {
    var p = document.createElement("p");
    p.className = "flash flash-" + (kind || "info");
    p.textContent = text;
    notices.replaceChildren(p);
  }

  // The answer's fields (radios, a score) carry data-answer; each item's
  // texts go where data-text names them. The same code serves every protocol.
  var answerNames = Array.from(new Set(Array.prototype.map.call(
    form.querySelectorAll("[data-answer]"), function (el) { return el.name; })));
  form.noValidate = true; // the page says what is missing, in its own language

  function showItem(item) {
    form.querySelectorAll("[data-text]").forEach(function (el) {
      el.textContent = item[el.getAttribute("data-text")];
    });
    tokenInput.value = item.token;
    // The report form names the item shown: the new one.
    var reportToken = $("report-token");
    if (reportToken) reportToken.value = item.token;
    if ($("report")) $("report").open = false;
    form.querySelectorAll("input[type=radio][data-answer]").forEach(function (r) { r.checked = false; });
    form.dispatchEvent(new Event("bozka:item"));
    // A protocol's own script (esa.js) draws the new item and resets its fields.
    document.dispatchEvent(new CustomEvent("bozka:item", { detail: item }));
    hideMissing();
    // Keep the volunteer at the task: back to the new item's start only if
    // they had scrolled past it (a long item), and to a notice above it (a
    // new ticket); the answers stay on the screen in their bar (bozka.css).
    var start = notices.childElementCount ? notices : form;
    $("question").focus({ preventScroll: true });
    if (start.getBoundingClientRect().top < 0) start.scrollIntoView({ block: "start" });
  }

  function showMissing(text) {
    if (!missing) { notice(text, "error"); return; }
    missing.textContent = text;
    missing.classList.add("flash", "flash-error"); // an error only while shown
    missing.hidden = false;
  }

  function hideMissing() {
    if (!missing) return;
    missing.hidden = true;
    missing.classList.remove("flash", "flash-error");
  }
  // An answer given (a radio, the slider, a key) takes the message away.
  form.addEventListener("change", function (event) {
    if (event.target.hasAttribute("data-answer")) hideMissing();
  });

  function apply(data, resent) {
    if (data.mine) $("mine").innerHTML = data.mine; // server-rendered and escaped
    // Tickets not seen yet: the new one, or one won by an answer whose
    // response was lost (its resend comes back "stale"). data.tickets holds
    // the latest few numbers (data.tickets_count says how many in all): a
    // number won since is always among them, numbers only grow.
    var won = (data.tickets || []).concat(data.new_ticket ? [data.new_ticket] : [])
      .filter(function (number) { return !known.has(number); });
    won.forEach(function (number) { known.add(number); });
    // The answer that won a ticket always says so, even when the live
    // update about it arrived first (it may: the ticker runs after the commit).
    var latest = data.new_ticket || won[won.length - 1];
    if (latest) {
      notice(i18n.ticket.replace("%(number)s", latest), "ticket");
    } else if (data.counted === false) {
      notice(i18n.not_counted, "info");
    } else if (data.status === "stale") {
      // A resend found its answer already counted (the first attempt's
      // response was lost): nothing to say, and any ticket notice the live
      // update brought meanwhile stays.
      if (!resent) notice(i18n.stale, "info");
    } else {
      notices.replaceChildren();
    }
    if (!data.item) {
      // Dismissed, finished or closed: the server's page says it best.
      window.location.assign(form.action);
      return;
    }
    showItem(data.item);
  }

  function send(attempt) {
    fetch(api, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
      body: JSON.stringify(pending),
    }).then(function (response) {
      if (response.status >= 500) throw new Error("server");
      if (!response.ok) { window.location.assign(form.action); return null; }
      return response.json();
    }).then(function (data) {
      if (!data) return;
      pending = null;
      sending.hidden = true;
      nextButton.disabled = false;
      apply(data, attempt > 0);
    }).catch(function () {
      // Lost connection: keep the answer and send the same token again;
      // the server counts it once whatever happens.
      sending.hidden = false;
      var delay = Math.min(10000, 500 * Math.pow(2, attempt));
      setTimeout(function () { send(attempt + 1); }, delay);
    });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (pending) return; // a double click sends nothing more
    var answer = { token: tokenInput.value };
    for (var i = 0; i < answerNames.length; i++) {
      var field = form.elements[answerNames[i]];
      var first = field.length ? field[0] : field;
      if (field.value === "") { showMissing(first.getAttribute("data-missing")); return; }
      answer[answerNames[i]] = first.type === "number" ? Number(field.value) : field.value;
    }
    pending = answer;
    nextButton.disabled = true;
    send(0);
  });

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target && (target.tagName === "INPUT" && target.type !== "radio" && target.type !== "range" ||
                   target.tagName === "TEXTAREA" || target.tagName === "SELECT")) return;
    var map = { "1": "left", "2": "right", "3": "equal", "=": "equal" };
    var radio = map[event.key] && form.querySelector("input[name=choice][value=" + map[event.key] + "]");
    if (radio) {
      radio.checked = true;
      radio.dispatchEvent(new Event("change", { bubbles: true }));
      radio.focus();
      event.preventDefault();
    } else if (event.key === "Enter" && target && target.tagName !== "BUTTON" && target.tagName !== "A") {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  /* Live ranking and progress. */
  function row(entry, prizes) {
    var li = document.createElement("li");
    if (entry.me) li.classList.add("me");
    if (entry.r <= prizes) li.classList.add("prize");
    var rank = document.createElement("span");
    rank.className = "rank";
    rank.textContent = entry.r;
    var name = document.createElement("bdi");
    name.className = "name";
    name.textContent = entry.n === null ? i18n.anonymous : entry.n;
    var count = document.createElement("span");
    count.className = "count";
    count.textContent = numberFormat.format(entry.c);
    li.append(rank, " ", name, " ", count);
    return li;
  }

  function list(id, rows, prizes, emptyText) {
    var items = rows.map(function (entry) { return row(entry, prizes); });
    if (!items.length) {
      var li = document.createElement("li");
      li.className = "empty";
      li.textContent = emptyText;
      items = [li];
    }
    $(id).replaceChildren.apply($(id), items);
  }

  var prizes = Number(form.getAttribute("data-prizes"));  // the live ranking event sends it again
  function onRanking(data) {
    prizes = data.prizes;
    var bar = $("progress-bar");
    if (data.settled) {  // sequential assignment: towards the pairs decided
      bar.max = data.settled[1] || 1;
      bar.value = data.settled[0];
      document.querySelector("[data-field=settled]").textContent = numberFormat.format(data.settled[0]);
      document.querySelector("[data-field=pairs]").textContent = numberFormat.format(data.settled[1]);
    } else {
      bar.max = data.target || 1;
      bar.value = data.collected;
      document.querySelector("[data-field=target]").textContent = numberFormat.format(data.target);
    }
    document.querySelector("[data-field=collected]").textContent = numberFormat.format(data.collected);
    document.querySelector("[data-field=volunteers]").textContent = numberFormat.format(data.volunteers);
    document.querySelector("[data-field=last]").textContent =
      data.last ? (data.last.n === null ? i18n.anonymous : data.last.n) : "";
    list("top", data.top, prizes, i18n.nobody);
  }

  var lastRank = null;
  function onMe(data) {
    list("around", data.around, prizes, data.held ? i18n.reviewing : i18n.unranked);
    if (data.rank && data.rank !== lastRank) {
      // Announced politely to screen readers; shown in the list above.
      if (lastRank !== null) $("rank-announce").textContent = i18n.rank.replace("%(rank)s", data.rank);
      lastRank = data.rank;
    }
    (data.tickets || []).forEach(function (number) {
      if (!known.has(number)) {
        known.add(number);
        notice(i18n.ticket.replace("%(number)s", number), "ticket");
      }
    });
    if (data.dismissed) window.location.assign(form.action);
  }

  if (window.io) {
    var socket = window.io({ transports: ["websocket", "polling"] });
    socket.on("connect", function () { socket.emit("join", { campaign: slug }); });
    socket.on("ranking", onRanking);
    socket.on("me", onMe);
    socket.on("bye", function () { socket.disconnect(); }); // logged out or a new password
    socket.on("announcement", function (data) {
      // Kept on the page until dismissed (the server keeps it for later visitors too).
      if (!data || typeof data.text !== "string") return;
      $("announcement-text").textContent = data.text;
      $("announcement-id").value = data.id === null || data.id === undefined ? "" : String(data.id);
      $("announcement").hidden = false;
    });
  }
})();
