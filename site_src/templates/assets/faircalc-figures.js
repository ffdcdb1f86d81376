// Interactive figures (issue 29), drawn as plain SVG by this script: no chart library to vendor,
// and the power figure's numbers come from window.FairCalc (held to faircode by the browser
// tests), written by window.FairCalcText; the threshold figure's from the explainer's run
// (embedded by the build). Each figure is a <div data-fc-power> or <div data-fc-thresholds> that
// the build writes with its data (site_src/rendering/calculator.py); it stays hidden without
// JavaScript, where the page's static figure (also in print and in the notebook) tells the same
// story.
// Needs helpers.js, and FairCalc with faircalc-power.js and faircalc-text.js, first (the order
// assets/pages.js loads them in).
(function () {
  "use strict";

  var el = window.fcHelpers.el, svgEl = window.fcHelpers.svg, thousands = window.fcHelpers.thousands;
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

  // The figure's box shown, emptied of what stood in for it, and titled.
  function begin(box, title) {
    box.hidden = false;
    box.textContent = "";
    box.appendChild(el("p", { class: "fc-fig-title" }, title));
  }

  // A drawing's width: its units are CSS pixels at the box's width, so its text stays readable on
  // a phone.
  function widthOf(box) { return Math.max(300, Math.min(560, box.clientWidth - 24)); }

  // A figure's drawing, W by H, with its title (what a screen reader says of it), and under it the
  // sentence that says what it shows, read out as it changes.
  function drawing(box, W, H) {
    var svg = svgEl("svg", { viewBox: "0 0 " + W + " " + H, role: "img" });
    var desc = svgEl("title", {});
    svg.appendChild(desc);
    box.appendChild(svg);
    var live = el("p", { class: "fc-fig-readout", "aria-live": "polite" });
    box.appendChild(live);
    return { svg: svg, desc: desc, live: live };
  }

  // The drawing emptied, but for its title.
  function clear(svg) {
    while (svg.childNodes.length > 1) svg.removeChild(svg.lastChild);
  }

  // ------------------------------------------------------------------ power

  var SIZES = [20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000];

  // Every gap the figure writes (slider, ticks, marks, readout) is A minus B with its sign, as the
  // site's convention has it: with A's rate the lower one, "−10.0 pp" (issue 47).
  function setupPower(box) {
    var d = JSON.parse(box.dataset.fcPower);
    begin(box, d.title);
    var startIndex = SIZES.reduce(function (best, s, i) { return Math.abs(Math.log(s / d.rows)) < Math.abs(Math.log(SIZES[best] / d.rows)) ? i : best; }, 0);
    var size = slider(box, "Audit size (people):", { min: 0, max: SIZES.length - 1, step: 1, value: startIndex });
    var maxGap = Math.min(0.3, d.direction > 0 ? 1 - d.base_rate : d.base_rate);
    var gap = slider(box, "True gap (" + d.a + " minus " + d.b + "):", { min: 0, max: Math.round(1000 * maxGap), step: 5, value: Math.round(1000 * Math.min(d.gap, maxGap)) });
    var fig = powerFigure(box, d, maxGap);
    var gen = 0;

    function draw() {
      var mine = ++gen;
      var rows = SIZES[Number(size.input.value)];
      var nA = Math.max(1, Math.round(d.share_a * rows)), nB = Math.max(1, rows - nA);
      var at = { rows: rows, nA: nA, nB: nB, gap: Number(gap.input.value) / 1000 };
      size.value.textContent = thousands(rows) + " (" + thousands(nA) + " " + d.a + ", " + thousands(nB) + " " + d.b + ")";
      gap.value.textContent = fig.gapText(at.gap);
      powerCurve(fig, at, function () { return mine === gen; });
    }
    size.input.addEventListener("input", draw);
    gap.input.addEventListener("input", draw);
    draw();
  }

  // The power figure's drawing, its scales (x: the gap's size, 0 to maxGap; y: power, 0 to 1) and
  // what it draws with.
  function powerFigure(box, d, maxGap) {
    var W = widthOf(box), H = W < 420 ? 260 : 300, L = 48, R = 12, T = 14, B = 44;
    var fig = drawing(box, W, H), fmt = window.FairCalcText;
    fig.d = d;
    fig.maxGap = maxGap;
    fig.frame = { W: W, H: H, L: L, R: R, T: T, B: B };
    fig.x = function (g) { return L + (W - L - R) * g / maxGap; };
    fig.y = function (p) { return T + (H - T - B) * (1 - p); };
    fig.gapText = function (magnitude) { return fmt.pp(d.direction * magnitude); };
    return fig;
  }

  function powerAxes(fig, g) {
    var d = fig.d, fmt = window.FairCalcText, f = fig.frame, x = fig.x, y = fig.y, i, t;
    for (i = 0; i <= 4; i++) {
      t = i / 4;
      g.appendChild(svgEl("line", { class: "fc-grid", x1: f.L, x2: f.W - f.R, y1: y(t), y2: y(t) }));
      g.appendChild(svgEl("text", { x: f.L - 6, y: y(t) + 4, "text-anchor": "end" }, fmt.pct(t, 0)));
    }
    var step = fig.maxGap > 0.15 ? 0.05 : 0.02;
    for (t = 0; t <= fig.maxGap + 1e-9; t += step) {
      g.appendChild(svgEl("text", { x: x(t), y: f.H - f.B + 16, "text-anchor": "middle" }, fmt.signed(100 * d.direction * t, 0)));
    }
    g.appendChild(svgEl("text", { x: (f.L + f.W - f.R) / 2, y: f.H - 6, "text-anchor": "middle" }, "true gap, " + d.a + " minus " + d.b + " (pp)"));
    g.appendChild(svgEl("text", { x: 12, y: (f.T + f.H - f.B) / 2, "text-anchor": "middle", transform: "rotate(-90 12 " + ((f.T + f.H - f.B) / 2) + ")" }, "power"));
    g.appendChild(svgEl("line", { class: "fc-axis", x1: f.L, x2: f.W - f.R, y1: y(0), y2: y(0) }));
    g.appendChild(svgEl("line", { class: "fc-line-b", x1: f.L, x2: f.W - f.R, y1: y(d.target), y2: y(d.target) }));
  }

  // The power curve of an audit of at.rows people, computed a few points per frame, so the sliders
  // stay responsive; current() turns false once the reader has moved a slider again.
  function powerCurve(fig, at, current) {
    var d = fig.d, grid = [], n = 24, i;
    for (i = 0; i <= n; i++) grid.push(fig.maxGap * i / n);
    var pts = [];
    function step() {
      if (!current()) return;
      var until = Math.min(grid.length, pts.length + 4);
      while (pts.length < until) {
        var gg = grid[pts.length];
        pts.push(window.FairCalc.power(d.base_rate + d.direction * gg, d.base_rate, at.nA, at.nB).power);
      }
      if (pts.length < grid.length) { window.requestAnimationFrame(step); renderPower(fig, at, grid, pts, false); return; }
      renderPower(fig, at, grid, pts, true);
    }
    step();
  }

  // The axes and the curve so far; once it is whole, where this audit stands on it too.
  function renderPower(fig, at, grid, pts, done) {
    clear(fig.svg);
    var layer = svgEl("g", {});
    powerAxes(fig, layer);
    var path = pts.map(function (p, j) { return (j ? "L" : "M") + fig.x(grid[j]).toFixed(1) + "," + fig.y(p).toFixed(1); }).join("");
    if (path) layer.appendChild(svgEl("path", { class: "fc-line-a", d: path }));
    if (done) markPower(fig, layer, at);
    fig.svg.appendChild(layer);
  }

  // The audit's power at the chosen gap (a dot), its minimum detectable gap (a dashed line, where
  // it is on the axis), and the sentence that says both.
  function markPower(fig, layer, at) {
    var d = fig.d, FC = window.FairCalc, fmt = window.FairCalcText, x = fig.x, y = fig.y, g = at.gap;
    var now = FC.power(d.base_rate + d.direction * g, d.base_rate, at.nA, at.nB).power;
    var mdg = FC.detectableGap(at.nA, at.nB, d.base_rate, { direction: d.direction, power: d.target, xtol: 1e-5 });
    if (!Number.isNaN(mdg.magnitude) && mdg.magnitude <= fig.maxGap) {
      layer.appendChild(svgEl("line", { class: "fc-axis", "stroke-dasharray": "3 3", x1: x(mdg.magnitude), x2: x(mdg.magnitude), y1: y(0), y2: y(d.target) }));
      layer.appendChild(svgEl("text", { x: x(mdg.magnitude) + 4, y: y(d.target) - 6 }, "detectable: " + fig.gapText(mdg.magnitude)));
    }
    layer.appendChild(svgEl("circle", { class: "fc-mark", cx: x(g), cy: y(now), r: 6 }));
    var mdgText = Number.isNaN(mdg.magnitude) ? "no gap out to " + fmt.pp(d.direction * fig.maxGap, 0) + " reaches " + fmt.pct(d.target, 0) :
      "the minimum detectable gap is " + fig.gapText(mdg.magnitude);
    fig.live.textContent = "An audit of " + thousands(at.rows) + " people finds a true gap of " + fig.gapText(g) + " " +
      fmt.pct(now, 0) + " of the time (exact power, p below 0.05); " + mdgText + " at " + fmt.pct(d.target, 0) + " power.";
    fig.desc.textContent = "Exact power against the true gap for an audit of " + at.rows + " people. " + fig.live.textContent;
  }

  // ------------------------------------------------------------------ thresholds

  function setupThresholds(box) {
    var d = JSON.parse(box.dataset.fcThresholds), fmt = window.FairCalcText;
    var t = d.thresholds;
    begin(box, d.title);
    function nearest(v) {
      var best = 0;
      t.forEach(function (s, i) { if (Math.abs(s - v) < Math.abs(t[best] - v)) best = i; });
      return best;
    }
    var sa = slider(box, "Threshold for " + d.a + ":", { min: 0, max: t.length - 1, step: 1, value: nearest(d.start_a) });
    var sb = slider(box, "Threshold for " + d.b + ":", { min: 0, max: t.length - 1, step: 1, value: nearest(d.start_b) });
    var W = widthOf(box), H = 190, L = W < 420 ? 118 : 150, R = 24, T = 10, B = 36;
    var fig = drawing(box, W, H);
    var metrics = [["selection", "selection rate"], ["tpr", "true positive rate"], ["fpr", "false positive rate"]];
    var span = 0.5; // the axis runs from -50 to +50 pp
    function x(v) { return L + (W - L - R) * (v + span) / (2 * span); }
    function draw() {
      var ia = Number(sa.input.value), ib = Number(sb.input.value);
      sa.value.textContent = t[ia].toFixed(2);
      sb.value.textContent = t[ib].toFixed(2);
      clear(fig.svg);
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
      fig.svg.appendChild(g);
      fig.live.textContent = "Thresholds " + t[ia].toFixed(2) + " for " + d.a + " and " + t[ib].toFixed(2) + " for " + d.b + ": " + parts.join("; ") + ".";
      fig.desc.textContent = "Gaps between " + d.a + " and " + d.b + " at the chosen thresholds. " + fig.live.textContent;
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

  // Each figure once (fcHelpers.once: a copy of the page saved by the browser, which keeps the
  // drawing, draws it again).
  function setup() {
    document.querySelectorAll("[data-fc-power], [data-fc-thresholds]").forEach(function (box) {
      if (!window.FairCalc || !window.FairCalcText || !window.fcHelpers.once(box)) return;
      whenShown(box, "fcPower" in box.dataset ? setupPower : setupThresholds);
    });
  }

  (window.fcOnEveryPage || function (f) { f(); })(setup);
})();
