// Hover definitions for glossary terms (issue 28). The build gives every link to a glossary term
// its definition (site_src/publishing/mkdocs_hooks.py, define_terms): data-fc-term, a title for
// hover without JavaScript, and aria-describedby pointing at the definition in a hidden section.
// This shows it as a tooltip on hover and on keyboard focus; on a touch screen the first tap shows
// it and a second tap follows the link to the glossary. Escape closes it.
// Started by assets/pages.js on the page as loaded and after each of Material's instant navigations.
(function () {
  "use strict";

  var tip = null;
  var owner = null;
  var touched = false;  // the last pointer to go down was a finger

  function ensureTip() {
    if (tip && document.body.contains(tip)) return tip;
    tip = document.createElement("div");
    tip.className = "fc-term-tip";
    tip.setAttribute("role", "tooltip");
    tip.id = "fc-term-tip";
    tip.hidden = true;
    document.body.appendChild(tip);
    return tip;
  }

  function hide() {
    if (tip) tip.hidden = true;
    owner = null;
  }

  function show(link) {
    var def = document.getElementById(link.getAttribute("aria-describedby"));
    if (!def) return;
    ensureTip();
    owner = link;
    tip.textContent = "";
    var name = document.createElement("strong");
    name.textContent = (link.dataset.fcName || link.textContent.trim()) + ": ";
    tip.appendChild(name);
    tip.appendChild(document.createTextNode(def.textContent));
    if (touched) {
      var hint = document.createElement("span");
      hint.className = "fc-term-tip__hint";
      hint.textContent = " Tap the term again for the glossary.";
      tip.appendChild(hint);
    }
    tip.hidden = false;
    var r = link.getBoundingClientRect();
    var width = document.documentElement.clientWidth;
    var left = Math.min(r.left, width - tip.offsetWidth - 8);
    tip.style.left = (window.scrollX + Math.max(8, left)) + "px";
    // Below the term, or above it when there is no room below.
    var below = r.bottom + 6 + tip.offsetHeight <= window.innerHeight;
    tip.style.top = (window.scrollY + (below ? r.bottom + 6 : r.top - 6 - tip.offsetHeight)) + "px";
  }

  function setup() {
    Array.prototype.forEach.call(document.querySelectorAll("a[data-fc-term]"), function (link) {
      if (link.fcReady) return;  // a property: a copy of the page saved by the browser sets up again
      link.fcReady = true;
      // The tooltip replaces the browser's own (which would show the same text a second time).
      var title = link.getAttribute("title") || "";
      link.dataset.fcName = title.split(": ")[0];
      link.removeAttribute("title");
      link.addEventListener("mouseenter", function () { if (!touched) show(link); });
      link.addEventListener("mouseleave", function () { if (!touched && owner === link) hide(); });
      link.addEventListener("focus", function () { if (!touched) show(link); });  // a tap: see click
      link.addEventListener("blur", function () { if (owner === link) hide(); });
      link.addEventListener("click", function (ev) {
        if (touched && (owner !== link || tip.hidden)) {
          ev.preventDefault();  // first tap: the definition; the next one follows the link
          show(link);
        }
      });
    });
  }

  document.addEventListener("pointerdown", function (ev) {
    touched = ev.pointerType === "touch";
    if (owner && ev.target !== owner && !owner.contains(ev.target)) hide();
  }, true);
  document.addEventListener("keydown", function (ev) { if (ev.key === "Escape") hide(); });

  (window.fcOnEveryPage || function (f) { f(); })(function () { hide(); setup(); });
})();
