// What every page's scripts share. Loaded on every page before Material's bundle
// (overrides/main.html), so that it is in place before the bundle asks for anything.
//
// - window.fcOnEveryPage(setup): runs `setup` on the page as loaded, and again after each of
//   Material's instant navigations (`document$`). Material's `document$` alone is not enough: in
//   a copy of the site opened from disk (file://) Material turns instant navigation off, and the
//   empty stream it subscribes `document$` to completes it before it ever fires (issue 47). Each
//   setup must be idempotent: it runs at least once per page, sometimes twice.
// - The scripts a page needs, loaded only where their elements are (issue 47: 60 kB of
//   calculator scripts on pages with no calculator): the calculator and the interactive figures,
//   the results explorer, the glossary's tooltips. In the order listed (async = false), from the
//   folder this script came from, so they load at any address and from disk.
// - The left navigation on a laptop: the link that Material's scrolling leaves half under the
//   navigation's sticky title is shown whole.
// - Material's search index (half a megabyte): its request is held until the reader turns to
//   search (the search box takes focus or is tapped, by mouse, finger, keyboard or shortcut), or
//   a page is opened to highlight a search's words (?h=). Material makes the request as it always
//   does; only its sending waits. Without this script the index loads at once, as before.
(function () {
  "use strict";
  if (window.fcOnEveryPage) return;

  var here = document.currentScript ? document.currentScript.src.replace(/[^/]*$/, "") : "";
  // [what on a page needs them, the scripts, in the order they must run]. helpers.js: what the
  // page scripts share; faircalc.js, then the modules it carries, each after those it needs
  // (faircalc.js lists them).
  var NEEDS = [
    ["[data-fc-calc]", ["helpers.js", "faircalc.js", "faircalc-core.js", "faircalc-exact.js", "faircalc-power.js",
      "faircalc-groups.js", "faircalc-text.js", "faircalc-equivalence.js", "faircalc-ui.js"]],
    ["[data-fc-power], [data-fc-thresholds]", ["helpers.js", "faircalc.js", "faircalc-core.js", "faircalc-exact.js",
      "faircalc-power.js", "faircalc-text.js", "faircalc-figures.js"]],
    ["table[data-fc-results], table[data-fc-groups]", ["helpers.js", "results.js"]],
    ["a[data-fc-term]", ["terms.js"]],
  ];
  var setups = [], loaded = {}, started = false;

  function load(name) {
    if (loaded[name]) return;
    loaded[name] = true;
    var script = document.createElement("script");
    script.src = here + name;
    script.async = false;  // run in the order inserted: faircalc.js before what uses it
    document.body.appendChild(script);
  }

  function onPage() {
    started = true;
    NEEDS.forEach(function (need) {
      if (document.querySelector(need[0])) need[1].forEach(load);
    });
    setups.slice().forEach(function (setup) { setup(); });
  }

  window.fcOnEveryPage = function (setup) {
    setups.push(setup);
    if (started) setup();
  };

  function begin() {
    onPage();
    if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(onPage);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", begin);
  else begin();

  // ------------------------------------------------------------------ scroll boxes a keyboard reaches

  // A code block or a wide table that scrolls sideways on a phone must be reachable by keyboard
  // to be scrolled (axe's scrollable-region-focusable, serious; a reader's review, issue 47):
  // each one that overflows is given a place in the tab order and a name.
  function focusableScrollBoxes() {
    document.querySelectorAll(".md-typeset pre > code, .md-typeset__scrollwrap").forEach(function (box) {
      if (box.scrollWidth > box.clientWidth + 1 && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
        if (box.matches(".md-typeset__scrollwrap") && !box.hasAttribute("aria-label")) {
          box.setAttribute("role", "region");
          box.setAttribute("aria-label", "table, scrolls sideways");
        }
      }
    });
  }
  window.fcOnEveryPage(focusableScrollBoxes);
  window.addEventListener("resize", focusableScrollBoxes);

  // ------------------------------------------------------------------ the left navigation

  // Material scrolls the left navigation to centre the page's link, in the first frame after the
  // page shows. The link that comes to rest at the top could sit half under the navigation's
  // sticky title and its fading shadow (issue 47: "the first item is cut"). Two frames later the
  // navigation is scrolled up by what the title covers of that link, so it shows whole; the
  // reader's own scrolling is left alone.
  function uncoverNavigation() {
    if (!window.matchMedia("(min-width: 76.25em)").matches) return;  // a laptop's sidebar, not the phone's drawer
    window.requestAnimationFrame(function () {
      window.requestAnimationFrame(function () {
        var wrap = document.querySelector(".md-sidebar--primary .md-sidebar__scrollwrap");
        var title = wrap && wrap.querySelector(".md-nav--primary > .md-nav__title");
        if (!title || wrap.scrollTop === 0) return;
        // Under the title, and under its shadow (a box-shadow: x y blur spread) up to half its blur.
        var shadow = (getComputedStyle(title).boxShadow.match(/-?[\d.]+px/g) || []).map(parseFloat);
        var covered = title.getBoundingClientRect().bottom + (shadow[3] || 0) + (shadow[2] || 0) / 2;
        var links = wrap.querySelectorAll(".md-nav__link");
        for (var i = 0; i < links.length; i++) {
          var r = links[i].getBoundingClientRect();
          if (r.height === 0 || r.bottom <= covered) continue;  // not shown, or wholly under the title
          if (r.top < covered) wrap.scrollTop -= Math.ceil(covered - r.top);
          return;
        }
      });
    });
  }
  window.fcOnEveryPage(uncoverNavigation);

  // ------------------------------------------------------------------ the search index, when wanted

  var INDEX = /\/search\/search_index\.json(?:[?#]|$)/;
  var wanted = /[?&]h=/.test(window.location.search), held = [];
  var open = XMLHttpRequest.prototype.open, send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, url) {
    this.fcSearchIndex = INDEX.test(String(url));
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    if (this.fcSearchIndex && !wanted) {
      held.push([this, arguments]);
      return undefined;
    }
    return send.apply(this, arguments);
  };

  function wantSearch(ev) {
    if (wanted || !(ev.target instanceof Element) || !ev.target.closest(".md-search, [for='__search'], #__search")) return;
    wanted = true;
    held.splice(0).forEach(function (call) { send.apply(call[0], call[1]); });
  }
  ["focusin", "pointerdown", "change"].forEach(function (type) { document.addEventListener(type, wantSearch, true); });
})();
