/* The Direct Assessment slider: it starts with no value (no thumb shown,
 * the score box empty) and gives the score only once moved, by touch, mouse
 * or keyboard. The number box stays the form's field; without this file it
 * is what the volunteer fills in. */
(function () {
  "use strict";
  var box = document.querySelector("[data-slider]");
  if (!box) return;
  var number = box.querySelector("input[type=number]");
  var slider = box.querySelector("input[type=range]");
  var shown = box.querySelector("output");
  var unset = box.getAttribute("data-unset");
  var form = number.form;

  function set(value) {
    value = Math.max(0, Math.min(100, Math.round(value)));
    slider.value = value;
    slider.classList.remove("untouched");
    number.value = value;
    shown.textContent = value;
    slider.setAttribute("aria-valuetext", String(value));
    // The score is given: the judging page takes its "move the slider" away.
    number.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function reset() {
    slider.value = 50;
    slider.classList.add("untouched");
    number.value = "";
    shown.textContent = "–";
    slider.setAttribute("aria-valuetext", unset);
  }

  number.hidden = true;
  box.querySelector("label").htmlFor = slider.id;
  box.querySelector(".slider-box").hidden = false;
  reset();
  slider.addEventListener("input", function () { set(Number(slider.value)); });
  // A tap or click where the hidden thumb already sits (the middle) changes
  // nothing, so no "input" comes: it still gives that score.
  slider.addEventListener("pointerup", function () {
    if (slider.classList.contains("untouched")) set(Number(slider.value));
  });
  slider.addEventListener("keydown", function (event) {
    // One rule in every browser (and mirrored in right-to-left pages); the
    // first key gives the middle, not a step from an invisible value.
    var rtl = getComputedStyle(slider).direction === "rtl";
    var steps = { ArrowUp: 1, ArrowDown: -1, PageUp: 10, PageDown: -10,
                  ArrowRight: rtl ? -1 : 1, ArrowLeft: rtl ? 1 : -1 };
    var current = slider.classList.contains("untouched") ? null : Number(slider.value);
    if (event.key === "Home") set(0);
    else if (event.key === "End") set(100);
    else if (event.key in steps) set(current === null ? 50 : current + steps[event.key]);
    else return;
    event.preventDefault();
  });
  form.addEventListener("bozka:item", reset);
})();
