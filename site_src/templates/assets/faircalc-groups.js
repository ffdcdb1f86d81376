// FairCalcGroups: more than two groups, as faircode.significance's _multiplicity, _groups and
// _homogeneity are for the library: p-values adjusted for testing them together (Holm, FWER;
// Benjamini-Hochberg, FDR) and FairCalc.groups: each group's rate and Wilson interval, every
// pair's exact test (adjusted over the pairs), and Pearson's chi-squared test of homogeneity
// (enumerated exactly where the tables are few enough).
//
// Carried (FairCalc.carry) into FairCalc.background's workers. Needs faircalc.js,
// faircalc-core.js and faircalc-exact.js first.
window.FairCalc.carry("FairCalcGroups", function faircalcGroups(root, plumbing) {
  "use strict";

  var C = root.FairCalcCore, E = root.FairCalcExact, fail = plumbing.fail;
  var flaggedOf = C.flaggedOf, openUnit = C.openUnit, positive = C.positive, choice = C.choice, opts = C.opts, withReasons = C.withReasons;
  var logChoose = C.logChoose, logGammaQ = C.logGammaQ, SMALL_SAMPLE_THRESHOLD = C.SMALL_SAMPLE_THRESHOLD;
  var logExactP = E.logExactP, zOf = E.zOf, wilson = E.wilson;
  var TIE_RTOL = 1e-9; // faircode.significance._TIE_RTOL: chi-squared statistics this close tie
  var MAX_EXACT_TABLES = 200000; // faircode.group_tests.MAX_EXACT_TABLES
  // faircode.significance._homogeneity._MIN_EXPECTED: the chi-squared approximation only when
  // every expected count is at least 5. Stricter than Cochran's rule (Cochran 1954), which allows
  // up to 20% of the expected counts below 5 and none below 1.
  var MIN_EXPECTED = 5;

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
    var present = rows.filter(function (r) { return r.people > 0; });
    return {
      groups: rows.map(function (r) { return groupRate(r, z); }),
      pairwise: pairwiseTests(present, o.adjust),
      omnibus: homogeneity(present, o.maxTables),
    };
  }

  // One group's rate and its Wilson interval at z (NaN, with the reason, for a group of no one).
  function groupRate(r, z) {
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
    return withReasons(g, reasons);
  }

  // Every pair i < j of the groups with people, in the order given: the exact test of the gap,
  // its p-value adjusted over the pairs by `method`.
  function pairwiseTests(present, method) {
    var pairs = [];
    for (var i = 0; i < present.length; i++) {
      for (var j = i + 1; j < present.length; j++) {
        var a = present[i], b = present[j];
        var lp = logExactP(a.flagged, a.people, b.flagged, b.people, "two-sided");
        pairs.push({ group_a: a.label, group_b: b.label, gap: a.flagged / a.people - b.flagged / b.people,
          p_value: Math.exp(lp), log_p_value: lp, p_value_adjusted: NaN });
      }
    }
    var adjusted = adjust(pairs.map(function (c) { return c.p_value; }), method);
    pairs.forEach(function (c, n) { c.p_value_adjusted = adjusted[n]; });
    return pairs;
  }

  // Pearson's chi-squared test of homogeneity of the groups with people: exact, asymptotic, or
  // (where neither holds) NaN with the reason.
  function homogeneity(present, maxTables) {
    var om = { statistic: NaN, dof: NaN, p_value: NaN, log_p_value: NaN, method: null, n_tables: NaN, min_expected: NaN };
    if (present.length < 2) return withReasons(om, { p_value: "fewer than two groups with people in them" });
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
    if (om.n_tables <= maxTables) {
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
    return withReasons(om, reasons);
  }

  return { adjust: adjust, groups: groups };
});
