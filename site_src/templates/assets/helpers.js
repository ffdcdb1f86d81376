// What the page scripts share, one home each (window.fcHelpers): building elements (el, and svg
// for the figures' drawings), writing a count with thousands separators ("1,234"), and setting a thing up once.
// Used by faircalc-ui.js (the "Check a gap" calculator), faircalc-figures.js (the interactive
// figures) and results.js (the results explorer). How FairCalc's numbers are written to read as
// the library writes them (p-values, points, rates, ratios) is FairCalcText's (faircalc-text.js).
//
// Needs nothing before it; assets/pages.js loads it before the scripts that use it. Not carried
// into FairCalc's workers: it is for the page, which a worker does not have.
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";

  function filled(node, attrs, text) {
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // An HTML element `tag` with the attributes `attrs` and, if given, the text `text`.
  function el(tag, attrs, text) { return filled(document.createElement(tag), attrs, text); }

  // The same for an element of an SVG drawing.
  function svg(tag, attrs, text) { return filled(document.createElementNS(SVG, tag), attrs, text); }

  // A count (of people, rows, audits) as the pages write one: "1,234".
  function thousands(n) { return n.toLocaleString("en"); }

  // True the first time it is asked about `node`, false after: each table, figure and calculator
  // is set up once, however often the page's setups run (assets/pages.js). A property, not an
  // attribute: a copy of the page saved by the browser, which keeps attributes, sets up again.
  function once(node) {
    if (node.fcReady) return false;
    node.fcReady = true;
    return true;
  }

  window.fcHelpers = Object.freeze({ el: el, svg: svg, thousands: thousands, once: once });
})();
