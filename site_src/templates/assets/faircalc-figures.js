// Interactive figures (issue 29), drawn as plain SVG by this script: no chart library to vendor,
// and the power figure's numbers come from window.FairCalc (held to faircode by the browser
// tests), written by window.FairCalcText; the threshold figure's from the explainer's run
// (embedded by the build). Each figure is a <div data-fc-power> or <div data-fc-thresholds> that
// the build writes with its data (site_src/rendering/calculator.py); it stays hidden without
// JavaScript, where the page's static figure (also in print and in the notebook) tells the same
// story.
(function () {
  "use strict";

  var NS = "http://www.w3.org/2000/svg";

  function svgEl(tag, attrs, text) {
    var node = document.createElementNS(NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  var uid = 0;

  function slider(box, label, attrs) {
    var id = "fc-fig-" + (++uid);
    var lab = el("label", { for: id }, label + " ");
    var value = el("output", { for: id });
    lab.appendChild(value);
    box.appendChild(lab);
    var input = el("input", Object.assign({ type: "range", id: id }, attrs));
    box.appendChild(input);
    return { input: input, value: value };
  }

  // ------------------------------------------------------------------ power

  var SIZES = [20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000];

  // Every gap the figure writes (slider, ticks, marks, readout) is A minus B with its sign, as the
  // site's convention has it: with A's rate the lower one, "−10.0 pp" (issue 47).
  function setupPower(box) {
    var d = JSON.parse(box.dataset.fcPower);
    var FC = window.FairCalc, fmt = window.FairCalcText;
    function gapText(magnitude) { return fmt.pp(d.direction * magnitude); }
    box.hidden = false;
    box.textContent = "";
    box.appendChild(el("p", { class: "fc-fig-title" }, d.title));
    var startIndex = SIZES.reduce(function (best, s, i) { return Math.abs(Math.log(s / d.rows)) < Math.abs(Math.log(SIZES[best] / d.rows)) ? i : best; }, 0);
    var size = slider(box, "Audit size (people):", { min: 0, max: SIZES.length - 1, step: 1, value: startIndex });
    var maxGap = Math.min(0.3, d.direction > 0 ? 1 - d.base_rate : d.base_rate);
    var gap = slider(box, "True gap (" + d.a + " minus " + d.b + "):", { min: 0, max: Math.round(1000 * maxGap), step: 5, value: Math.round(1000 * Math.min(d.gap, maxGap)) });
    // The drawing's units are CSS pixels at the box's width, so its text stays readable on a phone.
    var W = Math.max(300, Math.min(560, box.clientWidth - 24)), H = W < 420 ? 260 : 300, L = 48, R = 12, T = 14, B = 44;
    var svg = svgEl("svg", { viewBox: "0 0 " + W + " " + H, role: "img" });
    var desc = svgEl("title", {});
    svg.appendChild(desc);
    box.appendChild(svg);
    var live = el("p", { class: "fc-fig-readout", "aria-live": "polite" });
    box.appendChild(live);
    var gen = 0;
    function x(g) { return L + (W - L - R) * g / maxGap; }
    function y(p) { return T + (H - T - B) * (1 - p); }

    function axes(g) {
      var i, t;
      for (i = 0; i <= 4; i++) {
        t = i / 4;
        g.appendChild(svgEl("line", { class: "fc-grid", x1: L, x2: W - R, y1: y(t), y2: y(t) }));
        g.appendChild(svgEl("text", { x: L - 6, y: y(t) + 4, "text-anchor": "end" }, fmt.pct(t, 0)));
      }
      var step = maxGap > 0.15 ? 0.05 : 0.02;
      for (t = 0; t <= maxGap + 1e-9; t += step) {
        g.appendChild(svgEl("text", { x: x(t), y: H - B + 16, "text-anchor": "middle" }, fmt.signed(100 * d.direction * t, 0)));
      }
      g.appendChild(svgEl("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle" }, "true gap, " + d.a + " minus " + d.b + " (pp)"));
      g.appendChild(svgEl("text", { x: 12, y: (T + H - B) / 2, "text-anchor": "middle", transform: "rotate(-90 12 " + ((T + H - B) / 2) + ")" }, "power"));
      g.appendChild(svgEl("line", { class: "fc-axis", x1: L, x2: W - R, y1: y(0), y2: y(0) }));
      g.appendChild(svgEl("line", { class: "fc-line-b", x1: L, x2: W - R, y1: y(d.target), y2: y(d.target) }));
    }

    function draw() {
      var mine = ++gen;
      var rows = SIZES[Number(size.input.value)];
      var nA = Math.max(1, Math.round(d.share_a * rows)), nB = Math.max(1, rows - nA);
      var g = Number(gap.input.value) / 1000;
      size.value.textContent = rows.toLocaleString("en") + " (" + nA.toLocaleString("en") + " " + d.a + ", " + nB.toLocaleString("en") + " " + d.b + ")";
      gap.value.textContent = gapText(g);
      var grid = [], n = 24, i;
      for (i = 0; i <= n; i++) grid.push(maxGap * i / n);
      var pts = [];
      // The curve is computed a few points per frame, so the sliders stay responsive.
      function step() {
        if (mine !== gen) return;
        var until = Math.min(grid.length, pts.length + 4);
        while (pts.length < until) {
          var gg = grid[pts.length];
          pts.push(FC.power(d.base_rate + d.direction * gg, d.base_rate, nA, nB).power);
        }
        if (pts.length < grid.length) { window.requestAnimationFrame(step); render(false); return; }
        render(true);
      }
      function render(done) {
        while (svg.childNodes.length > 1) svg.removeChild(svg.lastChild);
        var layer = svgEl("g", {});
        axes(layer);
        var path = pts.map(function (p, j) { return (j ? "L" : "M") + x(grid[j]).toFixed(1) + "," + y(p).toFixed(1); }).join("");
        if (path) layer.appendChild(svgEl("path", { class: "fc-line-a", d: path }));
        if (done) {
          var now = FC.power(d.base_rate + d.direction * g, d.base_rate, nA, nB).power;
          var mdg = FC.detectableGap(nA, nB, d.base_rate, { direction: d.direction, power: d.target, xtol: 1e-5 });
          if (!Number.isNaN(mdg.magnitude) && mdg.magnitude <= maxGap) {
            layer.appendChild(svgEl("line", { class: "fc-axis", "stroke-dasharray": "3 3", x1: x(mdg.magnitude), x2: x(mdg.magnitude), y1: y(0), y2: y(d.target) }));
            layer.appendChild(svgEl("text", { x: x(mdg.magnitude) + 4, y: y(d.target) - 6 }, "detectable: " + gapText(mdg.magnitude)));
          }
          layer.appendChild(svgEl("circle", { class: "fc-mark", cx: x(g), cy: y(now), r: 6 }));
          var mdgText = Number.isNaN(mdg.magnitude) ? "no gap out to " + fmt.pp(d.direction * maxGap, 0) + " reaches " + fmt.pct(d.target, 0) :
            "the minimum detectable gap is " + gapText(mdg.magnitude);
          live.textContent = "An audit of " + rows.toLocaleString("en") + " people finds a true gap of " + gapText(g) + " " +
            fmt.pct(now, 0) + " of the time (exact power, p below 0.05); " + mdgText + " at " + fmt.pct(d.target, 0) + " power.";
          desc.textContent = "Exact power against the true gap for an audit of " + rows + " people. " + live.textContent;
        }
        svg.appendChild(layer);
      }
      step();
    }
    size.input.addEventListener("input", draw);
    gap.input.addEventListener("input", draw);
    draw();
  }

  // ------------------------------------------------------------------ thresholds

  function setupThresholds(box) {
    var d = JSON.parse(box.dataset.fcThresholds), fmt = window.FairCalcText;
    var t = d.thresholds;
    box.hidden = false;
    box.textContent = "";
    box.appendChild(el("p", { class: "fc-fig-title" }, d.title));
    function nearest(v) {
      var best = 0;
      t.forEach(function (s, i) { if (Math.abs(s - v) < Math.abs(t[best] - v)) best = i; });
      return best;
    }
    var sa = slider(box, "Threshold for " + d.a + ":", { min: 0, max: t.length - 1, step: 1, value: nearest(d.start_a) });
    var sb = slider(box, "Threshold for " + d.b + ":", { min: 0, max: t.length - 1, step: 1, value: nearest(d.start_b) });
    var W = Math.max(300, Math.min(560, box.clientWidth - 24)), H = 190, L = W < 420 ? 118 : 150, R = 24, T = 10, B = 36;
    var svg = svgEl("svg", { viewBox: "0 0 " + W + " " + H, role: "img" });
    var desc = svgEl("title", {});
    svg.appendChild(desc);
    box.appendChild(svg);
    var live = el("p", { class: "fc-fig-readout", "aria-live": "polite" });
    box.appendChild(live);
    var metrics = [["selection", "selection rate"], ["tpr", "true positive rate"], ["fpr", "false positive rate"]];
    var span = 0.5; // the axis runs from -50 to +50 pp
    function x(v) { return L + (W - L - R) * (v + span) / (2 * span); }
    function draw() {
      var ia = Number(sa.input.value), ib = Number(sb.input.value);
      sa.value.textContent = t[ia].toFixed(2);
      sb.value.textContent = t[ib].toFixed(2);
      while (svg.childNodes.length > 1) svg.removeChild(svg.lastChild);
      var g = svgEl("g", {});
      [-0.5, -0.25, 0, 0.25, 0.5].forEach(function (v) {
        g.appendChild(svgEl("line", { class: v === 0 ? "fc-axis" : "fc-grid", x1: x(v), x2: x(v), y1: T, y2: H - B }));
        g.appendChild(svgEl("text", { x: x(v), y: H - B + 14, "text-anchor": "middle" }, fmt.signed(100 * v, 0)));
      });
      g.appendChild(svgEl("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle" }, "gap, " + d.a + " minus " + d.b + " (pp)"));
      var band = (H - T - B) / metrics.length;
      var parts = [];
      metrics.forEach(function (m, i) {
        var va = d.groups[d.a][m[0]][ia], vb = d.groups[d.b][m[0]][ib], gapv = va - vb;
        var cy = T + band * (i + 0.5);
        var clipped = Math.max(-span, Math.min(span, gapv));
        g.appendChild(svgEl("text", { x: L - 8, y: cy + 4, "text-anchor": "end" }, m[1]));
        g.appendChild(svgEl("rect", { class: gapv < 0 ? "fc-bar-a" : "fc-bar-b", x: Math.min(x(0), x(clipped)), y: cy - band * 0.28,
          width: Math.max(1, Math.abs(x(clipped) - x(0))), height: band * 0.56 }));
        g.appendChild(svgEl("text", { x: gapv < 0 ? Math.min(x(0), x(clipped)) - 4 : Math.max(x(0), x(clipped)) + 4, y: cy + 4,
          "text-anchor": gapv < 0 ? "end" : "start" }, fmt.pp(gapv)));
        parts.push(m[1] + " " + fmt.pct(va, 1) + " against " + fmt.pct(vb, 1) + " (" + fmt.pp(gapv) + ")");
      });
      svg.appendChild(g);
      live.textContent = "Thresholds " + t[ia].toFixed(2) + " for " + d.a + " and " + t[ib].toFixed(2) + " for " + d.b + ": " + parts.join("; ") + ".";
      desc.textContent = "Gaps between " + d.a + " and " + d.b + " at the chosen thresholds. " + live.textContent;
    }
    sa.input.addEventListener("input", draw);
    sb.input.addEventListener("input", draw);
    draw();
  }

  // A figure in a closed fold is drawn when the fold first opens (its width is known then).
  function whenShown(box, draw) {
    var fold = box.closest("details.fc-fig-fold");
    if (!fold) return draw(box);
    fold.hidden = false;
    if (fold.open) return draw(box);
    fold.addEventListener("toggle", function once() {
      if (!fold.open) return;
      fold.removeEventListener("toggle", once);
      draw(box);
    });
  }

  // Each figure once (a property, not an attribute: a copy of the page saved by the browser,
  // which keeps the drawing, draws it again).
  function setup() {
    document.querySelectorAll("[data-fc-power], [data-fc-thresholds]").forEach(function (box) {
      if (box.fcReady || !window.FairCalc || !window.FairCalcText) return;
      box.fcReady = true;
      whenShown(box, "fcPower" in box.dataset ? setupPower : setupThresholds);
    });
  }

  (window.fcOnEveryPage || function (f) { f(); })(setup);
})();
