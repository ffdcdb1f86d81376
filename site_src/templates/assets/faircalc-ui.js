// The "Check a gap" page (check-a-gap/index.md, from site_src/templates/check-a-gap.md.j2): reads
// the reader's counts, asks window.FairCalc (faircalc.js) for every number and writes the answers
// into live regions; the state lives in the page's URL, so a result can be shared.
// Material's instant navigation swaps pages without a reload, so setup runs on each `document$`.
(function () {
  "use strict";

  var SUP = { "-": "⁻", "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹" };
  // Above this many people the exact power (O(people) work per evaluation) waits for a click.
  var POWER_AUTO_LIMIT = 200000;

  function fmt(x, digits) {
    return x.toLocaleString("en", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }

  function signed(x, digits) {
    var s = fmt(Math.abs(x), digits);
    if (Number(s.replace(/,/g, "")) === 0) return s;
    return (x < 0 ? "−" : "+") + s;
  }

  function pp(x) { return signed(100 * x, 1) + " pp"; }
  function pct(x) { return fmt(100 * x, 1) + "%"; }

  // A p-value as faircode.formatting.format_p_value writes it, from its natural log (so a p that
  // underflows a double still prints: "p = 4.0 × 10⁻³²¹").
  function formatP(logP) {
    if (Number.isNaN(logP)) return "p = n/a";
    var p = Math.exp(logP);
    if (p >= 0.001) {
      var s = Number(p.toPrecision(2));
      var text = p.toPrecision(2);
      if (s >= 1) text = "1.0";
      return "p = " + text;
    }
    var l10 = logP / Math.LN10;
    var e = Math.floor(l10);
    var m = Math.pow(10, l10 - e);
    if (Number(m.toFixed(1)) >= 10) { m /= 10; e += 1; }
    var exp = String(e).split("").map(function (ch) { return SUP[ch]; }).join("");
    return "p = " + m.toFixed(1) + " × 10" + exp;
  }

  // "about 1 audit in 4": how often chance alone gives a gap at least this large.
  function chanceText(logP) {
    var p = Math.exp(logP);
    if (p >= 0.95) return "chance alone would give a gap at least this large in almost every audit";
    if (p >= 0.5) return "chance alone would give a gap at least this large in about " + Math.round(10 * p) + " audits in 10";
    if (logP < Math.log(1e-6)) return "chance alone would give a gap this large in fewer than 1 audit in a million";
    var n = 1 / p;
    var digits = n < 10 ? 1 : 2;
    var rounded = Number(n.toPrecision(digits));
    return "chance alone would give a gap this large in about 1 audit in " + rounded.toLocaleString("en");
  }

  // The per_100 filter's sentence (site_src/rendering/filters.py), for the reader's groups.
  function per100(gap, who, than, outcome) {
    var people = Math.abs(100 * gap);
    var count = people >= 0.95 ? people.toFixed(0) : people.toFixed(1);
    if (Number(count) === 0) return "per 100 " + who + " and per 100 " + than + ", the same number are " + outcome + ", to within a twentieth of a person";
    return "per 100 " + who + ", about " + count + " " + (gap > 0 ? "more" : "fewer") + " are " + outcome + " than per 100 " + than;
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function row(dl, term, value, note) {
    dl.appendChild(el("dt", {}, term));
    var dd = el("dd", {}, value);
    if (note) dd.appendChild(el("span", { class: "fc-calc-note" }, " " + note));
    dl.appendChild(dd);
  }

  function intOf(input) {
    var v = input.value.trim().replace(/[,_\s]/g, "");
    if (v === "") return null;
    var n = Number(v);
    return n;
  }

  function setupCalculator() {
    var root = document.querySelector("[data-fc-calc]");
    if (!root || root.dataset.fcReady || !window.FairCalc) return;
    root.dataset.fcReady = "true";
    var FC = window.FairCalc;
    var $ = function (id) { return root.querySelector("#" + id); };
    var fields = ["la", "na", "ka", "ra", "lb", "nb", "kb", "rb", "out"];
    var inputs = {};
    fields.forEach(function (f) { inputs[f] = $("fc-" + f); });
    var modeRadios = root.querySelectorAll("input[name='fc-mode']");
    var favRadios = root.querySelectorAll("input[name='fc-fav']");
    var groupsBox = $("fc-groups"), pBox = $("fc-pvalues");
    root.querySelectorAll("[data-fc-js-only]").forEach(function (n) { n.hidden = false; });

    function mode() { return root.querySelector("input[name='fc-mode']:checked").value; }
    function favourable() { return root.querySelector("input[name='fc-fav']:checked").value; }

    // ---- the URL holds the state
    function readUrl() {
      var q = new URLSearchParams(window.location.search);
      fields.forEach(function (f) { if (q.has(f)) inputs[f].value = q.get(f); });
      if (q.get("mode") === "rate") modeRadios.forEach(function (r) { r.checked = r.value === "rate"; });
      if (q.get("fav") === "positive") favRadios.forEach(function (r) { r.checked = r.value === "positive"; });
      if (q.has("groups")) groupsBox.value = q.get("groups").split(";").join("\n");
      if (q.has("p")) pBox.value = q.get("p").split(",").join(", ");
    }

    function writeUrl() {
      var q = new URLSearchParams();
      var rateMode = mode() === "rate";
      fields.forEach(function (f) {
        if ((f === "ka" || f === "kb") && rateMode) return;
        if ((f === "ra" || f === "rb") && !rateMode) return;
        if (inputs[f].value.trim() !== "") q.set(f, inputs[f].value.trim());
      });
      if (rateMode) q.set("mode", "rate");
      if (favourable() === "positive") q.set("fav", "positive");
      // The boxes' examples stay out of the address until the reader changes them.
      var g = groupsBox.value === groupsBox.defaultValue ? "" : groupsBox.value.trim();
      if (g) q.set("groups", g.split(/\n+/).map(function (s) { return s.trim(); }).filter(Boolean).join(";"));
      var p = pBox.value === pBox.defaultValue ? "" : pBox.value.trim();
      if (p) q.set("p", p.split(/[\s,;]+/).filter(Boolean).join(","));
      var url = window.location.pathname + "?" + q.toString().replace(/%2C/g, ",").replace(/%3B/g, ";") + window.location.hash;
      window.history.replaceState(window.history.state, "", url);
      var share = $("fc-share");
      if (share) share.href = url;
    }

    function showMode() {
      var rateMode = mode() === "rate";
      root.querySelectorAll("[data-fc-counts]").forEach(function (n) { n.hidden = rateMode; });
      root.querySelectorAll("[data-fc-rates]").forEach(function (n) { n.hidden = !rateMode; });
    }

    // ---- two groups
    function flagged(side) {
      var n = intOf(inputs["n" + side]);
      if (mode() !== "rate") return intOf(inputs["k" + side]);
      var r = intOf(inputs["r" + side]);
      if (n === null || r === null || !Number.isFinite(r) || r < 0 || r > 100) return r === null ? null : NaN;
      return Math.round(r / 100 * n);
    }

    var lastPower = null;

    function twoGroups() {
      var out = $("fc-two-out"), powerOut = $("fc-power-out");
      out.textContent = "";
      powerOut.textContent = "";
      var la = inputs.la.value.trim() || "group A", lb = inputs.lb.value.trim() || "group B";
      var what = inputs.out.value.trim() || "flagged";
      var nA = intOf(inputs.na), nB = intOf(inputs.nb), kA = flagged("a"), kB = flagged("b");
      if ([nA, nB, kA, kB].some(function (v) { return v === null; })) {
        out.appendChild(el("p", {}, "Enter the people and the " + (mode() === "rate" ? "rate" : "number") + " " + what + " in both groups."));
        return;
      }
      var r;
      try {
        r = FC.compare(kA, nA, kB, nB, { favourable: favourable() });
      } catch (err) {
        out.appendChild(el("p", { class: "fc-calc-error", role: "alert" }, err.message.replace(/^FairCalc: /, "")
          .replace(/`kA`/g, "flagged in " + la).replace(/`nA`/g, "people in " + la)
          .replace(/`kB`/g, "flagged in " + lb).replace(/`nB`/g, "people in " + lb)));
        return;
      }
      if (mode() === "rate") {
        out.appendChild(el("p", { class: "fc-calc-note" }, "Taken as " + kA.toLocaleString("en") + " of " + nA.toLocaleString("en") + " " + la +
          " and " + kB.toLocaleString("en") + " of " + nB.toLocaleString("en") + " " + lb + " " + what + "."));
      }
      if (Number.isNaN(r.gap)) {
        out.appendChild(el("p", { class: "fc-calc-error" }, "No gap to compute: " + r.reasons.gap + "."));
        return;
      }
      var reading = per100(r.gap, la, lb, what);
      reading = reading.charAt(0).toUpperCase() + reading.slice(1) + "; " + chanceText(r.log_p_value) + ".";
      out.appendChild(el("p", { class: "fc-calc-reading" }, reading));
      var dl = el("dl", { class: "fc-calc-results" });
      row(dl, "Gap (" + la + " minus " + lb + ")", pp(r.gap), "(" + pct(r.rate_a) + " against " + pct(r.rate_b) + " " + what + ")");
      row(dl, "95% interval", pp(r.ci_low).replace(" pp", "") + " to " + pp(r.ci_high), "(Newcombe's score interval)");
      row(dl, "Exact p-value", formatP(r.log_p_value), "(two-sided permutation test: how often random relabelling gives a gap at least this far from zero)");
      var favWord = favourable() === "negative" ? "not " + what : what;
      var ratioText = Number.isNaN(r.ratio) ? "undefined: " + r.reasons.ratio : fmt(r.ratio, 2);
      var ratioCi = Number.isNaN(r.ratio_low) ? "" : " (95% interval " + fmt(r.ratio_low, 2) + " to " + (Number.isFinite(r.ratio_high) ? fmt(r.ratio_high, 2) : "∞") + ")";
      row(dl, "Favourable-outcome ratio", ratioText + ratioCi, "(share " + favWord + " among " + la + " over the share among " + lb + "; below 0.8 fails the four-fifths rule)");
      out.appendChild(dl);
      if (r.small_sample_warning) {
        out.appendChild(el("p", { class: "fc-calc-warning" }, "Small group: " + (Math.min(nA, nB) === nA ? la : lb) + " has fewer than " + FC.SMALL_SAMPLE_THRESHOLD +
          " people. The exact p-value and the score interval stay valid, but the interval is wide and the test can miss large gaps."));
      }
      // Power: deferred so that the answers above show first; a click above POWER_AUTO_LIMIT people.
      var job = { kA: kA, nA: nA, kB: kB, nB: nB, la: la, lb: lb, what: what };
      lastPower = job;
      if (nA < 1 || nB < 1) return;
      if (nA + nB > POWER_AUTO_LIMIT) {
        var btn = el("button", { type: "button", class: "md-button" }, "Compute the power (a few seconds for " + (nA + nB).toLocaleString("en") + " people)");
        btn.addEventListener("click", function () { powerOut.textContent = "Computing…"; window.setTimeout(function () { power(job); }, 30); });
        powerOut.appendChild(btn);
        return;
      }
      powerOut.appendChild(el("p", {}, "Computing the power…"));
      window.setTimeout(function () { if (lastPower === job) power(job); }, 30);
    }

    function power(job) {
      var powerOut = $("fc-power-out");
      powerOut.textContent = "";
      var rA = job.kA / job.nA, rB = job.kB / job.nB, gap = rA - rB;
      var dl = el("dl", { class: "fc-calc-results" });
      var pw = FC.power(rA, rB, job.nA, job.nB);
      row(dl, "Power for the observed gap", pct(pw.power), "(the chance that an audit of these sizes finds p below 0.05 if the true gap is " + pp(gap) + ")");
      var direction = gap < 0 ? -1 : 1;
      var mdg = FC.detectableGap(job.nA, job.nB, rB, { direction: direction, xtol: 1e-6 });
      row(dl, "Minimum detectable gap (80% power)", Number.isNaN(mdg.gap) ? "none: " + mdg.reasons.gap : pp(mdg.gap),
        "(the smallest true gap in this direction that an audit of these sizes finds 4 times in 5, with " + job.lb + " " + job.what + " at " + pct(rB) + ")");
      if (gap !== 0) {
        var size = FC.auditSize(rA, rB, job.nA / (job.nA + job.nB));
        row(dl, "Audit size that would detect the observed gap", Number.isNaN(size.rows) ? "not computed: " + size.reasons.rows
          : "about " + size.rows.toLocaleString("en") + " people (" + size.n_a.toLocaleString("en") + " " + job.la + ", " + size.n_b.toLocaleString("en") + " " + job.lb + ")",
          Number.isNaN(size.power_exact) ? "" : "(80% power by the sample-size formula, in today's proportions; the exact test's power at that size is " + pct(size.power_exact) + ")");
      }
      powerOut.appendChild(dl);
    }

    // ---- more than two groups
    function parseGroups() {
      return groupsBox.value.split(/\n+/).map(function (s) { return s.trim(); }).filter(Boolean).map(function (line, i) {
        var parts = line.split(/\s*[,;\t]\s*/);
        if (parts.length !== 3) throw new Error("line " + (i + 1) + " (\"" + line + "\"): write name, people, flagged");
        var n = Number(parts[1].replace(/_/g, "")), k = Number(parts[2].replace(/_/g, ""));
        return { label: parts[0], people: n, flagged: k };
      });
    }

    function manyGroups() {
      var out = $("fc-groups-out");
      out.textContent = "";
      var counts;
      try {
        counts = parseGroups();
        if (counts.length < 2) { out.appendChild(el("p", {}, "Enter at least two groups, one a line.")); return; }
        var r = FC.groups(counts);
      } catch (err) {
        out.appendChild(el("p", { class: "fc-calc-error", role: "alert" }, err.message.replace(/^FairCalc: /, "")));
        return;
      }
      var t = el("table", { class: "fc-calc-table" });
      t.appendChild(el("caption", {}, "Each group's rate with its 95% Wilson interval"));
      var head = el("tr");
      ["Group", "People", "Rate", "95% interval"].forEach(function (h) { head.appendChild(el("th", { scope: "col" }, h)); });
      t.appendChild(el("thead")).appendChild(head);
      var body = t.appendChild(el("tbody"));
      r.groups.forEach(function (g) {
        var tr = el("tr");
        tr.appendChild(el("th", { scope: "row" }, g.label + (g.small_sample_warning ? " (fewer than " + FC.SMALL_SAMPLE_THRESHOLD + ")" : "")));
        tr.appendChild(el("td", {}, g.people.toLocaleString("en")));
        tr.appendChild(el("td", {}, Number.isNaN(g.rate) ? "n/a" : pct(g.rate)));
        tr.appendChild(el("td", {}, Number.isNaN(g.rate) ? g.reasons.rate : pct(g.ci_low) + " to " + pct(g.ci_high)));
        body.appendChild(tr);
      });
      out.appendChild(t);
      var om = r.omnibus;
      var omText = "Is any group treated differently? Pearson's chi-squared test of homogeneity";
      if (Number.isNaN(om.p_value)) omText += ": " + om.reason;
      else omText += " (" + (om.method === "exact" ? "exact, every table with these margins enumerated" : "chi-squared approximation, " + om.dof + " degrees of freedom") +
        "): X² = " + fmt(om.statistic, 2) + ", " + formatP(om.log_p_value) + ".";
      out.appendChild(el("p", { class: "fc-calc-omnibus" }, omText));
      var pt = el("table", { class: "fc-calc-table" });
      pt.appendChild(el("caption", {}, "Every pair: the exact test, and its p-value adjusted by Holm's method over the " + r.pairwise.length + " pairs"));
      var ph = el("tr");
      ["Pair", "Gap", "p", "Holm-adjusted p"].forEach(function (h) { ph.appendChild(el("th", { scope: "col" }, h)); });
      pt.appendChild(el("thead")).appendChild(ph);
      var pb = pt.appendChild(el("tbody"));
      r.pairwise.forEach(function (c) {
        var tr = el("tr");
        tr.appendChild(el("th", { scope: "row" }, c.group_a + " vs " + c.group_b));
        tr.appendChild(el("td", {}, pp(c.gap)));
        tr.appendChild(el("td", {}, formatP(c.log_p_value).replace("p = ", "")));
        tr.appendChild(el("td", {}, formatP(Math.log(c.p_value_adjusted)).replace("p = ", "")));
        pb.appendChild(tr);
      });
      out.appendChild(pt);
    }

    // ---- p-value adjustment
    function adjustBox() {
      var out = $("fc-pvalues-out");
      out.textContent = "";
      var raw = pBox.value.split(/[\s,;]+/).filter(Boolean);
      if (!raw.length) { out.appendChild(el("p", {}, "Paste p-values, separated by commas, spaces or new lines.")); return; }
      var ps = raw.map(Number), holm, bh;
      try {
        raw.forEach(function (s, i) { if (Number.isNaN(ps[i])) throw new Error("\"" + s + "\" is not a number"); });
        holm = FC.adjust(ps, "holm");
        bh = FC.adjust(ps, "bh");
      } catch (err) {
        out.appendChild(el("p", { class: "fc-calc-error", role: "alert" }, err.message.replace(/^FairCalc: /, "").replace(/`pValues\[(\d+)\]`/, function (m, i) { return "p-value " + (Number(i) + 1); })));
        return;
      }
      var t = el("table", { class: "fc-calc-table" });
      t.appendChild(el("caption", {}, ps.length + " p-values, adjusted for testing them together"));
      var head = el("tr");
      ["p", "Holm (family-wise error)", "Benjamini-Hochberg (false discovery rate)"].forEach(function (h) { head.appendChild(el("th", { scope: "col" }, h)); });
      t.appendChild(el("thead")).appendChild(head);
      var body = t.appendChild(el("tbody"));
      ps.forEach(function (p, i) {
        var tr = el("tr");
        tr.appendChild(el("td", {}, raw[i]));
        tr.appendChild(el("td", {}, Number(holm[i].toPrecision(3)).toString()));
        tr.appendChild(el("td", {}, Number(bh[i].toPrecision(3)).toString()));
        body.appendChild(tr);
      });
      out.appendChild(t);
    }

    function update() {
      showMode();
      twoGroups();
      manyGroups();
      adjustBox();
      writeUrl();
    }

    readUrl();
    showMode();
    // Only the section the reader is typing in is computed again.
    var sections = { two: twoGroups, groups: manyGroups, pvalues: adjustBox };
    function onEdit(ev) {
      var section = ev.target.closest("[data-fc-section]");
      showMode();
      if (section && sections[section.dataset.fcSection]) sections[section.dataset.fcSection]();
      writeUrl();
    }
    root.addEventListener("input", onEdit);
    root.addEventListener("change", onEdit);
    root.addEventListener("submit", function (ev) { ev.preventDefault(); update(); });
    update();
  }

  function setup() { setupCalculator(); }

  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(setup);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
