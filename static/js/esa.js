/* Error Span Annotation (templates/volunteer/item_esa.html): the translation
 * becomes words to tap; two taps (or one, twice) select a span, snapped to
 * words, whose ends move by a word; Minor or Major marks it. The hidden field
 * "spans" holds the marks as JSON, offsets in code points of the text (as
 * Python counts them), end exclusive; an omission (the [missing] token) has
 * null offsets. Marks never overlap. A new item ("bozka:item" on the
 * document, from evaluate.js) re-renders the widget and clears the marks.
 * Untrusted text is only ever set with textContent. */
(function () {
  "use strict";
  var root = document.getElementById("esa");
  if (!root) return;
  function $(id) { return document.getElementById(id); }
  var says = root.dataset; // the translated strings
  var textBox = $("esa-text");
  var tools = $("esa-tools");
  var status = $("esa-status");
  var list = $("esa-list");
  var field = $("esa-spans");
  var undoButton = $("esa-undo");
  var context = $("esa-context");
  var previousList = $("esa-previous");
  var moveButtons = root.querySelectorAll("[data-move]");
  var markButtons = root.querySelectorAll("[data-severity]");
  var wide = window.matchMedia ? window.matchMedia("(min-width: 48rem)") : { matches: false };

  // Scripts written without spaces between words: Intl.Segmenter finds them.
  var UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tibetan}]/u;
  var RIGHT_TO_LEFT = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Adlam}]/u;
  var LETTER = /\p{L}/u;
  var OPENING = /^[\p{Ps}\p{Pi}]+$/u;
  var SPACE = /^\s+$/u;

  var points = [];   // the translation's code points
  var words = [];    // {start, end} in code points, end exclusive
  var spans = [];    // marks in the order made: {from, to, severity} (word indices), or {missing, severity}
  var selection = null; // {from, to, open} (open: the end is still to tap), or {missing: true}
  var focusIndex = 0;   // the word (or the [missing] token) reached by Tab

  function format(template, key, value) { return template.replace("%(" + key + ")s", value); }

  /* The words of ``text``: runs between spaces, or Intl.Segmenter's words
   * for unspaced scripts (punctuation joins the word before, opening
   * brackets the word after). */
  function tokenize(text, lang) {
    var out = [];
    if (UNSPACED.test(text) && window.Intl && Intl.Segmenter) {
      var segmenter;
      try { segmenter = new Intl.Segmenter(lang || undefined, { granularity: "word" }); }
      catch (error) { segmenter = new Intl.Segmenter(undefined, { granularity: "word" }); }
      var at = 0, prefix = null;
      Array.from(segmenter.segment(text)).forEach(function (part) {
        var start = at;
        at += Array.from(part.segment).length; // UTF-16 units to code points
        var last = out[out.length - 1];
        if (SPACE.test(part.segment)) { prefix = null; return; }
        if (prefix !== null) { out.push({ start: prefix, end: at }); prefix = null; return; }
        if (!part.isWordLike && OPENING.test(part.segment)) { prefix = start; return; }
        if (!part.isWordLike && last && last.end === start) { last.end = at; return; }
        out.push({ start: start, end: at });
      });
      if (prefix !== null) out.push({ start: prefix, end: at });
      return out;
    }
    var current = null;
    Array.from(text).forEach(function (point, i) {
      if (SPACE.test(point)) { current = null; return; }
      if (current) current.end = i + 1;
      else { current = { start: i, end: i + 1 }; out.push(current); }
    });
    return out;
  }

  function slice(start, end) { return points.slice(start, end).join(""); }
  function wordText(i) { return slice(words[i].start, words[i].end); }
  function spanText(span) { return span.missing ? says.missingToken : slice(words[span.from].start, words[span.to].end); }
  function markOf(i) {
    for (var k = 0; k < spans.length; k++) {
      if (!spans[k].missing && spans[k].from <= i && i <= spans[k].to) return spans[k];
    }
    return null;
  }
  function missingMark() { return spans.filter(function (s) { return s.missing; })[0] || null; }
  function free(from, to) {
    for (var i = from; i <= to; i++) if (markOf(i)) return false;
    return true;
  }
  function buttons() { return textBox.querySelectorAll(".esa-word"); }

  /* A strong direction mark around a word: a button is one neutral object
   * to the bidi algorithm, so without it a Latin phrase in Arabic text (or
   * the reverse) would show its words in the wrong order. */
  function directionMark(word) {
    var letter = word.match(LETTER);
    if (!letter) return "";
    return RIGHT_TO_LEFT.test(letter[0]) ? "\u200F" : "\u200E";
  }

  function render(item) {
    var text = item.translation || "";
    points = Array.from(text);
    words = tokenize(text, textBox.lang);
    spans = [];
    selection = null;
    focusIndex = 0;
    var nodes = [], at = 0;
    words.forEach(function (word, i) {
      if (word.start > at) nodes.push(slice(at, word.start));
      var shown = wordText(i), mark = directionMark(shown);
      var button = document.createElement("button");
      button.type = "button";
      button.className = "esa-word";
      button.setAttribute("data-index", i);
      button.textContent = shown;
      nodes.push(mark, button, mark);
      at = word.end;
    });
    if (at < points.length) nodes.push(slice(at, points.length));
    var missing = document.createElement("button");
    missing.type = "button";
    missing.className = "esa-word esa-missing";
    missing.setAttribute("data-index", words.length);
    missing.setAttribute("dir", "auto");
    missing.textContent = says.missingToken;
    nodes.push(" ", missing);
    textBox.replaceChildren.apply(textBox, nodes);

    var previous = item.previous || [];
    previousList.replaceChildren.apply(previousList, previous.map(function (segment) {
      var li = document.createElement("li");
      li.append(paragraph(segment.source, "source", says.sourceLang, says.sourceDir),
                paragraph(segment.translation, "translation", textBox.lang, textBox.dir));
      return li;
    }));
    context.hidden = previous.length === 0;
    context.open = wide.matches; // folded on a phone, open on a desktop
    update(says.hintStart);
  }

  function paragraph(text, kind, lang, dir) {
    var p = document.createElement("p");
    p.className = "text " + kind;
    p.lang = lang;
    p.dir = dir;
    p.textContent = text;
    return p;
  }

  /* Everything shown follows the state: words, tools, the list, the field. */
  function update(message) {
    var all = buttons();
    all.forEach(function (button, i) {
      var missing = i === words.length;
      var mark = missing ? missingMark() : markOf(i);
      var chosen = selection !== null && (missing ? !!selection.missing
        : !selection.missing && selection.from <= i && i <= selection.to);
      button.classList.toggle("esa-selected", chosen);
      button.classList.toggle("esa-minor", !!mark && mark.severity === "minor");
      button.classList.toggle("esa-major", !!mark && mark.severity === "major");
      button.setAttribute("aria-pressed", chosen ? "true" : "false");
      var name = missing ? says.missingLabel : button.textContent;
      if (mark) button.setAttribute("aria-label", format(mark.severity === "minor" ? says.wordMinor : says.wordMajor, "word", name));
      else if (missing) button.setAttribute("aria-label", name);
      else button.removeAttribute("aria-label");
      button.tabIndex = i === focusIndex ? 0 : -1;
    });
    moveButtons.forEach(function (button) {
      button.disabled = !movable(button.getAttribute("data-move"), Number(button.getAttribute("data-by")));
    });
    markButtons.forEach(function (button) { button.disabled = selection === null; });
    undoButton.disabled = spans.length === 0;
    showList();
    field.value = JSON.stringify(ordered().map(function (span) {
      return span.missing ? { start: null, end: null, severity: span.severity }
        : { start: words[span.from].start, end: words[span.to].end, severity: span.severity };
    }));
    if (message !== undefined) status.textContent = message;
  }

  function ordered() {
    return spans.slice().sort(function (a, b) {
      return (a.missing ? Infinity : a.from) - (b.missing ? Infinity : b.from);
    });
  }

  function showList() {
    var items = ordered().map(function (span) {
      var li = document.createElement("li");
      li.className = "esa-item esa-item-" + span.severity;
      var tag = document.createElement("span");
      tag.className = "esa-tag";
      tag.textContent = span.severity === "minor" ? says.minor : says.major;
      var words = document.createElement("bdi");
      words.className = "esa-quote";
      if (!span.missing) words.lang = textBox.lang;
      words.textContent = spanText(span);
      var remove = document.createElement("button");
      remove.type = "button";
      remove.className = "esa-remove";
      remove.textContent = "×";
      remove.setAttribute("aria-label", format(says.remove, "words", spanText(span)));
      remove.addEventListener("click", function () { removeMark(span, remove); });
      li.append(tag, " ", words, " ", remove);
      return li;
    });
    if (!items.length) {
      var li = document.createElement("li");
      li.className = "esa-none";
      li.textContent = list.getAttribute("data-empty");
      items = [li];
    }
    list.replaceChildren.apply(list, items);
  }

  function movable(end, by) {
    if (selection === null || selection.missing) return false;
    var from = selection.from + (end === "start" ? by : 0);
    var to = selection.to + (end === "end" ? by : 0);
    return from >= 0 && to < words.length && from <= to && free(from, to);
  }

  function selected() { return format(says.selected, "words", spanText(selection)); }

  function tap(i) {
    focusIndex = i;
    if (i === words.length) {
      if (missingMark()) { update(says.overlap); return; }
      selection = { missing: true };
      update(says.hintMissing);
      return;
    }
    if (markOf(i)) { update(says.overlap); return; }
    if (selection && !selection.missing && selection.open) {
      var from = Math.min(selection.from, i), to = Math.max(selection.to, i);
      if (!free(from, to)) { update(says.overlap); return; }
      selection = { from: from, to: to, open: false };
      update(selected());
      return;
    }
    selection = { from: i, to: i, open: true };
    update(selected() + " " + says.hintEnd);
  }

  function move(end, by) {
    if (!movable(end, by)) return;
    if (end === "start") selection.from += by; else selection.to += by;
    selection.open = false;
    update(selected());
  }

  function mark(severity) {
    if (selection === null) return;
    var span = selection.missing ? { missing: true, severity: severity }
      : { from: selection.from, to: selection.to, severity: severity };
    if (span.missing ? missingMark() : !free(span.from, span.to)) { update(says.overlap); return; }
    spans.push(span);
    selection = null;
    update(format(severity === "minor" ? says.markedMinor : says.markedMajor, "words", spanText(span)));
    keepFocus();
  }

  function removeMark(span, button) {
    var place = Array.prototype.indexOf.call(list.querySelectorAll(".esa-remove"), button);
    spans.splice(spans.indexOf(span), 1);
    update(format(says.removed, "words", spanText(span)));
    // The list was drawn again: the focus goes to the next remove button, or back to the text.
    var left = list.querySelectorAll(".esa-remove");
    if (left.length) left[Math.min(place, left.length - 1)].focus({ preventScroll: true });
    else keepFocus();
  }

  // A button that became disabled loses the focus: it goes back to the text.
  function keepFocus() {
    var active = document.activeElement;
    if (active && active !== document.body && !active.disabled && document.contains(active)) return;
    var target = buttons()[focusIndex];
    if (target) target.focus({ preventScroll: true });
  }

  textBox.addEventListener("click", function (event) {
    var button = event.target.closest(".esa-word");
    if (button) tap(Number(button.getAttribute("data-index")));
  });
  textBox.addEventListener("keydown", function (event) {
    var button = event.target.closest(".esa-word");
    if (!button) return;
    var rtl = getComputedStyle(textBox).direction === "rtl";
    var steps = { ArrowRight: rtl ? -1 : 1, ArrowLeft: rtl ? 1 : -1 };
    var last = words.length; // the [missing] token
    var to;
    if (event.key in steps) to = Number(button.getAttribute("data-index")) + steps[event.key];
    else if (event.key === "Home") to = 0;
    else if (event.key === "End") to = last;
    else if (event.key === "Escape" && selection) { selection = null; update(says.hintStart); event.preventDefault(); return; }
    else return;
    event.preventDefault();
    focusIndex = Math.max(0, Math.min(last, to));
    update();
    buttons()[focusIndex].focus();
  });
  moveButtons.forEach(function (button) {
    button.addEventListener("click", function () {
      move(button.getAttribute("data-move"), Number(button.getAttribute("data-by")));
      keepFocus();
    });
  });
  markButtons.forEach(function (button) {
    button.addEventListener("click", function () { mark(button.getAttribute("data-severity")); });
  });
  undoButton.addEventListener("click", function () {
    var span = spans.pop();
    if (!span) return;
    update(format(says.removed, "words", spanText(span)));
    keepFocus();
  });
  document.addEventListener("bozka:item", function (event) {
    if (event.detail) render(event.detail);
  });

  textBox.setAttribute("role", "group");
  tools.hidden = false;
  render(JSON.parse($("esa-item").textContent));
})();
