// FairCalc's equivalence test and three-state verdict: faircode.significance._equivalence and
// _verdict, in the browser, step for step (the same grid, refinement and bisection, so the numbers
// agree to rounding; tests/e2e/test_faircalc_equivalence.py holds them to the library).
//
//   FairCalcEquivalence.test(kA, nA, kB, nB, options)     equivalence_test_from_counts: TOST p-value,
//                                                         its 1 - 2 alpha interval, the method used
//   FairCalcEquivalence.verdict(kA, nA, kB, nB, options)  gap_verdict_from_counts: the state, the
//                                                         numbers behind it, the power at the margin
//   FairCalcEquivalence.sentence(verdict, numbers)        verdict_sentence: the same words
//                                                         (numbers.p_label: "p" unless given)
//
// options.margin: 0.05 (a difference within 5 points either way) or [low, high]; for a ratio
// [0.8, 1.25] or [0.8, Infinity]. options.compare "difference" (default) or "ratio";
// options.alpha (0.05); options.method "auto" (default), "exact" or "score"; for verdict(),
// options.names ([A, B]), options.outcome ("flagged") and options.power (true: false leaves the
// power at the margin NaN, for a caller that computes it later, on request). For a ratio the
// counts are of the favourable outcome (the rate the four-fifths rule divides).
//
// Carried into FairCalc.background's workers (FairCalc.background("FairCalcEquivalence.verdict",
// [...])): an exact interval is about a hundred exact tests. Needs faircalc.js, the methods'
// modules (faircalc-core.js, faircalc-exact.js, faircalc-power.js) and faircalc-text.js first (the
// sentences' numbers are written by FairCalcText).
window.FairCalc.carry("FairCalcEquivalence", function faircalcEquivalence(root, plumbing) {
  "use strict";

  var FC = root.FairCalc, T = root.FairCalcText, fail = plumbing.fail, choice = root.FairCalcCore.choice;
  var EXACT_MAX_TABLES = 40401; // faircode.significance.EXACT_MAX_TABLES
  var GRID_MIN = 65, REFINE_POINTS = 33, REFINE_LEVELS = 4, BISECTION_STEPS = 42, TIE_RTOL = 1e-10;
  var VERDICTS = {
    gap_shown: "a gap shown",
    no_practical_gap_shown: "no gap of practical size shown",
    inconclusive: "inconclusive",
  };

  // ------------------------------------------------------------------ validation (as _as_margin)

  function asMargin(margin, compare) {
    var fifths = "[0.8, 1.25] for the four-fifths band, [0.8, Infinity] for a ratio of at least 0.8";
    if (margin === undefined || margin === null) {
      fail(TypeError, "`margin` is required: the smallest gap that matters, declared before looking (e.g. 0.05 for 5 percentage points); there is no default");
    }
    if (typeof margin === "number") {
      if (compare === "ratio") fail(TypeError, "`margin` of a ratio must be a pair [low, high]: " + fifths + "; got " + margin);
      if (!(margin > 0 && margin < 1)) {
        var hint = margin >= 1 && margin < 100 ? " (did you mean " + margin / 100 + ", " + margin + " percentage points?)" : "";
        fail(RangeError, "`margin` of a difference must be a rate strictly between 0 and 1" + hint + "; got " + margin);
      }
      return [-margin, margin];
    }
    if (!Array.isArray(margin) || margin.length !== 2 || margin.some(function (v) { return typeof v !== "number" || Number.isNaN(v); })) {
      fail(TypeError, "`margin` must be a number or a pair of numbers [low, high]; got " + JSON.stringify(margin));
    }
    var low = margin[0], high = margin[1];
    if (compare === "difference" && !(-1 < low && low < 0 && 0 < high && high < 1)) {
      fail(RangeError, "`margin` [low, high] of a difference must satisfy -1 < low < 0 < high < 1; got [" + low + ", " + high + "]");
    }
    if (compare === "ratio" && !(0 < low && low < 1 && 1 < high)) {
      fail(RangeError, "`margin` [low, high] of a ratio must satisfy 0 < low < 1 < high (high may be Infinity): " + fifths + "; got [" + low + ", " + high + "]");
    }
    return [low, high];
  }

  function asCounts(k, n, name) {
    if (!Number.isInteger(k)) fail(TypeError, "`count_" + name + "` must be a whole number; got " + String(k));
    if (!Number.isInteger(n)) fail(TypeError, "`n_" + name + "` must be a whole number; got " + String(n));
    if (n < 1) fail(RangeError, "`n_" + name + "` must be at least 1 (a group with rows); got " + n);
    if (k < 0 || k > n) fail(RangeError, "`count_" + name + "` must lie between 0 and n_" + name + " = " + n + "; got " + k);
  }

  // ------------------------------------------------------------------ the score statistic

  // Maximum likelihood rates under p1 - p2 = value (Farrington and Manning's cubic for p1) or
  // p1 = value * p2 (Miettinen and Nurminen's quadratic for p2): _restricted_rates.
  function restrictedRates(x1, n1, x2, n2, value, compare) {
    if (compare === "difference") {
      var d = value, theta = n2 / n1, r1 = x1 / n1, r2 = x2 / n2;
      var a = 1 + theta;
      var b = -(1 + theta + r1 + theta * r2 + d * (theta + 2));
      var c = d * d + d * (2 * r1 + theta + 1) + r1 + theta * r2;
      var e = -r1 * d * (1 + d);
      var v = Math.pow(b, 3) / (27 * Math.pow(a, 3)) - b * c / (6 * a * a) + e / (2 * a);
      var u = Math.sqrt(Math.max(b * b / (9 * a * a) - c / (3 * a), 0));
      if (v < 0) u = -u;
      var cosArg = u === 0 ? 0 : v / Math.pow(u, 3);
      var angle = (Math.PI + Math.acos(Math.min(1, Math.max(-1, cosArg)))) / 3;
      var p1 = Math.min(Math.min(1, 1 + d), Math.max(Math.max(0, d), 2 * u * Math.cos(angle) - b / (3 * a)));
      return [p1, p1 - d];
    }
    var total = n1 + n2, count = x1 + x2;
    var qa = total * value, qb = -(n1 * value + x1 + n2 + x2 * value);
    var disc = Math.sqrt(Math.max(qb * qb - 4 * qa * count, 0));
    var p2 = Math.min(Math.min(1, 1 / value), Math.max(0, 2 * count / (-qb + disc)));
    return [Math.min(1, Math.max(0, value * p2)), p2];
  }

  function scoreStatistic(x1, n1, x2, n2, value, compare) {
    var r = restrictedRates(x1, n1, x2, n2, value, compare), excess, variance;
    if (compare === "difference") {
      excess = x1 / n1 - x2 / n2 - value;
      variance = r[0] * (1 - r[0]) / n1 + r[1] * (1 - r[1]) / n2;
    } else {
      excess = x1 / n1 - value * x2 / n2;
      variance = r[0] * (1 - r[0]) / n1 + value * value * r[1] * (1 - r[1]) / n2;
    }
    variance = variance * (n1 + n2) / (n1 + n2 - 1);
    if (variance > 0) return excess / Math.sqrt(variance);
    return excess === 0 ? 0 : (excess > 0 ? Infinity : -Infinity);
  }

  // ------------------------------------------------------------------ one-sided p-values

  function nuisanceRange(value, compare) {
    return compare === "difference" ? [Math.max(0, -value), Math.min(1, 1 - value)] : [0, Math.min(1, 1 / value)];
  }

  function linspace(start, stop, num) {
    var out = new Float64Array(num), step = (stop - start) / (num - 1);
    for (var i = 0; i < num; i++) out[i] = i * step + start;
    out[num - 1] = stop;
    return out;
  }

  // P(Binomial(n, p) = k) for k = 0..n: the mode from the log probability, the rest by the ratio
  // of neighbouring terms (n - k) p / ((k + 1) q), walking outwards (a few hundred thousand of
  // these arrays make one exact interval; a logarithm each would take seconds).
  function pmf(n, p, out) {
    var q = 1 - p, k;
    out.fill(0);
    if (p === 0 || q === 0) { out[p === 0 ? 0 : n] = 1; return out; }
    var mode = Math.min(n, Math.floor((n + 1) * p)), odds = p / q;
    out[mode] = Math.exp(FC.logDbinom(mode, n, p, q));
    for (k = mode; k < n && out[k] > 0; k++) out[k + 1] = out[k] * ((n - k) / (k + 1)) * odds;
    for (k = mode; k > 0 && out[k] > 0; k--) out[k - 1] = out[k] * (k / (n - k + 1)) / odds;
    return out;
  }

  // The region of tables at least as extreme: in each row x1 the run [first, stop) of x2, whose
  // end is found by bisection on x2 (the statistic falls as x2 rises: _region_runs).
  function Tail(x1Obs, n1, x2Obs, n2, value, side, compare) {
    var zObs = scoreStatistic(x1Obs, n1, x2Obs, n2, value, compare);
    var tie = Number.isFinite(zObs) ? TIE_RTOL * Math.max(1, Math.abs(zObs)) : 0;
    this.n1 = n1; this.n2 = n2; this.value = value; this.compare = compare;
    this.first = new Int32Array(n1 + 1); this.stop = new Int32Array(n1 + 1);
    this.pmf1 = new Float64Array(n1 + 1); this.pmf2 = new Float64Array(n2 + 1); this.cdf2 = new Float64Array(n2 + 2);
    for (var i = 0; i <= n1; i++) {
      var low = 0, high = n2 + 1;
      while (low < high) {
        var middle = Math.floor((low + high) / 2);
        var z = scoreStatistic(i, n1, middle, n2, value, compare);
        var past = side === "larger" ? z < zObs - tie : z <= zObs + tie;
        if (past) high = middle; else low = middle + 1;
      }
      if (side === "larger") { this.first[i] = 0; this.stop[i] = low; } else { this.first[i] = low; this.stop[i] = n2 + 1; }
    }
  }

  Tail.prototype.probability = function (p2) {
    var p1 = this.compare === "difference" ? p2 + this.value : this.value * p2;
    var pmf1 = pmf(this.n1, Math.min(1, Math.max(0, p1)), this.pmf1), pmf2 = pmf(this.n2, p2, this.pmf2);
    var total = 0, i, j, cdf2 = this.cdf2;
    for (j = 0; j <= this.n2; j++) cdf2[j + 1] = cdf2[j] + pmf2[j];
    for (i = 0; i <= this.n1; i++) total += pmf1[i] * (cdf2[this.stop[i]] - cdf2[this.first[i]]);
    return total;
  };

  // The largest probability over the nuisance range: a grid, then finer grids around the three
  // highest local maxima (_Tail.supremum, with NumPy's stable-sort tie order).
  Tail.prototype.supremum = function () {
    var range = nuisanceRange(this.value, this.compare);
    var size = Math.max(GRID_MIN, 2 * Math.ceil(4 * Math.sqrt(Math.max(this.n1, this.n2))) + 1);
    var grid = linspace(range[0], range[1], size), self = this;
    var values = Array.prototype.map.call(grid, function (p) { return self.probability(p); });
    var best = Math.max.apply(null, values);
    var peaks = [];
    for (var i = 0; i < size; i++) {
      var left = i > 0 ? values[i - 1] : -1, right = i < size - 1 ? values[i + 1] : -1;
      if (values[i] >= left && values[i] >= right) peaks.push(i);
    }
    // np.argsort(values[peaks], kind="stable")[::-1][:3]: descending, later index first on ties.
    var order = peaks.map(function (p, k) { return k; }).sort(function (a, b) { return values[peaks[a]] - values[peaks[b]] || a - b; }).reverse();
    var chosen = order.slice(0, 3).map(function (k) { return peaks[k]; });
    var lefts = chosen.map(function (p) { return grid[Math.max(p - 1, 0)]; });
    var rights = chosen.map(function (p) { return grid[Math.min(p + 1, size - 1)]; });
    for (var level = 0; level < REFINE_LEVELS; level++) {
      for (var r = 0; r < chosen.length; r++) {
        var lo = lefts[r], span = rights[r] - lo, fine = [], vals = [], at = 0;
        for (var s = 0; s < REFINE_POINTS; s++) {
          fine.push(lo + span * (s / (REFINE_POINTS - 1)));
          vals.push(this.probability(fine[s]));
          if (vals[s] > vals[at]) at = s;
        }
        best = Math.max(best, vals[at]);
        lefts[r] = fine[Math.max(at - 1, 0)];
        rights[r] = fine[Math.min(at + 1, REFINE_POINTS - 1)];
      }
    }
    return Math.min(1, best);
  };

  function oneSidedP(x1, n1, x2, n2, value, side, compare, method) {
    if (!Number.isFinite(value)) return 0;
    if (method === "score") {
      var z = scoreStatistic(x1, n1, x2, n2, value, compare);
      return side === "larger" ? FC.ndtr(-z) : FC.ndtr(z);
    }
    return new Tail(x1, n1, x2, n2, value, side, compare).supremum();
  }

  // ------------------------------------------------------------------ the interval (_interval, _limit)

  function limit(p, start, outward, bounds, alpha, step) {
    var edge = outward < 0 ? bounds[0] : bounds[1];
    var inner = start, inward = step;
    while (p(inner) < alpha) {
      inner = inner - outward * inward;
      inward *= 2;
      if (!(bounds[0] < inner && inner < bounds[1])) return outward < 0 ? bounds[1] : bounds[0];
    }
    var outer = inner + outward * step;
    for (;;) {
      if ((outer - edge) * outward >= 0) {
        outer = edge;
        if (p(outer) >= alpha) return edge;
        break;
      }
      if (p(outer) < alpha) break;
      inner = outer; step *= 2;
      outer = inner + outward * step;
    }
    for (var k = 0; k < BISECTION_STEPS; k++) {
      var middle = (inner + outer) / 2;
      if (p(middle) >= alpha) inner = middle; else outer = middle;
    }
    return (inner + outer) / 2;
  }

  function estimateOf(x1, n1, x2, n2, compare) {
    if (compare === "difference") return x1 / n1 - x2 / n2;
    if (x2 === 0) return x1 === 0 ? NaN : Infinity;
    return (x1 / n1) / (x2 / n2);
  }

  function interval(x1, n1, x2, n2, alpha, compare, method) {
    if (compare === "ratio" && x1 === 0 && x2 === 0) return [NaN, NaN];
    var pLow = function (v) { return oneSidedP(x1, n1, x2, n2, v, "larger", compare, method); };
    var pHigh = function (v) { return oneSidedP(x1, n1, x2, n2, v, "smaller", compare, method); };
    var est = estimateOf(x1, n1, x2, n2, compare);
    if (compare === "difference") {
      var b = [-1 + 1e-12, 1 - 1e-12];
      return [limit(pLow, est, -1, b, alpha, 0.05), limit(pHigh, est, 1, b, alpha, 0.05)];
    }
    var start = est > 0 && est < Infinity ? Math.log(est) : Math.log(((x1 || 0.5) / n1) / ((x2 || 0.5) / n2));
    var bounds = [start - 60, start + 60];
    var low = x1 === 0 ? 0 : Math.exp(limit(function (t) { return pLow(Math.exp(t)); }, start, -1, bounds, alpha, 0.25));
    var high = x2 === 0 ? Infinity : Math.exp(limit(function (t) { return pHigh(Math.exp(t)); }, start, 1, bounds, alpha, 0.25));
    return [low <= Math.exp(bounds[0]) * 1.0000001 ? 0 : low, high >= Math.exp(bounds[1]) / 1.0000001 ? Infinity : high];
  }

  // ------------------------------------------------------------------ the public test

  function options(o, defaults) {
    o = o || {};
    var out = {};
    Object.keys(defaults).forEach(function (k) { out[k] = k in o ? o[k] : defaults[k]; });
    return out;
  }

  function test(kA, nA, kB, nB, opts) {
    asCounts(kA, nA, "a");
    asCounts(kB, nB, "b");
    var o = options(opts, { margin: null, compare: "difference", alpha: 0.05, method: "auto", interval: true });
    choice(o.compare, "compare", ["difference", "ratio"]);
    choice(o.method, "method", ["auto", "exact", "score"]);
    var m = asMargin(o.margin, o.compare);
    if (!(o.alpha > 0 && o.alpha < 0.5)) fail(RangeError, "`alpha` must be strictly between 0 and 0.5 (the interval is 1 - 2 alpha); got " + o.alpha);
    var method = o.method === "auto" ? ((nA + 1) * (nB + 1) <= EXACT_MAX_TABLES ? "exact" : "score") : o.method;
    var pLow = oneSidedP(kA, nA, kB, nB, m[0], "larger", o.compare, method);
    var pHigh = oneSidedP(kA, nA, kB, nB, m[1], "smaller", o.compare, method);
    var ci = o.interval ? interval(kA, nA, kB, nB, o.alpha, o.compare, method) : [NaN, NaN];
    var p = Math.max(pLow, pHigh);
    return {
      compare: o.compare, estimate: estimateOf(kA, nA, kB, nB, o.compare), margin_low: m[0], margin_high: m[1],
      p_value: p, p_value_low: pLow, p_value_high: pHigh, equivalent: p < o.alpha, alpha: o.alpha,
      ci_low: ci[0], ci_high: ci[1], confidence_level: 1 - 2 * o.alpha, method: method,
      count_a: kA, n_a: nA, count_b: kB, n_b: nB,
    };
  }

  // ------------------------------------------------------------------ the verdict (_verdict)

  function classify(p, ciLow, ciHigh, pEq, margin, alpha) {
    if (p < alpha && (ciLow >= margin[1] || ciHigh <= margin[0])) return "gap_shown";
    if (pEq < alpha) return "no_practical_gap_shown";
    return "inconclusive";
  }

  // power_method / EXACT_POWER_SIZE: the exact sum's work grows as sqrt(min) (sqrt(nA) + sqrt(nB));
  // above 20,000 (10,000 against 10,000 rows) the z-test's power, as faircode takes it.
  var EXACT_POWER_SIZE = 20000;
  function powerMethod(nA, nB) {
    return Math.sqrt(Math.min(nA, nB)) * (Math.sqrt(nA) + Math.sqrt(nB)) <= EXACT_POWER_SIZE ? "exact" : "normal";
  }

  // z_test_power: the pooled z-test's power (statsmodels' power_proportions_2indep).
  function zTestPower(pA, pB, nA, nB, alpha) {
    var d = pA - pB, pooled = (nA * pA + nB * pB) / (nA + nB);
    var s0 = Math.sqrt(pooled * (1 - pooled) * (1 / nA + 1 / nB));
    var s1 = Math.sqrt(pA * (1 - pA) / nA + pB * (1 - pB) / nB);
    var z = FC.ndtri(1 - alpha / 2);
    if (s1 === 0) return Math.abs(d) > z * s0 ? 1 : 0;
    return FC.ndtr((Math.abs(d) - z * s0) / s1) + FC.ndtr((-Math.abs(d) - z * s0) / s1);
  }

  function powerAtMargin(rateB, nA, nB, margin, compare, alpha) {
    var powers = [], exact = powerMethod(nA, nB) === "exact";
    margin.forEach(function (bound) {
      var rateA = compare === "difference" ? rateB + bound : bound * rateB;
      if (Number.isFinite(rateA) && rateA >= 0 && rateA <= 1 && rateA !== rateB) {
        powers.push(exact ? FC.power(rateA, rateB, nA, nB, { alpha: alpha }).power : zTestPower(rateA, rateB, nA, nB, alpha));
      }
    });
    return powers.length ? Math.min.apply(null, powers) : NaN;
  }

  function verdict(kA, nA, kB, nB, opts) {
    var o = options(opts, { margin: null, compare: "difference", alpha: 0.05, method: "auto", names: ["group A", "group B"], outcome: null, power: true });
    if (o.outcome === null) o.outcome = o.compare === "difference" ? "flagged" : "given the favourable outcome";
    var eq = test(kA, nA, kB, nB, { margin: o.margin, compare: o.compare, alpha: o.alpha, method: o.method });
    if (!Array.isArray(o.names) || o.names.length !== 2 || o.names.some(function (s) { return typeof s !== "string" || !s.trim(); })) {
      fail(RangeError, "`names` must be two non-empty words, the groups as a sentence names them; got " + JSON.stringify(o.names));
    }
    if (typeof o.outcome !== "string" || !o.outcome.trim()) fail(RangeError, "`outcome` must be non-empty words (\"flagged\", \"approved\"); got " + JSON.stringify(o.outcome));
    // Newcombe's interval and the exact test (compare(), with 1s as the "flagged" count), or MOVER-R.
    var c = FC.compare(kA, nA, kB, nB, { favourable: "positive", confidenceLevel: 1 - o.alpha });
    var ci = o.compare === "difference" ? [c.ci_low, c.ci_high] : [c.ratio_low, c.ratio_high];
    var margin = [eq.margin_low, eq.margin_high];
    var state = Number.isNaN(ci[0]) ? "inconclusive" : classify(c.p_value, ci[0], ci[1], eq.p_value, margin, o.alpha);
    var out = {
      verdict: state, label: VERDICTS[state], compare: o.compare, estimate: eq.estimate, ci_low: ci[0], ci_high: ci[1],
      confidence_level: 1 - o.alpha, p_value: c.p_value, log_p_value: c.log_p_value, equivalence: eq,
      margin_low: margin[0], margin_high: margin[1], alpha: o.alpha,
      power_at_margin: o.power ? powerAtMargin(kB / nB, nA, nB, margin, o.compare, o.alpha) : NaN,
      power_method: powerMethod(nA, nB),
      count_a: kA, n_a: nA, count_b: kB, n_b: nB, names: [o.names[0].trim(), o.names[1].trim()], outcome: o.outcome.trim(),
    };
    out.sentence = sentence(state, {
      compare: o.compare, estimate: out.estimate, ci_low: ci[0], ci_high: ci[1], p_value: out.p_value,
      equivalence_p_value: eq.p_value, equivalence_ci: [eq.ci_low, eq.ci_high], margin: margin,
      power_at_margin: out.power_at_margin, alpha: o.alpha, names: out.names, outcome: out.outcome,
    });
    return out;
  }

  // ------------------------------------------------------------------ the words (verdict_sentence)

  // _margin_points: a margin as declared, every digit it has ("0.05 percentage points", not "0.1";
  // "1 percentage point"), with a sign for a bound of an asymmetric margin.
  function marginPoints(value, signed, unit) {
    var points = Number((100 * value).toFixed(10)), text = String(Number(Math.abs(points).toPrecision(6))); // Python's {:g}
    if (signed && points !== 0) text = (points < 0 ? "\u2212" : "+") + text;
    return text + (unit ? (Math.abs(points) === 1 ? " percentage point" : " percentage points") : "");
  }

  function Words(n) {
    this.compare = n.compare; this.estimate = n.estimate; this.ci = [n.ci_low, n.ci_high];
    this.low = n.margin[0]; this.high = n.margin[1]; this.alpha = n.alpha;
    this.a = n.names[0]; this.b = n.names[1]; this.outcome = n.outcome;
  }
  Words.prototype.level = function (sides) { return T.pct(1 - sides * this.alpha, 0); };
  Words.prototype.ratio = function (v) { return T.ratio(v, [this.low, this.high, 1]); };
  Words.prototype.what = function () {
    return this.compare === "ratio" ? "the ratio (" + this.a + " over " + this.b + ")" : "the gap (" + this.a + " minus " + this.b + ")";
  };
  Words.prototype.gap = function () {
    if (this.compare === "ratio" && Number.isNaN(this.estimate)) return "no one among " + this.a + " or " + this.b + " was " + this.outcome + ", so their ratio is undefined";
    if (this.compare === "ratio" && !Number.isFinite(this.estimate)) return "no one among " + this.b + " was " + this.outcome + ", so the ratio of " + this.a + "'s rate to theirs is unbounded";
    if (this.compare === "ratio") return "the rate of " + this.a + " " + this.outcome + " is " + this.ratio(this.estimate) + " times that of " + this.b;
    if (this.estimate === 0) return this.a + " and " + this.b + " were " + this.outcome + " at the same rate";
    return this.a + " were " + this.outcome + " " + T.points(Math.abs(this.estimate), { signed: false }) + " " + (this.estimate > 0 ? "more" : "less") + " often than " + this.b;
  };
  Words.prototype.interval = function (low, high) {
    if (Number.isNaN(low) && Number.isNaN(high)) return "undefined";
    if (this.compare === "ratio") return this.ratio(low) + " to " + this.ratio(high);
    return T.points(low, { unit: false }) + " to " + T.points(high);
  };
  Words.prototype.marginName = function () {
    if (this.compare === "ratio") {
      if (!Number.isFinite(this.high)) return this.low === 0.8 ? "the four-fifths line of 0.8" : "a ratio of " + this.ratio(this.low);
      return "the band " + this.ratio(this.low) + " to " + this.ratio(this.high);
    }
    if (-this.low === this.high) return "the margin of \u00b1" + marginPoints(this.high, false, true);
    return "the margin of " + marginPoints(this.low, true, false) + " to " + marginPoints(this.high, true, true);
  };
  Words.prototype.beyond = function () {
    if (this.compare === "ratio") {
      var side = this.ci[1] <= this.low ? "below " + this.ratio(this.low) : "above " + this.ratio(this.high);
      return side + ", beyond " + this.marginName();
    }
    return "beyond " + this.marginName();
  };
  Words.prototype.inside = function () {
    if (this.compare === "ratio") return Number.isFinite(this.high) ? "the ratio stays inside it" : "the ratio stays above it";
    return "the gap stays inside it";
  };
  // A ratio inside the four-fifths band can sit beside a difference beyond a margin in points:
  // the sentence names the yardstick it was shown against.
  Words.prototype.noGapHead = function () {
    if (this.compare === "ratio" && !Number.isFinite(this.high)) return "No gap of practical size against " + this.a + " is shown by " + this.marginName();
    return this.compare === "ratio" ? "No gap of practical size is shown by " + this.marginName() : "No gap of practical size is shown";
  };
  Words.prototype.trueGapAtMargin = function () {
    if (this.compare === "ratio") return Number.isFinite(this.high) ? "a true ratio at the edge of " + this.marginName() : "a true ratio at " + this.marginName();
    return "a true gap at " + this.marginName();
  };
  Words.prototype.mayRemain = function () {
    if (this.compare === "ratio") return "The rates may still differ, by less than " + this.marginName() + " allows.";
    return "A gap smaller than the margin may remain.";
  };
  Words.prototype.within = function () {
    return this.compare === "ratio" && !Number.isFinite(this.high) ? "above " + this.marginName() : "within " + this.marginName();
  };

  function sentence(state, n) {
    choice(state, "verdict", Object.keys(VERDICTS));
    var w = new Words(n), label = n.p_label === undefined ? "p" : n.p_label;
    // The project's p-value, under the caller's name for it ("q", "Holm-adjusted p").
    function pValue(value) { return T.pValue(value).replace("p ", label + " "); }
    var adjusted = label !== "p"; // a table's family-adjusted values: its intervals are not adjusted
    if (state === "gap_shown") {
      return "A gap of practical size is shown: " + w.gap() + ". The " + w.level(1) + " interval of " + w.what() + ", " +
        w.interval(n.ci_low, n.ci_high) + ", lies " + w.beyond() + " (exact test, " + pValue(n.p_value) +
        (adjusted ? "; the interval is not adjusted for the family" : "") + ").";
    }
    if (state === "no_practical_gap_shown") {
      var lo = n.equivalence_ci[0], hi = n.equivalence_ci[1];
      var where = !(Number.isNaN(lo) || Number.isNaN(hi)) ? "Its " + w.level(2) + " interval, " + w.interval(lo, hi) + ", lies " + w.within() : "It lies " + w.within();
      var oneSided = n.compare === "ratio" && !Number.isFinite(n.margin[1]);
      var tail = n.p_value < n.alpha && oneSided ? "The exact test finds that the rates differ (" + pValue(n.p_value) + ")."
        : n.p_value < n.alpha // the usual test rejects too: a gap is shown, and shown small
        ? "The exact test finds a gap (" + pValue(n.p_value) + "): a gap smaller than " + (n.compare === "difference" ? "the margin" : w.marginName() + " allows") + " is shown."
        : w.mayRemain();
      return w.noGapHead() + ": " + w.gap() + ". " + where + " (equivalence test, " + pValue(n.equivalence_p_value) + "). " + tail;
    }
    var eqLow = n.equivalence_ci[0], eqHigh = n.equivalence_ci[1];
    var eqInterval = Number.isNaN(eqLow) || Number.isNaN(eqHigh) ? "" : ", its " + w.level(2) + " interval " + w.interval(eqLow, eqHigh);
    var numbers = w.gap() + "; the " + w.level(1) + " interval of " + w.what() + " is " + w.interval(n.ci_low, n.ci_high) +
      "; exact test " + pValue(n.p_value) + "; equivalence test " + pValue(n.equivalence_p_value) + eqInterval;
    if (n.p_value < n.alpha) { // so the interval reaches inside the margin (else the gap would be shown)
      return "Inconclusive: a gap is statistically significant, but not shown to be of practical size (its " + w.level(1) +
        " interval reaches inside " + w.marginName() + "), nor do the data show that " + w.inside() + " (" + numbers + ").";
    }
    if (n.ci_low >= n.margin[1] || n.ci_high <= n.margin[0]) { // beyond the margin, but the test does not reject
      return "Inconclusive: the " + w.level(1) + " interval lies " + w.beyond() + ", but the exact test is not significant" +
        (adjusted ? " once the family is counted" : "") + ", and the data do not show that " + w.inside() + " (" + numbers + ").";
    }
    var head = "Inconclusive: the data show neither a gap beyond " + w.marginName() + " nor that " + w.inside() + " (" + numbers + ").";
    if (Number.isNaN(n.power_at_margin)) return head;
    // The power explains an inconclusive result only where the test did not reject: the chance
    // the exact test calls a true gap at the margin significant (not the chance of a verdict).
    var chance = T.pct(n.power_at_margin, 0), article = /^(8|11%|18%)/.test(chance) ? "an " : "a "; // "an 80%", "an 11%", "a 9%"
    return head + " Against " + w.trueGapAtMargin() + ", the exact test had " + article + chance + " chance of calling it significant" +
      (n.power_at_margin < 0.8 ? ": this audit was too small to tell." : ".");
  }

  // How the sentences name a margin: "the margin of ±5 percentage points", "the band 0.80 to
  // 1.25", "the four-fifths line of 0.8" (margin: [low, high], as a verdict's).
  function marginName(compare, margin) {
    choice(compare, "compare", ["difference", "ratio"]);
    return new Words({ compare: compare, margin: margin, names: ["", ""] }).marginName();
  }

  return {
    VERDICTS: VERDICTS,
    EXACT_MAX_TABLES: EXACT_MAX_TABLES,
    EXACT_POWER_SIZE: EXACT_POWER_SIZE,
    powerMethod: powerMethod,
    zTestPower: zTestPower,
    test: test,
    verdict: verdict,
    sentence: sentence,
    marginName: marginName,
  };
});
