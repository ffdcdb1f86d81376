// FairCalcExact: two groups, as faircode.significance's _permutation, _intervals and _report are
// for the library: the exact permutation test of the gap (through the hypergeometric distribution,
// summed in log space from its inner end), the score intervals (Wilson; Newcombe for the gap;
// MOVER-R for the ratio) and FairCalc.compare, which reports them together.
//
// Carried (FairCalc.carry) into FairCalc.background's workers. Needs faircalc.js and
// faircalc-core.js first; faircalc-power.js and faircalc-groups.js use its exact test and
// intervals.
window.FairCalc.carry("FairCalcExact", function faircalcExact(root) {
  "use strict";

  var C = root.FairCalcCore;
  var flaggedOf = C.flaggedOf, opts = C.opts, choice = C.choice, openUnit = C.openUnit, withReasons = C.withReasons;
  var logDhyper = C.logDhyper, logAddExp = C.logAddExp, logSubExp = C.logSubExp, ndtri = C.ndtri;
  var SMALL_SAMPLE_THRESHOLD = C.SMALL_SAMPLE_THRESHOLD;
  // A term below this share of the running sum ends a sum over a tail: the rest of a
  // log-concave tail whose terms fall this far is below 1e-18 of the sum.
  var VANISH = 1e-20;

  // ------------------------------------------------------------------ exact test (two groups)

  // The hypergeometric distribution of X, the flagged people in A under random relabelling:
  // N people, K flagged, n in A. Tail sums start at their inner end and walk outwards by the
  // ratio of neighbouring terms, stopping where the terms vanish: O(sd) work, not O(N).
  function Hypergeometric(N, K, n) {
    this.N = N;
    this.K = K;
    this.n = n;
    this.lo = Math.max(0, n - (N - K));
    this.hi = Math.min(n, K);
    var mode = Math.floor((n + 1) * (K + 1) / (N + 2));
    this.mode = Math.min(this.hi, Math.max(this.lo, mode));
    this.logTotal = logAddExp(this.walk(this.mode, -1), this.mode < this.hi ? this.walk(this.mode + 1, 1) : -Infinity);
  }

  // log of the sum of P(X = x) over x = start, start + dir, ... (terms falling all the way).
  Hypergeometric.prototype.walk = function (start, dir) {
    var N = this.N, K = this.K, n = this.n, rest = N - K - n;
    var term = 1, acc = 1, x = start;
    for (;;) {
      if (dir > 0) {
        if (x >= this.hi) break;
        term *= (K - x) * (n - x) / ((x + 1) * (rest + x + 1));
        x += 1;
      } else {
        if (x <= this.lo) break;
        term *= x * (rest + x) / ((K - x + 1) * (n - x + 1));
        x -= 1;
      }
      acc += term;
      if (term < VANISH * acc) break;
    }
    return logDhyper(start, K, N - K, n) + Math.log(acc);
  };

  // log P(X <= a) and log P(X >= b), unnormalised (divide by exp(logTotal)).
  Hypergeometric.prototype.below = function (a) {
    if (a < this.lo) return -Infinity;
    if (a >= this.hi) return this.logTotal;
    if (a < this.mode) return this.walk(a, -1);
    return logSubExp(this.logTotal, this.walk(a + 1, 1));
  };

  Hypergeometric.prototype.above = function (b) {
    if (b > this.hi) return -Infinity;
    if (b <= this.lo) return this.logTotal;
    if (b > this.mode) return this.walk(b, 1);
    return logSubExp(this.logTotal, this.walk(b - 1, -1));
  };

  // floor(num / den) for integers past 2^53 (BigInt), exact however large.
  function bigFloor(num, den) {
    var q = num / den, r = num % den;
    return (r !== 0n && (r < 0n) !== (den < 0n)) ? q - 1n : q;
  }

  // log of the exact permutation p-value of faircode.significance._exact_binary_p_value: the
  // share of relabellings whose gap is at least as far from zero as the observed one, decided
  // in integers, |x N - K n_a| >= |x_obs N - K n_a| (so ties are exact).
  function logExactP(kA, nA, kB, nB, alternative) {
    var N = nA + nB, K = kA + kB;
    var h = new Hypergeometric(N, K, nA);
    if (h.lo === h.hi) return 0;
    var lp;
    if (alternative === "greater") {
      lp = h.above(kA) - h.logTotal;
    } else if (alternative === "less") {
      lp = h.below(kA) - h.logTotal;
    } else {
      var a, b;
      if (N * N <= Number.MAX_SAFE_INTEGER) {
        var dist = Math.abs(kA * N - K * nA), center = K * nA;
        if (dist === 0) return 0;
        a = Math.floor((center - dist) / N);
        b = -Math.floor(-(center + dist) / N);
      } else {
        var bN = BigInt(N), bCenter = BigInt(K) * BigInt(nA), bd = BigInt(kA) * bN - bCenter;
        if (bd < 0n) bd = -bd;
        if (bd === 0n) return 0;
        a = Number(bigFloor(bCenter - bd, bN));
        b = -Number(bigFloor(-(bCenter + bd), bN));
      }
      lp = logAddExp(h.below(a), h.above(b)) - h.logTotal;
    }
    return Math.min(0, lp);
  }

  // ------------------------------------------------------------------ intervals

  function zOf(level) {
    return ndtri(0.5 + level / 2);
  }

  // Wilson's score interval (faircode.significance._wilson_limits), n > 0.
  function wilson(k, n, z) {
    var p = k / n;
    var denom = 1 + z * z / n;
    var center = (p + z * z / (2 * n)) / denom;
    var half = z * Math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom;
    return [k === 0 ? 0 : Math.min(1, Math.max(0, center - half)), k === n ? 1 : Math.min(1, Math.max(0, center + half))];
  }

  // Newcombe's hybrid score interval for p1 - p2 (Newcombe 1998, method 10).
  function newcombe(k1, n1, k2, n2, z) {
    var p1 = k1 / n1, p2 = k2 / n2;
    var w1 = wilson(k1, n1, z), w2 = wilson(k2, n2, z);
    var d = p1 - p2;
    return [d - Math.hypot(p1 - w1[0], w2[1] - p2), d + Math.hypot(w1[1] - p1, p2 - w2[0])];
  }

  // MOVER-R with Wilson limits for p1 / p2 (Donner and Zou 2012, eq. 9), as
  // faircode.significance._mover_ratio; (NaN, NaN) when neither group has the outcome.
  function moverRatio(k1, n1, k2, n2, z) {
    if (k1 === 0 && k2 === 0) return [NaN, NaN];
    var p1 = k1 / n1, p2 = k2 / n2;
    var w1 = wilson(k1, n1, z), w2 = wilson(k2, n2, z);
    var l1 = w1[0], u1 = w1[1], l2 = w2[0], u2 = w2[1];
    var a = p1 * p2;
    var lowDen = u2 * (2 * p2 - u2);
    var low = (a - Math.sqrt(Math.max(a * a - l1 * u2 * (2 * p1 - l1) * (2 * p2 - u2), 0))) / lowDen;
    var highDen = l2 * (2 * p2 - l2);
    var high = highDen > 0 ? (a + Math.sqrt(Math.max(a * a - u1 * l2 * (2 * p1 - u1) * (2 * p2 - l2), 0))) / highDen : Infinity;
    return [Math.max(low, 0), high];
  }

  // ------------------------------------------------------------------ compare

  /**
   * Two groups: the gap in flag rates, its interval, the exact p-value and the favourable ratio.
   *
   * kA, nA: people flagged and people in group A (the group the question is about); kB, nB: in
   * the comparison group B. Integers, 0 <= k <= n.
   * options.favourable: "negative" (default: being flagged is the harm, the favourable outcome
   *   is not being flagged) or "positive" (being flagged is the favourable outcome); the ratio
   *   divides A's favourable-outcome rate by B's (faircode.metrics disparate_impact_ratio).
   * options.confidenceLevel (0.95), options.alternative ("two-sided", "less", "greater").
   *
   * Returns {gap, ci_low, ci_high, p_value, log_p_value, ratio, ratio_low, ratio_high,
   * small_sample_warning, rate_a, rate_b, n_a, n_b, reason, reasons}: gap = kA/nA - kB/nB
   * in [-1, 1]; ci: Newcombe's score interval (proportion_difference_ci); p_value: the exact
   * permutation test (permutation_test), log_p_value its natural log (finite where p_value
   * underflows); ratio: favourable-outcome ratio with MOVER-R (proportion_ratio_ci);
   * small_sample_warning: a group under 30 people (SMALL_SAMPLE_THRESHOLD).
   */
  function compare(kA, nA, kB, nB, options) {
    flaggedOf(kA, nA, "kA", "nA");
    flaggedOf(kB, nB, "kB", "nB");
    var o = opts(options, { favourable: "negative", confidenceLevel: 0.95, alternative: "two-sided" }, "compare");
    choice(o.favourable, "favourable", ["negative", "positive"]);
    openUnit(o.confidenceLevel, "confidenceLevel");
    choice(o.alternative, "alternative", ["two-sided", "less", "greater"]);
    var reasons = {};
    var out = {
      gap: NaN, ci_low: NaN, ci_high: NaN, p_value: NaN, log_p_value: NaN,
      ratio: NaN, ratio_low: NaN, ratio_high: NaN,
      small_sample_warning: Math.min(nA, nB) < SMALL_SAMPLE_THRESHOLD,
      rate_a: nA > 0 ? kA / nA : NaN, rate_b: nB > 0 ? kB / nB : NaN, n_a: nA, n_b: nB,
    };
    if (nA === 0 || nB === 0) {
      var why = (nA === 0 ? "group A" : "group B") + (nA === 0 && nB === 0 ? " and group B have" : " has") + " no people: there is no rate to compare";
      ["gap", "ci_low", "ci_high", "p_value", "log_p_value", "ratio", "ratio_low", "ratio_high"].forEach(function (f) { reasons[f] = why; });
      if (nA === 0) reasons.rate_a = "group A has no people";
      if (nB === 0) reasons.rate_b = "group B has no people";
      return withReasons(out, reasons);
    }
    var z = zOf(o.confidenceLevel);
    out.gap = kA / nA - kB / nB;
    var ci = newcombe(kA, nA, kB, nB, z);
    out.ci_low = ci[0];
    out.ci_high = ci[1];
    out.log_p_value = logExactP(kA, nA, kB, nB, o.alternative);
    out.p_value = Math.exp(out.log_p_value);
    var fa = o.favourable === "negative" ? nA - kA : kA;
    var fb = o.favourable === "negative" ? nB - kB : kB;
    var r = moverRatio(fa, nA, fb, nB, z);
    out.ratio_low = r[0];
    out.ratio_high = r[1];
    if (fb === 0) {
      reasons.ratio = "no one in group B has the favourable outcome: the ratio divides by zero";
      if (fa === 0) {
        reasons.ratio_low = reasons.ratio_high = "no one in either group has the favourable outcome: every ratio fits";
      }
    } else {
      out.ratio = (fa / nA) / (fb / nB);
    }
    return withReasons(out, reasons);
  }

  return { compare: compare, logExactP: logExactP, zOf: zOf, wilson: wilson };
});
