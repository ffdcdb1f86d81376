// FairCalcCore: what every FairCalc method shares, as faircode.significance._validation is for
// the library: the input checks (each names the argument and what it expected), the special
// functions (binomial and hypergeometric probabilities, log-gamma, the incomplete gamma and the
// normal distribution, all in log space where a tail underflows), and withReasons (why a
// quantity is NaN). Not for the pages: they call FairCalc, whose ndtri, ndtr, logDbinom and
// SMALL_SAMPLE_THRESHOLD are these.
//
// Carried (FairCalc.carry) into FairCalc.background's workers with the methods. Needs faircalc.js
// first; faircalc-exact.js and the method modules after it need this.
window.FairCalc.carry("FairCalcCore", function faircalcCore(root, plumbing) {
  "use strict";

  var fail = plumbing.fail;
  var LN_2PI = 1.8378770664093456; // log(2 pi)
  var LN_SQRT_PI = 0.5723649429247001; // log(sqrt(pi)) = lgamma(1/2)
  var SMALL_SAMPLE_THRESHOLD = 30; // faircode.significance.SMALL_SAMPLE_THRESHOLD

  // ------------------------------------------------------------------ validation

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

  // The result `out` with why each of its NaN quantities is NaN: reasons {field: why}, and
  // reason, them all in one line (null when there are none).
  function withReasons(out, reasons) {
    out.reasons = reasons;
    var keys = Object.keys(reasons);
    out.reason = keys.length ? keys.map(function (k) { return k + ": " + reasons[k]; }).join("; ") : null;
    return out;
  }

  return {
    SMALL_SAMPLE_THRESHOLD: SMALL_SAMPLE_THRESHOLD,
    // input checks
    flaggedOf: flaggedOf, rate: rate, openUnit: openUnit, positive: positive, choice: choice, opts: opts,
    // special functions
    logDbinom: logDbinom, logDhyper: logDhyper, logChoose: logChoose, logGammaQ: logGammaQ, ndtr: ndtr, ndtri: ndtri,
    logAddExp: logAddExp, logSubExp: logSubExp, roundHalfEven: roundHalfEven,
    withReasons: withReasons,
  };
});
