/* The document's earlier segments above an item (templates/volunteer/item_da.html):
 * redrawn for each new item ("bozka:item" on the document, from evaluate.js),
 * folded on a phone and open on a desktop, hidden at a document's start.
 * Untrusted text is only ever set with textContent. */
(function () {
  "use strict";
  var context = document.getElementById("doc-context");
  if (!context) return;
  var list = document.getElementById("doc-previous");
  var says = context.dataset;
  var wide = window.matchMedia ? window.matchMedia("(min-width: 48rem)") : { matches: false };

  function paragraph(text, kind, lang, dir) {
    var p = document.createElement("p");
    p.className = "text " + kind;
    p.lang = lang;
    p.dir = dir;
    p.textContent = text;
    return p;
  }

  function draw(previous) {
    list.replaceChildren.apply(list, previous.map(function (segment) {
      var li = document.createElement("li");
      if (segment.source !== null && segment.source !== undefined) {
        li.append(paragraph(segment.source, "source", says.contextLang, says.contextDir));
      }
      li.append(paragraph(segment.translation, "translation", says.translationLang, says.translationDir));
      return li;
    }));
    context.hidden = previous.length === 0;
    context.open = wide.matches;
  }

  document.addEventListener("bozka:item", function (event) { draw(event.detail.previous || []); });
  context.open = wide.matches;
})();
