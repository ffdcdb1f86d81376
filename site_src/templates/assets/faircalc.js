// FairCalc: the numbers of faircode.significance for counts a reader types, in the browser.
// Plain JavaScript, no dependencies, no network. tests/e2e/test_faircalc.py holds every
// function to the Python library (relative error at most 1e-9, p-values in log space).
//
//   FairCalc.compare(kA, nA, kB, nB, options)   two groups: gap, Newcombe interval, exact p,
//                                               favourable-outcome ratio with its MOVER-R interval
//   FairCalc.power(rateA, rateB, nA, nB, opts)  exact power of the exact test (permutation_test_power)
//   FairCalc.detectableGap(nA, nB, baseRate, o) minimum detectable gap at 80% power (exact power)
//   FairCalc.auditSize(rateA, rateB, shareA, o) rows an audit needs (sample-size formula) + exact power there
//   FairCalc.adjust(pValues, method)            Holm or Benjamini-Hochberg adjusted p-values
//   FairCalc.groups(counts, options)            k groups: Wilson intervals, pairwise exact tests
//                                               (Holm), the chi-squared homogeneity test
//   FairCalc.background(method, args, onProgress)  any of the above off the page's thread (a Web
//                                               Worker), with progress and a cancel
//   FairCalc.carry(name, module)                a module that extends FairCalc, carried into
//                                               the workers too: FairCalcText (faircalc-text.js,
//                                               how the pages write numbers), FairCalcEquivalence
//                                               (faircalc-equivalence.js, the equivalence test
//                                               and the three-state verdict)
//
// Conventions: group A is the group the question is about (the disadvantaged group), B the
// comparison; a gap is A minus B, a rate in [0, 1]. Valid input never throws: a quantity that is
// undefined (a group with no one in it) is NaN and `reasons[field]` says why (`reason` joins
// them). Invalid input (negative counts, flagged above people, non-integers) throws a TypeError
// or RangeError naming the argument.
//
// The whole file is one function, `faircalc`, called at once on the page; a worker is built from
// its own source (Function.prototype.toString), so the worker needs no second file and no fetch,
// and works from a copy of the site opened from disk (file://), where a browser refuses
// `new Worker("file://...")` and `fetch`.
(function faircalc(root, inWorker) {
  "use strict";

  var LN_2PI = 1.8378770664093456; // log(2 pi)
  var LN_SQRT_PI = 0.5723649429247001; // log(sqrt(pi)) = lgamma(1/2)
  var TIE_RTOL = 1e-9; // faircode.significance._TIE_RTOL: chi-squared statistics this close tie
  var SMALL_SAMPLE_THRESHOLD = 30; // faircode.significance.SMALL_SAMPLE_THRESHOLD
  var MAX_EXACT_TABLES = 200000; // faircode.group_tests.MAX_EXACT_TABLES
  // faircode.significance._homogeneity._MIN_EXPECTED: the chi-squared approximation only when
  // every expected count is at least 5. Stricter than Cochran's rule (Cochran 1954), which allows
  // up to 20% of the expected counts below 5 and none below 1.
  var MIN_EXPECTED = 5;
  var CENTRAL_TAIL = 2.5e-18; // faircode.significance._central: binomial mass left out per side
  // A term below this share of the running sum ends a sum over a tail: the rest of a
  // log-concave tail whose terms fall this far is below 1e-18 of the sum.
  var VANISH = 1e-20;
  // In a worker (`background`), told when each exact power starts and how far it has gone; null
  // on the page, where the same functions run without it.
  var tracker = null;

  // ------------------------------------------------------------------ validation

  function fail(Kind, message) {
    throw new Kind("FairCalc: " + message);
  }

  function count(value, name) {
    if (typeof value !== "number" || !Number.isInteger(value)) {
      fail(TypeError, "`" + name + "` must be a whole number of people; got " + String(value));
    }
    if (value < 0) fail(RangeError, "`" + name + "` must be 0 or more; got " + value);
    if (value > 1e9) fail(RangeError, "`" + name + "` must be at most 1,000,000,000; got " + value);
    return value;
  }

  function flaggedOf(k, n, kName, nName) {
    count(k, kName);
    count(n, nName);
    if (k > n) fail(RangeError, "`" + kName + "` (" + k + ") cannot exceed `" + nName + "` (" + n + ")");
    return k;
  }

  function rate(value, name) {
    if (typeof value !== "number" || Number.isNaN(value)) fail(TypeError, "`" + name + "` must be a rate in [0, 1]; got " + String(value));
    if (value < 0 || value > 1) fail(RangeError, "`" + name + "` must be a rate in [0, 1]; got " + value);
    return value;
  }

  function openUnit(value, name) {
    if (typeof value !== "number" || Number.isNaN(value)) fail(TypeError, "`" + name + "` must be a number strictly between 0 and 1; got " + String(value));
    if (!(value > 0 && value < 1)) fail(RangeError, "`" + name + "` must be strictly between 0 and 1; got " + value);
    return value;
  }

  function positive(value, name) {
    count(value, name);
    if (value < 1) fail(RangeError, "`" + name + "` must be at least 1; got " + value);
    return value;
  }

  function choice(value, name, choices) {
    if (choices.indexOf(value) < 0) {
      fail(RangeError, "`" + name + "` must be one of " + choices.map(function (c) { return JSON.stringify(c); }).join(", ") + "; got " + JSON.stringify(value));
    }
    return value;
  }

  function opts(options, defaults, where) {
    var out = {};
    options = options || {};
    if (typeof options !== "object") fail(TypeError, where + ": `options` must be an object");
    Object.keys(options).forEach(function (key) {
      if (!(key in defaults)) fail(RangeError, where + ": unknown option `" + key + "` (known: " + Object.keys(defaults).join(", ") + ")");
    });
    Object.keys(defaults).forEach(function (key) { out[key] = key in options ? options[key] : defaults[key]; });
    return out;
  }

  // ------------------------------------------------------------------ special functions

  // Loader's saddle-point expansion of binomial probabilities (C. Loader 2000, "Fast and
  // accurate computation of binomial probabilities", the algorithm of R's dbinom and dhyper):
  // relative error near 1e-15 for any n, where log-gamma differences lose digits as n grows.
  var STIRLERR = [0, 0.08106146679532726, 0.0413406959554093, 0.02767792568499834, 0.020790672103765093,
    0.016644691189821193, 0.013876128823070748, 0.01189670994589177, 0.010411265261972096,
    0.009255462182712733, 0.00833056343336287, 0.007573675487951841, 0.00694284010720953,
    0.006408994188004207, 0.0059513701127588475, 0.005554733551962801];

  // log(n!) - [(n + 1/2) log n - n + log(2 pi)/2], integer n >= 1.
  function stirlerr(n) {
    if (n <= 15) return STIRLERR[n];
    var nn = n * n;
    return (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - 1 / (1188 * nn)) / nn) / nn) / nn) / n;
  }

  // x log(x / m) + m - x, without cancellation when x is near m.
  function bd0(x, m) {
    if (Math.abs(x - m) < 0.1 * (x + m)) {
      var v = (x - m) / (x + m);
      var s = (x - m) * v;
      var ej = 2 * x * v;
      v = v * v;
      for (var j = 1; j < 1000; j++) {
        ej *= v;
        var s1 = s + ej / (2 * j + 1);
        if (s1 === s) return s1;
        s = s1;
      }
      return s;
    }
    return x * Math.log(x / m) + m - x;
  }

  // log P(Binomial(n, p) = x), q = 1 - p given separately so that it keeps its digits.
  function logDbinom(x, n, p, q) {
    if (x < 0 || x > n) return -Infinity;
    if (p === 0) return x === 0 ? 0 : -Infinity;
    if (q === 0) return x === n ? 0 : -Infinity;
    if (x === 0) {
      if (n === 0) return 0;
      return p < 0.1 ? -bd0(n, n * q) - n * p : n * Math.log(q);
    }
    if (x === n) return q < 0.1 ? -bd0(n, n * p) - n * q : n * Math.log(p);
    var lc = stirlerr(n) - stirlerr(x) - stirlerr(n - x) - bd0(x, n * p) - bd0(n - x, n * q);
    var lf = LN_2PI + Math.log(x) + Math.log1p(-x / n);
    return lc - 0.5 * lf;
  }

  // log P(X = x) for X hypergeometric: `draws` rows drawn from `ones` + `zeros` (R's dhyper).
  function logDhyper(x, ones, zeros, draws) {
    var total = ones + zeros;
    var p = draws / total;
    var q = (total - draws) / total;
    return logDbinom(x, ones, p, q) + logDbinom(draws - x, zeros, p, q) - logDbinom(draws, total, p, q);
  }

  // log C(n, k), from the binomial probability at p = 1/2.
  function logChoose(n, k) {
    if (k < 0 || k > n) return -Infinity;
    return logDbinom(k, n, 0.5, 0.5) + n * Math.LN2;
  }

  // log Gamma(x), x > 0: Stirling's series after shifting x above 15.
  function lgamma(x) {
    if (x === 0.5) return LN_SQRT_PI;
    var shift = 0;
    while (x < 15) {
      shift += Math.log(x);
      x += 1;
    }
    var xx = x * x;
    var series = (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - 1 / (1188 * xx)) / xx) / xx) / xx) / x;
    return (x - 0.5) * Math.log(x) - x + 0.5 * LN_2PI + series - shift;
  }

  // log of the regularised upper incomplete gamma Q(a, x) (the chi-squared survival function at
  // 2x with 2a degrees of freedom): the series for P when x < a + 1, Lentz's continued fraction
  // for Q beyond (Numerical Recipes, 6.2), in log space so that a tiny Q does not underflow.
  function logGammaQ(a, x) {
    if (x <= 0) return 0;
    var front = a * Math.log(x) - x - lgamma(a);
    if (x < a + 1) {
      var ap = a, sum = 1 / a, del = sum;
      for (var n = 0; n < 100000; n++) {
        ap += 1;
        del *= x / ap;
        sum += del;
        if (Math.abs(del) < Math.abs(sum) * 1e-17) break;
      }
      return Math.log1p(-Math.exp(front + Math.log(sum)));
    }
    var tiny = 1e-300;
    var b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (var i = 1; i < 100000; i++) {
      var an = -i * (i - a);
      b += 2;
      d = an * d + b;
      if (Math.abs(d) < tiny) d = tiny;
      c = b + an / c;
      if (Math.abs(c) < tiny) c = tiny;
      d = 1 / d;
      var delta = d * c;
      h *= delta;
      if (Math.abs(delta - 1) < 1e-17) break;
    }
    return front + Math.log(h);
  }

  // The standard normal distribution function, through erfc(t) = Q(1/2, t^2).
  function ndtr(z) {
    if (z === 0) return 0.5;
    var tail = 0.5 * Math.exp(logGammaQ(0.5, 0.5 * z * z));
    return z < 0 ? tail : 1 - tail;
  }

  // Its inverse: Acklam's rational approximation, polished by Halley steps on ndtr.
  function ndtri(p) {
    var a = [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00];
    var b = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01];
    var c = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00];
    var d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00];
    var x, q, r;
    if (p < 0.02425) {
      q = Math.sqrt(-2 * Math.log(p));
      x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else if (p > 1 - 0.02425) {
      q = Math.sqrt(-2 * Math.log1p(-p));
      x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else {
      q = p - 0.5;
      r = q * q;
      x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    for (var i = 0; i < 3; i++) {
      // Work with the smaller tail: P(Z > x) for p above 1/2 keeps its digits.
      var e = p > 0.5 ? (1 - p) - ndtr(-x) : ndtr(x) - p;
      var u = e * Math.sqrt(2 * Math.PI) * Math.exp(0.5 * x * x);
      x = x - u / (1 + 0.5 * x * u);
    }
    return x;
  }

  function logAddExp(a, b) {
    if (a === -Infinity) return b;
    if (b === -Infinity) return a;
    var top = Math.max(a, b);
    return top + Math.log(Math.exp(a - top) + Math.exp(b - top));
  }

  // log(exp(a) - exp(b)), a >= b.
  function logSubExp(a, b) {
    if (b === -Infinity) return a;
    return a + Math.log1p(-Math.exp(b - a));
  }

  // Round half to even, as Python's round().
  function roundHalfEven(v) {
    var r = Math.round(v);
    if (Math.abs(v % 1) === 0.5 && r % 2 !== 0) r -= 1;
    return r;
  }

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

  // floor(num / den) and ceil(num / den) for integers, exact however large (BigInt past 2^53).
  function divFloor(num, den) {
    if (Number.isSafeInteger(num)) return Math.floor(num / den);
    return Number(bigFloor(num, den));
  }

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

  function withReasons(out, reasons) {
    out.reasons = reasons;
    var keys = Object.keys(reasons);
    out.reason = keys.length ? keys.map(function (k) { return k + ": " + reasons[k]; }).join("; ") : null;
    return out;
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

  // ------------------------------------------------------------------ power

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
    if (tracker !== null) tracker.start();
    if (nA > nB) { // the work is O(N min(nA, nB)): let A be the smaller group
      var t = pA; pA = pB; pB = t;
      t = nA; nA = nB; nB = t;
      alternative = alternative === "greater" ? "less" : alternative === "less" ? "greater" : alternative;
    }
    var N = nA + nB;
    var pa = binomialPmf(nA, pA), pb = binomialPmf(nB, pB);
    var cx = central(pa), cy = central(pb);
    var xFirst = cx[0], xLast = cx[1], yFirst = cy[0], yLast = cy[1];
    var kMin = xFirst + yFirst, kMax = xLast + yLast;
    // Every outcome the library visits: x in [xFirst, xLast], K in [kMin, kMax], 0 <= K - x <= nB.
    var cumB = new Float64Array(nB + 2); // cumB[i] = pb[0] + ... + pb[i - 1]
    for (var i = 0; i <= nB; i++) cumB[i + 1] = cumB[i] + pb[i];
    var visited = 0;
    for (var x = xFirst; x <= xLast; x++) {
      var y0 = Math.max(0, kMin - x), y1 = Math.min(nB, kMax - x);
      if (y1 >= y0) visited += pa[x] * (cumB[y1 + 1] - cumB[y0]);
    }
    // The power is what the test rejects: the visited outcomes less the accepted ones. An
    // outcome beyond 12 s + 50 of X's null mean has a two-sided p < 1e-29 (Bernstein's
    // inequality, as the library argues), so it is rejected at any alpha above 1e-25: only the
    // window is examined (a one-sided test accepts everything beyond it on the other side).
    var wide = alpha < 1e-25;
    var accepted = 0;
    var buf = new Float64Array(Math.min(nA, N) + 2), below = new Float64Array(buf.length), above = new Float64Array(buf.length);
    for (var K = kMin; K <= kMax; K++) {
      if (tracker !== null && (K - kMin) % 64 === 0) tracker.at((K - kMin) / (kMax - kMin + 1));
      var mean = K * nA / N;
      var spread = Math.sqrt(nA * (K / N) * (1 - K / N));
      var reach = 12 * spread + 50;
      var lo = Math.max(Math.max(0, K - nB), wide ? -Infinity : Math.floor(mean - reach));
      var hi = Math.min(Math.min(nA, K), wide ? Infinity : Math.ceil(mean + reach));
      var from = Math.max(lo, xFirst), to = Math.min(hi, xLast);
      // One-sided: beyond the window on the alternative's far side p is about 1, so accepted.
      var xs, xe;
      if (alternative === "greater") { xs = Math.max(xFirst, K - nB); xe = Math.min(xLast, lo - 1); }
      else if (alternative === "less") { xs = Math.max(xFirst, hi + 1); xe = Math.min(xLast, K); }
      else { xs = 1; xe = 0; }
      for (x = xs; x <= xe; x++) accepted += pa[x] * pb[K - x];
      if (to < from) continue;
      // Null pmf of X given K on [lo, hi], from its mode outwards by term ratios, normalised.
      var rest = N - K - nA, width = hi - lo + 1;
      var mode = Math.min(hi, Math.max(lo, Math.floor((nA + 1) * (K + 1) / (N + 2))));
      var j, s = 0;
      buf[mode - lo] = 1;
      for (j = mode; j < hi; j++) buf[j + 1 - lo] = buf[j - lo] * ((K - j) * (nA - j) / ((j + 1) * (rest + j + 1)));
      for (j = mode; j > lo; j--) buf[j - 1 - lo] = buf[j - lo] * (j * (rest + j) / ((K - j + 1) * (nA - j + 1)));
      for (j = 0; j < width; j++) s += buf[j];
      var run = 0;
      for (j = 0; j < width; j++) { run += buf[j] / s; below[j] = run; }
      run = 0;
      for (j = width - 1; j >= 0; j--) { run += buf[j] / s; above[j] = run; }
      var center = K * nA;
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
        if (!(p < alpha)) accepted += pa[x] * pb[K - x];
      }
    }
    return Math.min(1, Math.max(0, visited - accepted));
  }

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

  // ------------------------------------------------------------------ adjust

  /**
   * Holm (FWER) or Benjamini-Hochberg (FDR) adjusted p-values (faircode.significance.
   * adjust_p_values): an array of numbers in [0, 1], NaN kept as untestable.
   */
  function adjust(pValues, method) {
    if (!Array.isArray(pValues)) fail(TypeError, "`pValues` must be an array of p-values");
    choice(method === undefined ? "holm" : method, "method", ["holm", "bh"]);
    method = method === undefined ? "holm" : method;
    var idx = [];
    pValues.forEach(function (p, i) {
      if (typeof p !== "number") fail(TypeError, "`pValues[" + i + "]` must be a number; got " + String(p));
      if (Number.isNaN(p)) return;
      if (!(p >= 0 && p <= 1)) fail(RangeError, "`pValues[" + i + "]` must lie in [0, 1]; got " + p);
      idx.push(i);
    });
    var out = pValues.map(function () { return NaN; });
    var m = idx.length;
    if (!m) return out;
    idx.sort(function (i, j) { return pValues[i] - pValues[j] || i - j; }); // stable, as NumPy's
    var adj = new Array(m), r;
    if (method === "holm") {
      var running = -Infinity;
      for (r = 0; r < m; r++) {
        running = Math.max(running, Math.min(1, (m - r) * pValues[idx[r]]));
        adj[r] = running;
      }
    } else {
      var low = Infinity;
      for (r = m - 1; r >= 0; r--) {
        low = Math.min(low, Math.min(1, m * pValues[idx[r]] / (r + 1)));
        adj[r] = low;
      }
    }
    for (r = 0; r < m; r++) out[idx[r]] = adj[r];
    return out;
  }

  // ------------------------------------------------------------------ k groups

  // Pearson's X^2 of a k x 2 table from the ones per group (group_tests._chi2_of_counts).
  function chi2(counts, sizes, ones, N) {
    var p = ones / N;
    if (p === 0 || p === 1) return 0;
    var s = 0;
    for (var g = 0; g < sizes.length; g++) {
      var e = sizes[g] * p;
      s += (counts[g] - e) * (counts[g] - e) / (e * (1 - p));
    }
    return s;
  }

  // How many count vectors share the margins (group_tests._count_tables, in the same floats).
  function countTables(sizes, ones) {
    var ways = new Float64Array(ones + 1);
    ways[0] = 1;
    for (var g = 0; g < sizes.length; g++) {
      var run = new Float64Array(ones + 1), acc = 0, i;
      for (i = 0; i <= ones; i++) { acc += ways[i]; run[i] = acc; }
      for (i = 0; i <= ones; i++) ways[i] = run[i] - (i - sizes[g] - 1 >= 0 ? run[i - sizes[g] - 1] : 0);
    }
    return ways[ones];
  }

  // The exact upper tail of X^2 under relabelling: every table with these margins, its
  // multivariate hypergeometric probability, smallest groups first (the largest takes the rest).
  function exactHomogeneity(sizes, ones, statistic) {
    var k = sizes.length, N = 0, g;
    for (g = 0; g < k; g++) N += sizes[g];
    var order = sizes.map(function (s, i) { return i; }).sort(function (i, j) { return sizes[i] - sizes[j] || i - j; });
    var sorted = order.map(function (i) { return sizes[i]; });
    var roomAfter = new Array(k);
    var room = 0;
    for (g = k - 1; g >= 0; g--) { roomAfter[g] = room; room += sorted[g]; }
    var p = ones / N, cut = statistic - TIE_RTOL * Math.max(statistic, 1);
    var logNorm = logChoose(N, ones);
    var lchoose = sorted.map(function (n) {
      var t = new Float64Array(n + 1);
      for (var c = 0; c <= n; c++) t[c] = logChoose(n, c);
      return t;
    });
    var terms = [], top = -Infinity;
    function visit(g, total, logw, x2) {
      var n = sorted[g], e = n * p;
      if (g === k - 1) {
        var c = ones - total;
        var stat = x2 + (c - e) * (c - e) / (e * (1 - p));
        if (stat >= cut) {
          var lw = logw + lchoose[g][c] - logNorm;
          terms.push(lw);
          if (lw > top) top = lw;
        }
        return;
      }
      var cLo = Math.max(0, ones - total - roomAfter[g]), cHi = Math.min(n, ones - total);
      for (var c2 = cLo; c2 <= cHi; c2++) visit(g + 1, total + c2, logw + lchoose[g][c2], x2 + (c2 - e) * (c2 - e) / (e * (1 - p)));
    }
    if (p === 0 || p === 1) return 0; // one table: X^2 = 0 is as large as itself
    visit(0, 0, 0, 0);
    if (!terms.length) return -Infinity;
    var s = 0;
    for (var i = 0; i < terms.length; i++) s += Math.exp(terms[i] - top);
    return Math.min(0, top + Math.log(s));
  }

  function asLabelledCounts(counts) {
    if (!Array.isArray(counts)) fail(TypeError, "`counts` must be an array of groups, each {label, flagged, people} or [flagged, people]");
    if (counts.length < 2) fail(RangeError, "`counts` must hold at least two groups; got " + counts.length);
    return counts.map(function (c, i) {
      var label, k, n;
      if (Array.isArray(c)) { k = c[0]; n = c[1]; label = c.length > 2 ? String(c[2]) : "group " + (i + 1); }
      else if (c && typeof c === "object") { k = c.flagged; n = c.people; label = c.label === undefined ? "group " + (i + 1) : String(c.label); }
      else fail(TypeError, "`counts[" + i + "]` must be {label, flagged, people} or [flagged, people]; got " + String(c));
      flaggedOf(k, n, "counts[" + i + "].flagged", "counts[" + i + "].people");
      return { label: label, flagged: k, people: n };
    });
  }

  /**
   * More than two groups. counts: [{label, flagged, people}, ...] or [[flagged, people], ...].
   * options.confidenceLevel (0.95); options.adjust ("holm" or "bh"); options.maxTables (200,000:
   * the cap on exact enumeration, as faircode.group_tests.homogeneity_test).
   * Returns {groups: [{label, flagged, people, rate, ci_low, ci_high, small_sample_warning}],
   * pairwise: [{group_a, group_b, gap, p_value, log_p_value, p_value_adjusted}] (every pair i < j
   * in the order given, gap = rate_i - rate_j, exact tests, adjusted over the pairs),
   * omnibus: {statistic, dof, p_value, log_p_value, method, n_tables, min_expected, reason}}.
   * The omnibus is Pearson's chi-squared test of homogeneity: exact (enumerated) when at most
   * maxTables tables share the margins, else chi-squared with k - 1 degrees of freedom when
   * every expected count is at least 5; otherwise the library draws a Monte Carlo p, which a
   * browser cannot reproduce, and the p-value is NaN with the reason. Groups with no people
   * are left out of the tests (their rate is NaN).
   */
  function groups(counts, options) {
    var rows = asLabelledCounts(counts);
    var o = opts(options, { confidenceLevel: 0.95, adjust: "holm", maxTables: MAX_EXACT_TABLES }, "groups");
    openUnit(o.confidenceLevel, "confidenceLevel");
    choice(o.adjust, "adjust", ["holm", "bh"]);
    positive(o.maxTables, "maxTables");
    var z = zOf(o.confidenceLevel);
    var out = { groups: [], pairwise: [], omnibus: null };
    rows.forEach(function (r) {
      var g = { label: r.label, flagged: r.flagged, people: r.people, rate: NaN, ci_low: NaN, ci_high: NaN,
        small_sample_warning: r.people < SMALL_SAMPLE_THRESHOLD };
      var reasons = {};
      if (r.people === 0) reasons.rate = "no people in this group";
      else {
        g.rate = r.flagged / r.people;
        var w = wilson(r.flagged, r.people, z);
        g.ci_low = w[0];
        g.ci_high = w[1];
      }
      out.groups.push(withReasons(g, reasons));
    });
    var present = rows.filter(function (r) { return r.people > 0; });
    for (var i = 0; i < present.length; i++) {
      for (var j = i + 1; j < present.length; j++) {
        var a = present[i], b = present[j];
        var lp = logExactP(a.flagged, a.people, b.flagged, b.people, "two-sided");
        out.pairwise.push({ group_a: a.label, group_b: b.label, gap: a.flagged / a.people - b.flagged / b.people,
          p_value: Math.exp(lp), log_p_value: lp, p_value_adjusted: NaN });
      }
    }
    var adjusted = adjust(out.pairwise.map(function (c) { return c.p_value; }), o.adjust);
    out.pairwise.forEach(function (c, n) { c.p_value_adjusted = adjusted[n]; });
    var om = { statistic: NaN, dof: NaN, p_value: NaN, log_p_value: NaN, method: null, n_tables: NaN, min_expected: NaN };
    if (present.length < 2) {
      out.omnibus = withReasons(om, { p_value: "fewer than two groups with people in them" });
      return out;
    }
    var sizes = present.map(function (r) { return r.people; });
    var cs = present.map(function (r) { return r.flagged; });
    var N = 0, ones = 0;
    present.forEach(function (r) { N += r.people; ones += r.flagged; });
    var p = ones / N;
    om.dof = present.length - 1;
    om.min_expected = Math.min.apply(null, sizes.map(function (s) { return Math.min(s * p, s * (1 - p)); }));
    om.statistic = chi2(cs, sizes, ones, N);
    om.n_tables = countTables(sizes, ones);
    var reasons = {};
    if (om.n_tables <= o.maxTables) {
      om.method = "exact";
      om.log_p_value = exactHomogeneity(sizes, ones, om.statistic);
    } else if (om.min_expected >= MIN_EXPECTED) {
      om.method = "asymptotic";
      om.log_p_value = om.statistic > 0 ? logGammaQ(om.dof / 2, om.statistic / 2) : 0;
    } else {
      om.method = "monte_carlo";
      reasons.p_value = reasons.log_p_value = "too many tables to enumerate (" + om.n_tables.toPrecision(3) +
        ") and expected counts below 5: faircode.group_tests.homogeneity_test draws a Monte Carlo p-value";
    }
    om.p_value = Math.exp(om.log_p_value);
    out.omnibus = withReasons(om, reasons);
    return out;
  }

  // ------------------------------------------------------------------ off the page's thread

  // The methods `background` runs: those whose work grows with the people (an exact power is
  // O(people) work for each of O(sqrt(people)) totals; 101 s for 10^6 against 10^6 on a laptop),
  // and every function of a carried module ("FairCalcEquivalence.verdict").
  var BACKGROUND = ["compare", "power", "detectableGap", "auditSize", "groups"];
  var carried = []; // [name, module] of each carried module, in the order carried
  var workerUrl = null;

  /**
   * A module that extends FairCalc (faircalc-text.js, faircalc-equivalence.js): `module(root)`
   * returns its functions, set (frozen) as root[name] here and in every worker `background`
   * starts, which runs the module's own source after this script's: so its functions run off the
   * page's thread too, still with no second request. Returns root[name].
   */
  function carry(name, module) {
    if (typeof name !== "string" || !/^[A-Za-z]\w*$/.test(name)) fail(TypeError, "`name` must be a JavaScript name; got " + String(name));
    if (typeof module !== "function") fail(TypeError, "`module` must be a function (root) => {functions}");
    carried = carried.filter(function (c) { return c[0] !== name; }).concat([[name, module]]);
    workerUrl = null; // the next worker carries it too
    root[name] = Object.freeze(module(root));
    return root[name];
  }

  // The function `background` runs for `method`, in `scope` (the page's window or the worker's).
  function task(scope, method) {
    var dot = typeof method === "string" ? method.indexOf(".") : -1;
    var owner = dot < 0 ? "FairCalc" : method.slice(0, dot), name = dot < 0 ? method : method.slice(dot + 1);
    var known = dot < 0 ? BACKGROUND.indexOf(name) >= 0 : carried.some(function (c) { return c[0] === owner; });
    if (!known || typeof (scope[owner] || {})[name] !== "function") {
      fail(RangeError, "`method` must be one of " + BACKGROUND.map(function (c) { return JSON.stringify(c); }).join(", ") +
        " or \"Module.function\" of a carried module (" + carried.map(function (c) { return c[0]; }).join(", ") + "); got " + JSON.stringify(method));
    }
    return scope[owner][name];
  }

  /**
   * FairCalc[method](...args) in a Web Worker, so the page stays usable however long it takes;
   * `method` may name a carried module's function too ("FairCalcEquivalence.verdict"). The
   * worker runs this script's own source and the carried modules' from a Blob URL: no second
   * file, no fetch, and it works from a copy of the site opened from disk. The numbers are the
   * same code's.
   *
   * onProgress({evaluations, fraction}), at most ten times a second: the exact powers started
   * so far (a minimum detectable gap needs several) and the share done of the current one.
   * Returns {result, cancel}: result a Promise of the method's result (rejected with its
   * TypeError or RangeError on invalid input, or with an Error named "AbortError" once
   * cancelled); cancel() stops the worker at once. Where a browser refuses a worker, the call
   * runs on the page's thread instead (the page then waits for it, with no progress).
   */
  function background(method, args, onProgress) {
    var run = task(root, method);
    if (!Array.isArray(args)) fail(TypeError, "`args` must be an array of the method's arguments");
    var worker = null, settle = null, done = false;
    function finish() {
      done = true;
      if (worker !== null) worker.terminate();
      worker = null;
    }
    function onThePage() {
      window.setTimeout(function () {
        if (done) return;
        finish();
        try { settle.resolve(run.apply(null, args)); } catch (err) { settle.reject(err); }
      }, 0);
    }
    var result = new Promise(function (resolve, reject) {
      settle = { resolve: resolve, reject: reject };
      try {
        if (workerUrl === null) {
          var source = ["(" + faircalc + ")(self, true);"].concat(carried.map(function (c) {
            return "self.FairCalc.carry(" + JSON.stringify(c[0]) + ", " + c[1] + ");";
          }));
          workerUrl = URL.createObjectURL(new Blob([source.join("\n")], { type: "text/javascript" }));
        }
        worker = new Worker(workerUrl);
      } catch (err) {
        return onThePage();
      }
      worker.onmessage = function (ev) {
        var m = ev.data;
        if (m.progress) { if (onProgress && !done) onProgress(m.progress); return; }
        finish();
        if (m.error) {
          var error = m.error.name === "RangeError" ? new RangeError(m.error.message) : m.error.name === "TypeError" ? new TypeError(m.error.message) : new Error(m.error.message);
          reject(error);
        } else {
          resolve(m.result);
        }
      };
      worker.onerror = function (ev) {  // the worker could not start (a policy against Blob workers)
        ev.preventDefault();
        worker.terminate();
        worker = null;
        onThePage();
      };
      worker.postMessage({ method: method, args: args });
    });
    return {
      result: result,
      cancel: function () {
        if (done) return;
        finish();
        var stop = new Error("FairCalc: stopped");
        stop.name = "AbortError";
        settle.reject(stop);
      },
    };
  }

  // Inside the worker: compute what the page asks, telling it how far each exact power has gone.
  function serve(scope) {
    scope.onmessage = function (ev) {
      var call = ev.data, evaluations = 0, last = 0;
      function tell(fraction, now) {
        var t = Date.now();
        if (!now && t - last < 100) return;
        last = t;
        scope.postMessage({ progress: { evaluations: evaluations, fraction: fraction } });
      }
      tracker = { start: function () { evaluations += 1; tell(0, true); }, at: tell };
      try {
        scope.postMessage({ result: task(scope, call.method).apply(null, call.args) });
      } catch (err) {
        scope.postMessage({ error: { name: err.name, message: err.message } });
      }
    };
  }

  root.FairCalc = Object.freeze({
    version: 1,
    SMALL_SAMPLE_THRESHOLD: SMALL_SAMPLE_THRESHOLD,
    compare: compare,
    power: power,
    detectableGap: detectableGap,
    auditSize: auditSize,
    adjust: adjust,
    groups: groups,
    background: background,
    carry: carry,
    // Exposed for the page, the tests and faircalc-equivalence.js: the normal quantile and
    // distribution function, and the log binomial probability.
    ndtri: ndtri,
    ndtr: ndtr,
    logDbinom: logDbinom,
  });
  if (inWorker) serve(root);
})(typeof window !== "undefined" ? window : this);
