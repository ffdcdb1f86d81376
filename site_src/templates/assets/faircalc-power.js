// FairCalcPower: was the audit big enough? As faircode.significance._power is for the library:
// the exact power of the exact test (permutation_test_power), the minimum detectable gap (the
// root of the exact power in the gap) and the audit size that detects a gap (the sample-size
// formula, with the exact power there). An exact power is the longest work FairCalc does (a
// minute at a million people): it tells FairCalc.background how far it has gone.
//
// Carried (FairCalc.carry) into FairCalc.background's workers. Needs faircalc.js,
// faircalc-core.js and faircalc-exact.js first.
window.FairCalc.carry("FairCalcPower", function faircalcPower(root, plumbing) {
  "use strict";

  var C = root.FairCalcCore, fail = plumbing.fail, progress = plumbing.progress;
  var rate = C.rate, positive = C.positive, openUnit = C.openUnit, choice = C.choice, opts = C.opts, withReasons = C.withReasons;
  var logDbinom = C.logDbinom, ndtr = C.ndtr, ndtri = C.ndtri, roundHalfEven = C.roundHalfEven;
  var logExactP = root.FairCalcExact.logExactP;
  var CENTRAL_TAIL = 2.5e-18; // faircode.significance._central: binomial mass left out per side

  // ------------------------------------------------------------------ exact power

  // P(Binomial(n, p) = i) for every i, as a Float64Array of n + 1 (zero where it underflows).
  function binomialPmf(n, p) {
    var out = new Float64Array(n + 1);
    var q = 1 - p;
    var mean = n * p, sd = Math.sqrt(n * p * q);
    // Beyond 40 sd (and 60 counts) every probability underflows to 0 in doubles.
    var from = Math.max(0, Math.floor(mean - 40 * sd - 60)), to = Math.min(n, Math.ceil(mean + 40 * sd + 60));
    for (var i = from; i <= to; i++) out[i] = Math.exp(logDbinom(i, n, p, q));
    return out;
  }

  // faircode.significance._central: [first, last] holding all but 2.5e-18 on each side.
  function central(pmf) {
    var n = pmf.length, cdf = 0, first = 0, last = n - 1, i;
    for (i = 0; i < n; i++) {
      cdf += pmf[i];
      if (cdf > CENTRAL_TAIL) { first = i; break; }
    }
    var sf = 0;
    for (i = n - 1; i >= 0; i--) {
      sf += pmf[i];
      if (sf > CENTRAL_TAIL) { last = i; break; }
    }
    return [first, last];
  }

  /**
   * Exact power of the exact test (faircode.significance.permutation_test_power): the chance
   * that an audit with nA people in A flagged at rateA and nB in B flagged at rateB gives
   * p < alpha. options.alpha (0.05), options.alternative ("two-sided", "less", "greater").
   * Returns {power, alpha, alternative}.
   */
  function power(rateA, rateB, nA, nB, options) {
    rate(rateA, "rateA");
    rate(rateB, "rateB");
    positive(nA, "nA");
    positive(nB, "nB");
    var o = opts(options, { alpha: 0.05, alternative: "two-sided" }, "power");
    openUnit(o.alpha, "alpha");
    choice(o.alternative, "alternative", ["two-sided", "less", "greater"]);
    return { power: exactPower(rateA, rateB, nA, nB, o.alpha, o.alternative), alpha: o.alpha, alternative: o.alternative, reason: null, reasons: {} };
  }

  function exactPower(pA, pB, nA, nB, alpha, alternative) {
    progress.start();
    if (nA > nB) { // the work is O(N min(nA, nB)): let A be the smaller group
      var t = pA; pA = pB; pB = t;
      t = nA; nA = nB; nB = t;
      alternative = alternative === "greater" ? "less" : alternative === "less" ? "greater" : alternative;
    }
    var s = outcomes(pA, pB, nA, nB);
    var visited = visitedMass(s);
    // The power is what the test rejects: the visited outcomes less the accepted ones. An
    // outcome beyond 12 s + 50 of X's null mean has a two-sided p < 1e-29 (Bernstein's
    // inequality, as the library argues), so it is rejected at any alpha above 1e-25: only the
    // window is examined (a one-sided test accepts everything beyond it on the other side).
    var test = { alpha: alpha, alternative: alternative, wide: alpha < 1e-25 };
    var accepted = 0;
    for (var K = s.kMin; K <= s.kMax; K++) {
      if ((K - s.kMin) % 64 === 0) progress.at((K - s.kMin) / (s.kMax - s.kMin + 1));
      accepted = acceptedAt(s, test, K, accepted);
    }
    return Math.min(1, Math.max(0, visited - accepted));
  }

  // The outcomes the library visits: x flagged in A in [xFirst, xLast], K flagged in all in
  // [kMin, kMax], 0 <= K - x <= nB; with each group's binomial probabilities (pa, pb) and room for
  // the null distribution of X given K (buf, and its tails below and above).
  function outcomes(pA, pB, nA, nB) {
    var N = nA + nB;
    var pa = binomialPmf(nA, pA), pb = binomialPmf(nB, pB);
    var cx = central(pa), cy = central(pb);
    var size = Math.min(nA, N) + 2;
    return { nA: nA, nB: nB, N: N, pa: pa, pb: pb, xFirst: cx[0], xLast: cx[1], kMin: cx[0] + cy[0], kMax: cx[1] + cy[1],
      buf: new Float64Array(size), below: new Float64Array(size), above: new Float64Array(size) };
  }

  // The probability of every outcome visited.
  function visitedMass(s) {
    var pa = s.pa, pb = s.pb, nB = s.nB;
    var cumB = new Float64Array(nB + 2); // cumB[i] = pb[0] + ... + pb[i - 1]
    for (var i = 0; i <= nB; i++) cumB[i + 1] = cumB[i] + pb[i];
    var visited = 0;
    for (var x = s.xFirst; x <= s.xLast; x++) {
      var y0 = Math.max(0, s.kMin - x), y1 = Math.min(nB, s.kMax - x);
      if (y1 >= y0) visited += pa[x] * (cumB[y1 + 1] - cumB[y0]);
    }
    return visited;
  }

  // `accepted` plus the probability of the outcomes with K flagged in all that the test accepts
  // (p not below alpha), added term by term in x's order.
  function acceptedAt(s, test, K, accepted) {
    var pa = s.pa, pb = s.pb, nA = s.nA, nB = s.nB, N = s.N, xFirst = s.xFirst, xLast = s.xLast, alternative = test.alternative;
    var mean = K * nA / N;
    var spread = Math.sqrt(nA * (K / N) * (1 - K / N));
    var reach = 12 * spread + 50;
    var lo = Math.max(Math.max(0, K - nB), test.wide ? -Infinity : Math.floor(mean - reach));
    var hi = Math.min(Math.min(nA, K), test.wide ? Infinity : Math.ceil(mean + reach));
    var from = Math.max(lo, xFirst), to = Math.min(hi, xLast), x;
    // One-sided: beyond the window on the alternative's far side p is about 1, so accepted.
    var xs, xe;
    if (alternative === "greater") { xs = Math.max(xFirst, K - nB); xe = Math.min(xLast, lo - 1); }
    else if (alternative === "less") { xs = Math.max(xFirst, hi + 1); xe = Math.min(xLast, K); }
    else { xs = 1; xe = 0; }
    for (x = xs; x <= xe; x++) accepted += pa[x] * pb[K - x];
    if (to < from) return accepted;
    nullTails(s, K, lo, hi);
    var below = s.below, above = s.above, center = K * nA;
    for (x = from; x <= to; x++) {
      var p;
      if (alternative === "greater") p = above[x - lo];
      else if (alternative === "less") p = below[x - lo];
      else {
        var d = x * N - center;
        if (d <= 0) {
          var m = -Math.floor((d - center) / N); // ceil((K nA - d) / N): the other tail's start
          p = below[x - lo] + (m <= hi ? above[Math.max(m, lo) - lo] : 0);
        } else {
          var l = Math.floor((center - d) / N);
          p = above[x - lo] + (l >= lo ? below[Math.min(l, hi) - lo] : 0);
        }
      }
      if (!(p < test.alpha)) accepted += pa[x] * pb[K - x];
    }
    return accepted;
  }

  // The null pmf of X given K on [lo, hi], from its mode outwards by term ratios, normalised,
  // summed into its tails: s.below[x - lo] = P(X <= x | K), s.above[x - lo] = P(X >= x | K).
  function nullTails(s, K, lo, hi) {
    var buf = s.buf, below = s.below, above = s.above, nA = s.nA, N = s.N;
    var rest = N - K - nA, width = hi - lo + 1;
    var mode = Math.min(hi, Math.max(lo, Math.floor((nA + 1) * (K + 1) / (N + 2))));
    var j, sum = 0;
    buf[mode - lo] = 1;
    for (j = mode; j < hi; j++) buf[j + 1 - lo] = buf[j - lo] * ((K - j) * (nA - j) / ((j + 1) * (rest + j + 1)));
    for (j = mode; j > lo; j--) buf[j - 1 - lo] = buf[j - lo] * (j * (rest + j) / ((K - j + 1) * (nA - j + 1)));
    for (j = 0; j < width; j++) sum += buf[j];
    var run = 0;
    for (j = 0; j < width; j++) { run += buf[j] / sum; below[j] = run; }
    run = 0;
    for (j = width - 1; j >= 0; j--) { run += buf[j] / sum; above[j] = run; }
  }

  // ------------------------------------------------------------------ detectable gap, audit size

  // Brent's root finder (scipy.optimize.brentq's algorithm) for f on [a, b], f(a) f(b) <= 0.
  function brent(f, a, b, fa, fb, xtol) {
    var c = a, fc = fa, d = b - a, e = d;
    for (var iter = 0; iter < 200; iter++) {
      if ((fb > 0 && fc > 0) || (fb < 0 && fc < 0)) { c = a; fc = fa; d = e = b - a; }
      if (Math.abs(fc) < Math.abs(fb)) { a = b; b = c; c = a; fa = fb; fb = fc; fc = fa; }
      var tol = 2 * 2.220446049250313e-16 * Math.abs(b) + 0.5 * xtol;
      var m = 0.5 * (c - b);
      if (Math.abs(m) <= tol || fb === 0) return b;
      if (Math.abs(e) >= tol && Math.abs(fa) > Math.abs(fb)) {
        var s = fb / fa, p, q, r;
        if (a === c) { p = 2 * m * s; q = 1 - s; } else {
          q = fa / fc; r = fb / fc;
          p = s * (2 * m * q * (q - r) - (b - a) * (r - 1));
          q = (q - 1) * (r - 1) * (s - 1);
        }
        if (p > 0) q = -q; else p = -p;
        if (2 * p < Math.min(3 * m * q - Math.abs(tol * q), Math.abs(e * q))) { e = d; d = p / q; } else { d = m; e = d; }
      } else { d = m; e = d; }
      a = b; fa = fb;
      b += Math.abs(d) > tol ? d : (m > 0 ? tol : -tol);
      fb = f(b);
    }
    return b;
  }

  /**
   * The minimum detectable gap: the smallest true gap (A's rate minus B's, in the direction
   * `options.direction`, +1 or -1) that the exact test finds with probability `options.power`
   * (0.8) at level `options.alpha` (0.05), B's rate being `baseRate`: the root of the exact
   * power in the gap, as explainers/small-samples-statistical-power.md finds it.
   * Returns {gap (signed), magnitude, rate_a, rate_b, power, reason, reasons}.
   */
  function detectableGap(nA, nB, baseRate, options) {
    positive(nA, "nA");
    positive(nB, "nB");
    rate(baseRate, "baseRate");
    var o = opts(options, { power: 0.8, alpha: 0.05, direction: 1, xtol: 1e-12 }, "detectableGap");
    openUnit(o.power, "power");
    openUnit(o.alpha, "alpha");
    if (o.direction !== 1 && o.direction !== -1) fail(RangeError, "`direction` must be 1 (A flagged more) or -1 (A flagged less); got " + o.direction);
    var widest = o.direction > 0 ? 1 - baseRate : baseRate;
    var out = { gap: NaN, magnitude: NaN, rate_a: NaN, rate_b: baseRate, power: NaN };
    // Each gap's exact power once (the power reported at the root is one Brent's method computed).
    var seen = new Map();
    function f(d) {
      if (!seen.has(d)) seen.set(d, exactPower(baseRate + o.direction * d, baseRate, nA, nB, o.alpha, "two-sided") - o.power);
      return seen.get(d);
    }
    var fw = widest > 0 ? f(widest) : -1;
    if (!(fw >= 0)) {
      return withReasons(out, { gap: "no gap in this direction is found " + Math.round(100 * o.power) + "% of the time by an audit of these sizes" });
    }
    // A bracket around the sample-size formula's answer saves evaluations; else the whole range
    // (its end at no gap evaluated only then: each evaluation is an exact power, up to a minute's
    // work at a million people).
    var a = 0, b = widest, fb = fw, fa;
    var guess = formulaGap(nA, nB, baseRate, o.direction, o.power, o.alpha, widest);
    if (guess > 0) {
      var g1 = guess / 2, g2 = Math.min(2 * guess, widest);
      var f1 = f(g1);
      if (f1 < 0) { a = g1; fa = f1; var f2 = g2 === widest ? fw : f(g2); if (f2 >= 0) { b = g2; fb = f2; } }
    }
    if (a === 0) fa = f(0);
    var d = brent(f, a, b, fa, fb, o.xtol);
    out.magnitude = d;
    out.gap = o.direction * d;
    out.rate_a = baseRate + o.direction * d;
    out.power = f(d) + o.power;
    return withReasons(out, {});
  }

  // The closed-form power of the two-sided z-test for two proportions (Fleiss, Levin and Paik
  // 2003, ch. 4): the formula of sample-size tables, as the Power explainer writes it.
  function normalPower(pA, pB, nA, nB, alpha) {
    var pooled = (nA * pA + nB * pB) / (nA + nB);
    var seNull = Math.sqrt(pooled * (1 - pooled) * (1 / nA + 1 / nB));
    var seAlt = Math.sqrt(pA * (1 - pA) / nA + pB * (1 - pB) / nB);
    var z = ndtri(1 - alpha / 2);
    var d = Math.abs(pA - pB);
    return ndtr((d - z * seNull) / seAlt) + ndtr((-d - z * seNull) / seAlt);
  }

  function formulaGap(nA, nB, base, direction, target, alpha, widest) {
    var g = function (d) { return normalPower(base + direction * d, base, nA, nB, alpha) - target; };
    var lo = 1e-4, hi = widest - 1e-4;
    if (!(hi > lo)) return NaN;
    var glo = g(lo), ghi = g(hi);
    if (!(glo < 0 && ghi > 0)) return NaN;
    return brent(g, lo, hi, glo, ghi, 1e-6);
  }

  /**
   * The audit size that detects a gap: the rows (people in A and B together, A's share
   * `shareA`) at which the sample-size formula gives power `options.power` (0.8), rounded up,
   * as the Power explainer computes "rows needed"; with the exact test's power at that size
   * (a saw-tooth in the rows: it can fall a little short). Returns {rows, n_a, n_b,
   * power_exact, method, reason, reasons}: method "formula", or "exact" where the formula has no
   * answer (rates of 0 and 1, see exactAuditSize).
   */
  function auditSize(rateA, rateB, shareA, options) {
    rate(rateA, "rateA");
    rate(rateB, "rateB");
    openUnit(shareA, "shareA");
    var o = opts(options, { power: 0.8, alpha: 0.05, maxRows: 1e7 }, "auditSize");
    openUnit(o.power, "power");
    openUnit(o.alpha, "alpha");
    var out = { rows: NaN, n_a: NaN, n_b: NaN, power_exact: NaN, method: "formula" };
    if (rateA === rateB) return withReasons(out, { rows: "with no gap there is nothing to detect, at any size" });
    if (Math.abs(rateA - rateB) === 1) return exactAuditSize(rateA, rateB, shareA, o, out);
    var g = function (n) { return normalPower(rateA, rateB, shareA * n, (1 - shareA) * n, o.alpha) - o.power; };
    var g0 = g(10), g1 = g(o.maxRows);
    if (!(g1 > 0)) return withReasons(out, { rows: "more than " + o.maxRows.toLocaleString("en") + " rows would be needed" });
    var rows = g0 >= 0 ? 10 : Math.ceil(brent(g, 10, o.maxRows, g0, g1, 1e-6));
    var nA = roundHalfEven(shareA * rows);
    out.rows = rows;
    out.n_a = nA;
    out.n_b = rows - nA;
    var reasons = {};
    if (nA >= 1 && rows - nA >= 1) out.power_exact = exactPower(rateA, rateB, nA, rows - nA, o.alpha, "two-sided");
    else reasons.power_exact = "a group with no one in it";
    return withReasons(out, reasons);
  }

  // Rates of 0 and 1: every audit splits the same way (all of one group flagged, no one in the
  // other), so the formula's standard error under the gap is 0 and it has no answer. The exact
  // test's power is then 1 where that one split has p below alpha and 0 where not: the answer is
  // the first size (in A's share, rounded as above) where it is 1, found size by size.
  function exactAuditSize(rateA, rateB, shareA, o, out) {
    out.method = "exact";
    for (var rows = 2; rows <= o.maxRows; rows++) {
      var nA = roundHalfEven(shareA * rows), nB = rows - nA;
      if (nA < 1 || nB < 1 || !(logExactP(rateA * nA, nA, rateB * nB, nB, "two-sided") < Math.log(o.alpha))) continue;
      var pw = exactPower(rateA, rateB, nA, nB, o.alpha, "two-sided");
      if (pw >= o.power) {
        out.rows = rows;
        out.n_a = nA;
        out.n_b = nB;
        out.power_exact = pw;
        return withReasons(out, {});
      }
    }
    return withReasons(out, { rows: "more than " + o.maxRows.toLocaleString("en") + " rows would be needed" });
  }

  return { power: power, detectableGap: detectableGap, auditSize: auditSize };
});
