// FairCalcText: how FairCalc writes numbers for people, one home for the calculator, the figures
// and the verdicts' sentences (faircalc-equivalence.js): a true minus sign, not a hyphen; gaps
// in percentage points with their sign; p-values, points and ratios as faircode.formatting
// writes them (format_p_value, format_points, format_ratio), to the character, so that a sentence
// reads the same on the page as in Python. tests/e2e/test_faircalc_equivalence.py holds them to it.
//
// Digits are rounded as Python's format() rounds them: on the number's exact binary value, a tie
// to even. (toFixed rounds a tie up; toLocaleString rounds the shortest decimal that reads back as
// the number, so 1.005 becomes "1.01" where Python writes "1.00".)
//
// Carried into FairCalc.background's workers (a verdict's sentence is written there): needs
// faircalc.js first.
window.FairCalc.carry("FairCalcText", function faircalcText() {
  "use strict";

  var MINUS = "\u2212";
  var SUPERSCRIPT = { "-": "⁻", "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹" };
  var SMALLEST_NORMAL = 2.2250738585072014e-308;
  var MAX_PP_DECIMALS = 6;

  // Python's f"{x:.{d}f}" for a finite x >= 0 below 1e21. toFixed is exact but rounds a tie up;
  // a tie is exact in binary, so its expansion ends at digit d + 1, while a double that is not
  // one lies further than 1e-40 from it (a difference of two fractions with small denominators).
  function digitsOf(x, d) {
    var text = x.toFixed(d), long = x.toFixed(Math.min(100, d + 40)), point = long.indexOf(".");
    if (!/^50*$/.test(long.slice(point + 1 + d))) return text;
    var down = long.slice(0, d > 0 ? point + 1 + d : point);
    return Number(down.slice(-1)) % 2 === 0 ? down : text;
  }

  function grouped(text) { // "12345.6" -> "12,345.6", Python's "," option
    var parts = text.split(".");
    parts[0] = parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return parts.join(".");
  }

  function isZero(text) { return !/[1-9]/.test(text); }

  // x with `digits` decimals and thousands separators: "12,345.6"; a true minus sign.
  function fixed(x, digits) {
    var text = grouped(digitsOf(Math.abs(x), digits));
    return x < 0 && !isZero(text) ? MINUS + text : text;
  }

  // "+1.2", "−0.4"; no sign where the value rounds to 0 at these digits.
  function signed(x, digits) {
    var text = fixed(Math.abs(x), digits);
    return isZero(text) ? text : (x < 0 ? MINUS : "+") + text;
  }

  // A gap (a difference of rates in [-1, 1]) in percentage points with its sign: "−10.0 pp".
  function pp(gap, digits) { return signed(100 * gap, digits === undefined ? 1 : digits) + " pp"; }

  // A rate in [0, 1] as a percentage: "12.5%" (Python's f"{rate:.1%}").
  function pct(rate, digits) { return fixed(100 * rate, digits === undefined ? 1 : digits) + "%"; }

  // The fewest decimals (at least 1) at which values shown in percentage points keep what
  // matters: each non-zero value a non-zero digit (so its sign shows, and whether an interval
  // holds 0), and values that differ stay apart. An interval of -0.0004 to 0.0016 reads
  // "−0.04 to +0.16 pp", not "0.0 to +0.2 pp".
  function ppDecimals(values) {
    for (var d = 1; d < MAX_PP_DECIMALS; d++) {
      var shown = values.map(function (v) { return fixed(100 * v, d); });
      var keeps = values.every(function (v, i) {
        return (v === 0 || !isZero(shown[i])) && values.every(function (w, j) { return v === w || shown[i] !== shown[j]; });
      });
      if (keeps) return d;
    }
    return MAX_PP_DECIMALS;
  }

  function superscript(exponent) {
    return String(exponent).split("").map(function (ch) { return SUPERSCRIPT[ch]; }).join("");
  }

  /**
   * A p-value as faircode.formatting.format_p_value writes it (two significant digits, no Monte
   * Carlo floor): "p = 0.032", "p = 0.50", "p = 1.0", "p = 3.2 × 10⁻⁷", "p < 10⁻³⁰⁰" for 0,
   * "p = n/a" for NaN. logP, its natural log, optional: where p underflows a double (below the
   * smallest normal, where the library's float keeps few digits or none), the digits come from
   * it instead, "p = 4.0 × 10⁻³²¹".
   */
  function pValue(p, logP) {
    if (Number.isFinite(logP) && !(p >= SMALLEST_NORMAL)) {
      var l10 = logP / Math.LN10, e = Math.floor(l10), m = Math.pow(10, l10 - e);
      if (Number(m.toFixed(1)) >= 10) { m /= 10; e += 1; }
      return "p = " + m.toFixed(1) + " × 10" + superscript(e);
    }
    if (Number.isNaN(p)) return "p = n/a";
    if (p === 0) return "p < 10⁻³⁰⁰";
    if (p < 0.001) {
      // toExponential is exact too; no p below 0.001 is a tie at two digits in binary (it would be
      // a 3-digit integer ending in 5 over 10^6 or more), so its rounding is Python's.
      var parts = p.toExponential(1).split("e");
      return "p = " + parts[0] + " × 10" + superscript(Number(parts[1]));
    }
    // Python's f"{p:#.2g}": two significant digits in fixed notation; one decimal fewer when the
    // rounding carries into a new digit (0.0996 -> "0.10").
    var e10 = Math.floor(Math.log10(p)), text = digitsOf(p, Math.max(0, 1 - e10));
    if (text.replace(".", "").replace(/^0+/, "").length > 2) text = digitsOf(p, Math.max(0, -e10));
    return "p = " + text;
  }

  /**
   * faircode.formatting.format_points: a gap (a difference of rates in [-1, 1]) in percentage
   * points, one decimal, or more (up to four) when one would round a gap that is not zero to
   * zero: "−12.3 percentage points", "−0.04 percentage points". options.signed (true): a "+" or
   * a true minus sign; options.unit (true): the words "percentage points".
   */
  function points(gap, options) {
    var o = options || {}, value = 100 * gap;
    if (Number.isNaN(value)) return "n/a";
    var decimals = 1;
    while (decimals < 4 && value !== 0 && isZero(digitsOf(Math.abs(value), decimals))) decimals++;
    var text = fixed(Math.abs(value), decimals);
    if (o.signed !== false && !isZero(text)) text = (value > 0 ? "+" : MINUS) + text;
    return o.unit === false ? text : text + " percentage points";
  }

  /**
   * faircode.formatting.format_ratio: a ratio of two rates to two decimals ("0.73", "∞"), three
   * where two would round it onto one of the lines `near` it is read against (0.797 -> "0.797").
   */
  function ratio(value, near) {
    if (Number.isNaN(value)) return "n/a";
    if (!Number.isFinite(value)) return "\u221e";
    var text = digitsOf(value, 2);
    if ((near || []).some(function (line) { return Number(text) === line && line !== value; })) text = digitsOf(value, 3);
    return text;
  }

  // "1 pair", "3 pairs", "1,200 p-values".
  function plural(n, one, many) { return fixed(n, 0) + " " + (n === 1 ? one : many || one + "s"); }

  return { fixed: fixed, signed: signed, pp: pp, pct: pct, ppDecimals: ppDecimals, pValue: pValue, points: points,
    ratio: ratio, plural: plural };
});
