// The "Check a gap" page (check-a-gap/index.md, from site_src/templates/check-a-gap.md.j2): reads
// the reader's counts and margin, asks window.FairCalc (faircalc.js) and FairCalcEquivalence
// (faircalc-equivalence.js) for every number and writes the answers, in FairCalcText's words
// (faircalc-text.js), into live regions; the state lives in the page's URL, so a result can be
// shared. The verdicts and the power of the audit are computed off the page's thread
// (FairCalc.background), with progress and a Stop button: for a million people a power takes a
// minute. A field that does not hold what it asks for is marked (aria-invalid) and named in the
// message, in the reader's words.
// Started by assets/pages.js on the page as loaded and after each of Material's instant
// navigations; the calculator is set up once (fcHelpers.once: a copy of the page saved by the
// browser sets up again). Needs helpers.js, FairCalc and the modules it carries (faircalc.js to
// faircalc-equivalence.js) first, the order assets/pages.js loads them in.
(function () {
  "use strict";

  // Above this many people the power, and the power at the margin, wait for a click (they run in
  // the background, but keep a core busy for seconds to minutes).
  var POWER_AUTO_LIMIT = 200000;
  var ALPHA = 0.05;
  // The favourable-outcome ratio's bands: the four-fifths band read both ways, or the rule's line.
  var BANDS = { both: [0.8, 1.25], floor: [0.8, Infinity] };
  var el = window.fcHelpers.el, thousands = window.fcHelpers.thousands;

  function row(dl, term, value, note) {
    dl.appendChild(el("dt", {}, term));
    var dd = el("dd", {}, value);
    if (note) dd.appendChild(el("span", { class: "fc-calc-note" }, " " + note));
    dl.appendChild(dd);
  }

  function problem(out, text) {
    out.appendChild(el("p", { class: "fc-calc-error", role: "alert" }, text));
  }

  // ------------------------------------------------------------------ reading what the reader typed

  // A number as typed, without the separators people write in them ("1,000,000", "1 000 000").
  function clean(text) { return text.trim().replace(/[,_\s]/g, ""); }

  // What is wrong with `raw` (cleaned) as a count of people, in the reader's words; null if nothing.
  function countProblem(raw) {
    var v = Number(raw);
    if (raw === "" || Number.isNaN(v)) return "“" + raw + "” is not a number";
    if (!Number.isInteger(v)) return "must be a whole number of people; got " + raw;
    if (v < 0) return "cannot be negative; got " + raw;
    if (v > 1e9) return "must be at most 1,000,000,000; got " + raw;
    return null;
  }

  function marginProblem(raw) {
    var v = Number(raw);
    if (Number.isNaN(v)) return "“" + raw + "” is not a number";
    if (!(v > 0 && v < 100)) return "must be more than 0 and less than 100 percentage points; got " + raw;
    // As an audit.yaml's practical_margin: 0.05 is a proportion typed for points.
    if (v < 0.5) return "is in percentage points and must be at least 0.5; got " + raw + ": did you mean " + Number((100 * v).toPrecision(6)) + "?";
    return null;
  }

  function rateProblem(raw) {
    var v = Number(raw);
    if (raw === "" || Number.isNaN(v)) return "“" + raw + "” is not a number";
    if (v < 0 || v > 100) return "must be a percentage from 0 to 100; got " + raw;
    return null;
  }

  // Mark a field as holding what it asks for or not (aria-invalid), as its message says.
  function mark(input, bad) {
    if (bad) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  }

  // The value of a field (null when empty), or {problem} naming it in `words`; the field is marked.
  function readField(input, words, rule) {
    var raw = clean(input.value), typed = input.value.trim();
    // A comma separates thousands (1,000); one that cannot is a decimal comma, which would be read
    // as nothing ("8,5" as 85): refuse it rather than guess.
    var wrong = /,/.test(typed) && !/^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$/.test(typed)
      ? "“" + typed + "”: a comma separates thousands here (1,000); write a decimal with a point (8.5)"
      : raw === "" ? null : rule(raw);
    mark(input, wrong);
    if (wrong) return { problem: words + " " + wrong };
    return { value: raw === "" ? null : Number(raw) };
  }

  // ------------------------------------------------------------------ the calculator

  function setupCalculator() {
    var root = document.querySelector("[data-fc-calc]");
    if (!root || !window.FairCalc || !window.FairCalcText || !window.FairCalcEquivalence || !window.fcHelpers.once(root)) return;
    var calc = { root: root, FC: window.FairCalc, T: window.FairCalcText, EQ: window.FairCalcEquivalence, inputs: {}, runs: {} };
    calc.$ = function (id) { return root.querySelector("#" + id); };
    calc.fields = ["la", "na", "ka", "ra", "lb", "nb", "kb", "rb", "out", "margin"];
    calc.fields.forEach(function (f) { calc.inputs[f] = calc.$("fc-" + f); });
    calc.groupsBox = calc.$("fc-groups");
    calc.pBox = calc.$("fc-pvalues");
    root.querySelectorAll("[data-fc-js-only]").forEach(function (n) { n.hidden = false; });
    readUrl(calc);
    // Only the section the reader is typing in is computed again (of two groups, only the
    // verdicts when the margin changes), and only when what it reads changed: a field's "change"
    // follows its "input" events.
    var sections = { two: twoGroups, groups: manyGroups, pvalues: adjustBox };
    function onEdit(ev) {
      var section = ev.target.closest("[data-fc-section]"), before = calc.address;
      showMode(calc);
      writeUrl(calc);
      if (calc.address === before) return;
      if (ev.target.closest("[data-fc-margin]")) verdicts(calc);
      else if (section && sections[section.dataset.fcSection]) sections[section.dataset.fcSection](calc);
    }
    root.addEventListener("input", onEdit);
    root.addEventListener("change", onEdit);
    root.addEventListener("submit", function (ev) { ev.preventDefault(); update(calc); });
    update(calc);
  }

  function update(calc) {
    showMode(calc);
    twoGroups(calc);
    manyGroups(calc);
    adjustBox(calc);
    writeUrl(calc);
  }

  function mode(calc) { return calc.root.querySelector("input[name='fc-mode']:checked").value; }
  function favourable(calc) { return calc.root.querySelector("input[name='fc-fav']:checked").value; }
  function band(calc) { return calc.root.querySelector("input[name='fc-band']:checked").value; }

  function showMode(calc) {
    var rateMode = mode(calc) === "rate";
    calc.root.querySelectorAll("[data-fc-counts]").forEach(function (n) { n.hidden = rateMode; });
    calc.root.querySelectorAll("[data-fc-rates]").forEach(function (n) { n.hidden = !rateMode; });
  }

  // ---- the URL holds the state

  function readUrl(calc) {
    var q = new URLSearchParams(window.location.search);
    calc.fields.forEach(function (f) { if (q.has(f)) calc.inputs[f].value = q.get(f); });
    if (q.get("mode") === "rate") calc.root.querySelectorAll("input[name='fc-mode']").forEach(function (r) { r.checked = r.value === "rate"; });
    if (q.get("fav") === "positive") calc.root.querySelectorAll("input[name='fc-fav']").forEach(function (r) { r.checked = r.value === "positive"; });
    if (q.get("band") === "floor") calc.root.querySelectorAll("input[name='fc-band']").forEach(function (r) { r.checked = r.value === "floor"; });
    if (q.has("groups")) calc.groupsBox.value = q.get("groups").split(";").join("\n");
    if (q.has("p")) calc.pBox.value = q.get("p").split(",").join(", ");
  }

  function writeUrl(calc) {
    var q = new URLSearchParams();
    var rateMode = mode(calc) === "rate";
    calc.fields.forEach(function (f) {
      if ((f === "ka" || f === "kb") && rateMode) return;
      if ((f === "ra" || f === "rb") && !rateMode) return;
      if (calc.inputs[f].value.trim() !== "") q.set(f, calc.inputs[f].value.trim());
    });
    if (rateMode) q.set("mode", "rate");
    if (favourable(calc) === "positive") q.set("fav", "positive");
    if (band(calc) === "floor") q.set("band", "floor");
    // The boxes' examples stay out of the address until the reader changes them.
    var g = calc.groupsBox.value === calc.groupsBox.defaultValue ? "" : calc.groupsBox.value.trim();
    if (g) q.set("groups", g.split(/\n+/).map(function (s) { return s.trim(); }).filter(Boolean).join(";"));
    var p = calc.pBox.value === calc.pBox.defaultValue ? "" : calc.pBox.value.trim();
    if (p) q.set("p", p.split(/[\s,;]+/).filter(Boolean).join(","));
    var url = window.location.pathname + "?" + q.toString().replace(/%2C/g, ",").replace(/%3B/g, ";") + window.location.hash;
    window.history.replaceState(window.history.state, "", url);
    calc.address = url;
    var share = calc.$("fc-share");
    if (share) share.href = url;
  }

  // ---- two groups

  // The two groups as typed: {la, lb, what, nA, kA, nB, kB} (a count null where its field is
  // empty), or {problems} naming each field that does not hold what it asks for.
  function readTwo(calc) {
    var inputs = calc.inputs, rateMode = mode(calc) === "rate";
    var g = { la: inputs.la.value.trim() || "group A", lb: inputs.lb.value.trim() || "group B",
      what: inputs.out.value.trim() || "flagged" };
    var problems = [];
    function take(key, words, rule) {
      var got = readField(inputs[key], words, rule);
      if (got.problem) problems.push(got.problem);
      return got.value === undefined ? NaN : got.value;
    }
    ["a", "b"].forEach(function (side) {
      var name = g["l" + side];
      var n = take("n" + side, "People in " + name + ":", countProblem);
      var k;
      if (rateMode) {
        mark(inputs["k" + side], false);
        var r = take("r" + side, "Rate " + g.what + " in " + name + ":", rateProblem);
        k = r === null || n === null || Number.isNaN(n) || Number.isNaN(r) ? (r === null ? null : NaN) : Math.round(r / 100 * n);
      } else {
        mark(inputs["r" + side], false);
        k = take("k" + side, g.what.charAt(0).toUpperCase() + g.what.slice(1) + " in " + name + ":", countProblem);
        if (k !== null && n !== null && k > n) {
          mark(inputs["k" + side], true);
          problems.push(g.what.charAt(0).toUpperCase() + g.what.slice(1) + " in " + name + " (" + thousands(k) +
            ") cannot be more than the people in " + name + " (" + thousands(n) + ")");
        }
      }
      g["n" + side.toUpperCase()] = n;
      g["k" + side.toUpperCase()] = k;
    });
    return problems.length ? { problems: problems } : g;
  }

  function twoGroups(calc) {
    var out = calc.$("fc-two-out");
    stopRuns(calc);
    calc.job = null;
    out.textContent = "";
    ["fc-verdict-out", "fc-power-out"].forEach(function (id) {
      calc.$(id).textContent = "";
      calc.$(id).removeAttribute("aria-busy");  // set again when a computation starts
    });
    var g = readTwo(calc);
    if (g.problems) {
      g.problems.forEach(function (text) { problem(out, text + "."); });
      return;
    }
    if ([g.nA, g.nB, g.kA, g.kB].some(function (v) { return v === null; })) {
      out.appendChild(el("p", {}, "Enter the people and the " + (mode(calc) === "rate" ? "rate" : "number") + " " + g.what + " in both groups."));
      return;
    }
    var r = calc.FC.compare(g.kA, g.nA, g.kB, g.nB, { favourable: favourable(calc) });
    if (mode(calc) === "rate") {
      out.appendChild(el("p", { class: "fc-calc-note" }, "Taken as " + thousands(g.kA) + " of " + thousands(g.nA) + " " + g.la +
        " and " + thousands(g.kB) + " of " + thousands(g.nB) + " " + g.lb + " " + g.what + "."));
    }
    if (Number.isNaN(r.gap)) {
      out.appendChild(el("p", { class: "fc-calc-error" }, "No gap to compute: " + r.reasons.gap + "."));
      return;
    }
    showComparison(calc, out, g, r);
    calc.job = { kA: g.kA, nA: g.nA, kB: g.kB, nB: g.nB, la: g.la, lb: g.lb, what: g.what, fav: favourable(calc) };
    verdicts(calc);
    if (g.nA + g.nB > POWER_AUTO_LIMIT) offerPower(calc, calc.job);
    else startPower(calc, calc.job);
  }

  // The per_100 filter's sentence (site_src/filters.py), for the reader's groups.
  function per100(gap, who, than, outcome) {
    var people = Math.abs(100 * gap);
    var count = people >= 0.95 ? people.toFixed(0) : people.toFixed(1);
    if (Number(count) === 0) return "per 100 " + who + " and per 100 " + than + ", the same number are " + outcome + ", to within a twentieth of a person";
    return "per 100 " + who + ", about " + count + " " + (gap > 0 ? "more" : "fewer") + " are " + outcome + " than per 100 " + than;
  }

  // "about 1 audit in 4": how often chance alone gives a gap at least this large.
  function chanceText(logP) {
    var p = Math.exp(logP);
    if (p >= 0.95) return "chance alone would give a gap at least this large in almost every audit";
    if (p >= 0.5) return "chance alone would give a gap at least this large in about " + Math.round(10 * p) + " audits in 10";
    if (logP < Math.log(1e-6)) return "chance alone would give a gap this large in fewer than 1 audit in a million";
    var n = 1 / p;
    var rounded = Number(n.toPrecision(n < 10 ? 1 : 2));
    return "chance alone would give a gap this large in about 1 audit in " + thousands(rounded);
  }

  function showComparison(calc, out, g, r) {
    var fmt = calc.T, fav = favourable(calc);
    var reading = per100(r.gap, g.la, g.lb, g.what);
    reading = reading.charAt(0).toUpperCase() + reading.slice(1) + "; " + chanceText(r.log_p_value) + ".";
    out.appendChild(el("p", { class: "fc-calc-reading" }, reading));
    // One number of decimals for the gap, its interval and the rates: enough that each keeps its
    // sign and that whether 0 is inside the interval shows (at a million people, hundredths).
    var d = fmt.ppDecimals([r.gap, r.ci_low, r.ci_high]);
    var dl = el("dl", { class: "fc-calc-results" });
    row(dl, "Gap (" + g.la + " minus " + g.lb + ")", fmt.pp(r.gap, d), "(" + fmt.pct(r.rate_a, d) + " against " + fmt.pct(r.rate_b, d) + " " + g.what + ")");
    row(dl, "95% interval", fmt.pp(r.ci_low, d).replace(" pp", "") + " to " + fmt.pp(r.ci_high, d), "(Newcombe's score interval)");
    row(dl, "Exact p-value", fmt.pValue(r.p_value, r.log_p_value), "(two-sided permutation test: how often random relabelling gives a gap at least this far from zero)");
    var favWord = fav === "negative" ? "not " + g.what : g.what;
    var ratioText = Number.isNaN(r.ratio) ? "undefined: " + r.reasons.ratio : fmt.fixed(r.ratio, 2);
    var ratioCi = Number.isNaN(r.ratio_low) ? "" : " (95% interval " + fmt.fixed(r.ratio_low, 2) + " to " + (Number.isFinite(r.ratio_high) ? fmt.fixed(r.ratio_high, 2) : "∞") + ")";
    row(dl, "Favourable-outcome ratio", ratioText + ratioCi, "(share " + favWord + " among " + g.la + " over the share among " + g.lb + "; below 0.8 fails the four-fifths rule)");
    out.appendChild(dl);
    var excludesZero = r.ci_low > 0 || r.ci_high < 0, belowAlpha = r.log_p_value < Math.log(ALPHA);
    if (excludesZero !== belowAlpha) {
      out.appendChild(el("p", { class: "fc-calc-note fc-calc-disagree" }, (excludesZero ? "The interval leaves out 0, but p is above 0.05" :
        "p is below 0.05, but the interval holds 0") + ": they come from two methods (the interval is a score interval, the p-value an exact test), " +
        "and near the 5% line they can disagree. For whether there is a gap, read the exact test."));
    }
    if (r.small_sample_warning) {
      out.appendChild(el("p", { class: "fc-calc-warning" }, "Small group: " + (Math.min(g.nA, g.nB) === g.nA ? g.la : g.lb) + " has fewer than " + calc.FC.SMALL_SAMPLE_THRESHOLD +
        " people. The exact p-value and the score interval stay valid, but the interval is wide and the test can miss large gaps."));
    }
  }

  // ---- in the background, with progress and a Stop button

  function stopRuns(calc, slot) {
    Object.keys(calc.runs).forEach(function (s) {
      if (slot !== undefined && s !== slot) return;
      if (calc.runs[s]) calc.runs[s].cancel();
      calc.runs[s] = null;
    });
  }

  // A button that starts a computation too long to start unasked, and what it costs.
  function offer(region, words, start) {
    var btn = el("button", { type: "button", class: "md-button" }, words);
    btn.addEventListener("click", start);
    var note = el("p", { class: "fc-calc-note" }, "For this many people an exact power takes from seconds to minutes, depending on the " +
      "device. It runs in the background, so the page stays usable, shows its progress and can be stopped.");
    region.append(btn, note);
    return [btn, note];
  }

  // Each of `steps` ({what, method, args, show(value)}) computed in turn by FairCalc.background
  // and shown as it arrives, in `region` (aria-busy meanwhile), under a line that says what is
  // being computed, how far it has gone, and a Stop button. A new run in the same `slot` (or
  // stopRuns) cancels it; `then()` follows a run that ended well, `again()` starts it anew.
  function runSteps(calc, slot, region, steps, again, then) {
    stopRuns(calc, slot);
    region.setAttribute("aria-busy", "true");
    var status = el("p", { class: "fc-calc-progress" });
    var label = el("span", {}), step = el("span", { class: "fc-calc-note", "aria-hidden": "true" });
    var bar = el("progress", { max: "1", value: "0", "aria-label": "Progress of the computation under way" });
    var stop = el("button", { type: "button", class: "md-button fc-calc-stop" }, "Stop");
    [label, " ", bar, " ", step, " ", stop].forEach(function (n) { status.append(n); });
    region.append(status);
    var me = { call: null };
    me.cancel = function () { if (me.call) me.call.cancel(); };
    calc.runs[slot] = me;
    function next(i) {
      if (i === steps.length) return finish(null);
      var s = steps[i];
      label.textContent = "Computing " + s.what + "…";
      bar.value = 0;
      step.textContent = "";
      me.call = calc.FC.background(s.method, s.args, function (progress) {
        bar.value = progress.fraction;
        if (progress.evaluations > 1) step.textContent = "(exact power " + progress.evaluations + ")";
      });
      me.call.result.then(function (value) {
        if (calc.runs[slot] !== me) return;
        s.show(value);
        next(i + 1);
      }, function (err) {
        if (calc.runs[slot] === me) finish(err);  // not when a new computation took its place
      });
    }
    function finish(err) {
      if (calc.runs[slot] === me) calc.runs[slot] = null;
      region.setAttribute("aria-busy", "false");
      status.remove();
      if (!err) return then && then();
      var restart = el("button", { type: "button", class: "md-button" }, "Compute again");
      restart.addEventListener("click", again);
      var p = el("p", { class: "fc-calc-note" }, err.name === "AbortError" ? "Stopped: what is not shown above was not computed. " : "Not computed: " + err.message + " ");
      p.appendChild(restart);
      region.appendChild(p);
    }
    stop.addEventListener("click", function () { me.cancel(); });
    next(0);
  }

  // ---- is there a gap that matters? (the three-state verdicts, off the page's thread)

  // The margin as typed, as a difference of rates ({margin: [-m, m]}), or {problem} in the
  // reader's words ({empty} when there is none); the field is marked.
  function readMargin(calc) {
    var got = readField(calc.inputs.margin, "Margin:", marginProblem);
    if (got.problem) return { problem: got.problem + (/[?.]$/.test(got.problem) ? "" : ".") };
    if (got.value === null) return { empty: "Enter the margin: the smallest gap, in percentage points, that would matter to you." };
    return { margin: [-got.value / 100, got.value / 100] };
  }

  // The verdicts on the gap (at the margin) and on the favourable-outcome ratio (against the
  // four-fifths band), computed again when the counts, the margin or the band change. Above
  // POWER_AUTO_LIMIT people an exact power at the margin waits for a click (the z-test's does not).
  function verdicts(calc) {
    var region = calc.$("fc-verdict-out"), job = calc.job;
    stopRuns(calc, "verdict");
    region.textContent = "";
    region.removeAttribute("aria-busy");
    var m = readMargin(calc);
    if (m.problem || m.empty) return m.problem ? problem(region, m.problem) : region.appendChild(el("p", {}, m.empty));
    if (!job) return;
    var boxes = [el("div", { class: "fc-verdict" }), el("div", { class: "fc-verdict" })];
    region.append(boxes[0], boxes[1]);
    // The power at the margin is the z-test's above faircode's EXACT_POWER_SIZE: instant, so only
    // an exact power over many people waits for a click.
    var names = [job.la, job.lb], power = job.nA + job.nB <= POWER_AUTO_LIMIT || calc.EQ.powerMethod(job.nA, job.nB) === "normal";
    var fA = job.fav === "negative" ? job.nA - job.kA : job.kA, fB = job.fav === "negative" ? job.nB - job.kB : job.kB;
    var steps = [
      ["the verdict on the gap", [job.kA, job.nA, job.kB, job.nB, { margin: m.margin, names: names, outcome: job.what }]],
      ["the verdict on the favourable-outcome ratio", [fA, job.nA, fB, job.nB,
        { margin: BANDS[band(calc)], compare: "ratio", names: names, outcome: job.fav === "negative" ? "not " + job.what : job.what }]],
    ];
    function run(withPower) {
      region.querySelectorAll(".fc-verdict-offer").forEach(function (n) { n.remove(); });
      runSteps(calc, "verdict", region, steps.map(function (s, i) {
        var args = s[1].slice(0, 4).concat([Object.assign({ power: withPower }, s[1][4])]);
        return { what: s[0], method: "FairCalcEquivalence.verdict", args: args, show: function (v) { showVerdict(calc, boxes[i], v, job, withPower); } };
      }), function () { run(withPower); }, withPower ? null : function () {
        offer(region, "Compute the power at the margin for " + thousands(job.nA + job.nB) + " people", function () { run(true); })
          .forEach(function (n) { n.classList.add("fc-verdict-offer"); });
      });
    }
    run(power);
  }

  var METHODS = {
    exact: "two one-sided exact unconditional tests, Chan 1998: at the margin they reject at most 5% of the time",
    score: "two one-sided score tests, Miettinen and Nurminen 1985, with the normal approximation: too many possible tables to enumerate at these sizes",
  };

  // One verdict: its state with the margin named, its sentence (the library's words), then the
  // equivalence test and the power at the margin.
  function showVerdict(calc, box, v, job, withPower) {
    var T = calc.T, eq = v.equivalence, ratio = v.compare === "ratio", margin = [v.margin_low, v.margin_high];
    box.textContent = "";
    box.className = "fc-verdict fc-verdict-" + v.verdict.replace(/_/g, "-");
    var head = el("p", { class: "fc-verdict-state" });
    head.append((ratio ? "The favourable-outcome ratio (" + job.la + " over " + job.lb + ")" : "The gap (" + job.la + " minus " + job.lb + ")") +
      ", judged against " + calc.EQ.marginName(v.compare, margin) + ": ", el("strong", {}, v.label));
    box.append(head, el("p", { class: "fc-verdict-sentence" }, v.sentence));
    var dl = el("dl", { class: "fc-calc-results" }), level = T.pct(eq.confidence_level, 0);
    var limits = [eq.ci_low, eq.ci_high], d = T.ppDecimals(limits);
    var interval = Number.isNaN(eq.ci_low) ? "" : ", its " + level + " interval " + (ratio
      ? T.ratio(eq.ci_low, margin.concat([1])) + " to " + T.ratio(eq.ci_high, margin.concat([1]))
      : T.pp(eq.ci_low, d).replace(" pp", "") + " to " + T.pp(eq.ci_high, d));
    row(dl, "Equivalence test", T.pValue(eq.p_value) + interval, "(" + METHODS[eq.method] + ")");
    var rateB = v.count_b / v.n_b, word = ratio ? v.outcome : job.what;
    var power = Number.isNaN(v.power_at_margin)
      ? (!withPower ? "not computed yet: use the button below" : "none: with " + job.lb + " " + word + " at " + T.pct(rateB) + ", no rate of " + job.la + " lies at the margin")
      : T.pct(v.power_at_margin, 0);
    row(dl, "Power at the margin", power, "(the chance that an audit of these sizes finds p below 0.05 when the true " + (ratio ? "ratio" : "gap") +
      " is at the margin, on the side where that chance is smaller, with " + job.lb + " " + word + " at " + T.pct(rateB) + ")");
    box.appendChild(dl);
  }

  // ---- was the audit big enough? (off the page's thread)

  function offerPower(calc, job) {
    offer(calc.$("fc-power-out"), "Compute the power for " + thousands(job.nA + job.nB) + " people", function () { startPower(calc, job); });
  }

  // The three answers, each computed in turn by FairCalc.background and shown as it arrives.
  function powerSteps(calc, job, dl) {
    var T = calc.T;
    var rA = job.kA / job.nA, rB = job.kB / job.nB, gap = rA - rB, direction = gap < 0 ? -1 : 1;
    var steps = [{
      what: "the power", method: "power", args: [rA, rB, job.nA, job.nB],
      show: function (pw) {
        row(dl, "Power for the observed gap", T.pct(pw.power), "(the chance that an audit of these sizes finds p below 0.05 if the true gap is " + T.pp(gap, T.ppDecimals([gap])) + ")");
      },
    }, {
      what: "the minimum detectable gap", method: "detectableGap", args: [job.nA, job.nB, rB, { direction: direction, xtol: 1e-6 }],
      show: function (mdg) {
        row(dl, "Minimum detectable gap (80% power)", Number.isNaN(mdg.gap) ? "none: " + mdg.reasons.gap : T.pp(mdg.gap, T.ppDecimals([mdg.gap])),
          "(the smallest true gap in this direction that an audit of these sizes finds 4 times in 5, with " + job.lb + " " + job.what + " at " + T.pct(rB) + ")");
      },
    }];
    if (gap !== 0) {
      steps.push({ what: "the audit size", method: "auditSize", args: [rA, rB, job.nA / (job.nA + job.nB)], show: function (size) { showSize(T, dl, job, size); } });
    }
    return steps;
  }

  function showSize(T, dl, job, size) {
    var how = size.method === "exact"
      ? "(with rates of 0% and 100% every audit splits the same way and the sample-size formula has no answer: the smallest audit, in today's proportions, whose exact test finds this gap)"
      : "(80% power by the sample-size formula, in today's proportions; the exact test's power at that size is " + T.pct(size.power_exact) + ")";
    row(dl, "Audit size that would detect the observed gap", Number.isNaN(size.rows) ? "not computed: " + size.reasons.rows
      : "about " + thousands(size.rows) + " people (" + thousands(size.n_a) + " " + job.la + ", " + thousands(size.n_b) + " " + job.lb + ")",
    Number.isNaN(size.rows) ? "" : how);
  }

  function startPower(calc, job) {
    var powerOut = calc.$("fc-power-out"), dl = el("dl", { class: "fc-calc-results" });
    stopRuns(calc, "power");
    powerOut.textContent = "";
    powerOut.appendChild(dl);
    runSteps(calc, "power", powerOut, powerSteps(calc, job, dl), function () { startPower(calc, job); });
  }

  // ---- more than two groups

  // The box's groups, one a line ("name, people, flagged"), or {problems} naming each line (as
  // the reader counts them, blank lines included) that is not a group.
  function parseGroups(text) {
    var counts = [], problems = [], seen = {};
    text.split("\n").forEach(function (raw, i) {
      var line = raw.trim(), at = "Line " + (i + 1);
      if (!line) return;
      var parts = line.split(/\s*[,;\t]\s*/);
      if (parts.length !== 3) { problems.push(at + " (“" + line + "”): write a name, the people and the number flagged, separated by commas"); return; }
      var name = parts[0], n = clean(parts[1]), k = clean(parts[2]);
      var wrong = !name ? "the group has no name" : countProblem(n) ? "people " + countProblem(n) : countProblem(k) ? "flagged " + countProblem(k)
        : Number(k) > Number(n) ? "flagged (" + k + ") cannot be more than the people (" + n + ")"
          : Object.prototype.hasOwnProperty.call(seen, name) ? "“" + name + "” is already the group on line " + seen[name] + ": name each group once" : null;
      if (wrong) { problems.push(at + ": " + wrong); return; }
      seen[name] = i + 1;
      counts.push({ label: name, people: Number(n), flagged: Number(k) });
    });
    return problems.length ? { problems: problems } : { counts: counts };
  }

  function manyGroups(calc) {
    var out = calc.$("fc-groups-out"), fmt = calc.T;
    out.textContent = "";
    var parsed = parseGroups(calc.groupsBox.value);
    mark(calc.groupsBox, parsed.problems);
    if (parsed.problems) { parsed.problems.forEach(function (text) { problem(out, text + "."); }); return; }
    if (parsed.counts.length < 2) { out.appendChild(el("p", {}, "Enter at least two groups, one a line.")); return; }
    var r = calc.FC.groups(parsed.counts);
    out.appendChild(table("Each group's rate with its 95% Wilson interval", ["Group", "People", "Rate", "95% interval"], r.groups.map(function (g) {
      return [g.label + (g.small_sample_warning ? " (fewer than " + calc.FC.SMALL_SAMPLE_THRESHOLD + ")" : ""), thousands(g.people),
        Number.isNaN(g.rate) ? "n/a" : fmt.pct(g.rate), Number.isNaN(g.rate) ? g.reasons.rate : fmt.pct(g.ci_low) + " to " + fmt.pct(g.ci_high)];
    })));
    var om = r.omnibus;
    var omText = "Is any group treated differently? Pearson's chi-squared test of homogeneity";
    if (Number.isNaN(om.p_value)) omText += ": " + om.reason;
    else omText += " (" + (om.method === "exact" ? "exact, every table with these margins enumerated" : "chi-squared approximation, " + om.dof + " degrees of freedom") +
      "): X² = " + fmt.fixed(om.statistic, 2) + ", " + fmt.pValue(om.p_value, om.log_p_value) + ".";
    out.appendChild(el("p", { class: "fc-calc-omnibus" }, omText));
    var pairs = r.pairwise.length;
    out.appendChild(table(pairs === 1 ? "The pair: the exact test (with one pair, Holm's method leaves its p-value as it is)"
      : "Every pair: the exact test, and its p-value adjusted by Holm's method over the " + fmt.plural(pairs, "pair"),
    ["Pair", "Gap", "p", "Holm-adjusted p"], r.pairwise.map(function (c) {
      return [c.group_a + " vs " + c.group_b, fmt.pp(c.gap, fmt.ppDecimals([c.gap])), fmt.pValue(c.p_value, c.log_p_value).replace("p = ", ""),
        fmt.pValue(c.p_value_adjusted).replace("p = ", "")];
    })));
  }

  // A table: a caption, column headings, and rows whose first cell heads the row.
  function table(caption, headings, rows) {
    var t = el("table", { class: "fc-calc-table" });
    t.appendChild(el("caption", {}, caption));
    var head = el("tr");
    headings.forEach(function (h) { head.appendChild(el("th", { scope: "col" }, h)); });
    t.appendChild(el("thead")).appendChild(head);
    var body = t.appendChild(el("tbody"));
    rows.forEach(function (cells) {
      var tr = el("tr");
      cells.forEach(function (c, i) { tr.appendChild(i === 0 ? el("th", { scope: "row" }, c) : el("td", {}, c)); });
      body.appendChild(tr);
    });
    return t;
  }

  // ---- p-value adjustment

  function adjustBox(calc) {
    var out = calc.$("fc-pvalues-out"), fmt = calc.T;
    out.textContent = "";
    var raw = calc.pBox.value.split(/[\s,;]+/).filter(Boolean);
    var wrong = raw.map(function (s, i) {
      var v = Number(s);
      return Number.isNaN(v) ? "p-value " + (i + 1) + " (“" + s + "”) is not a number" : v < 0 || v > 1 ? "p-value " + (i + 1) + " (" + s + ") must lie between 0 and 1" : null;
    }).filter(Boolean);
    mark(calc.pBox, wrong.length);
    if (wrong.length) { wrong.forEach(function (text) { problem(out, text + "."); }); return; }
    if (!raw.length) { out.appendChild(el("p", {}, "Paste p-values, separated by commas, spaces or new lines.")); return; }
    var ps = raw.map(Number);
    var holm = calc.FC.adjust(ps, "holm"), bh = calc.FC.adjust(ps, "bh");
    out.appendChild(table(fmt.plural(ps.length, "p-value") + ", adjusted for testing them together", ["p", "Holm (family-wise error)", "Benjamini-Hochberg (false discovery rate)"],
      ps.map(function (p, i) { return [raw[i], Number(holm[i].toPrecision(3)).toString(), Number(bh[i].toPrecision(3)).toString()]; })));
  }

  (window.fcOnEveryPage || function (f) { f(); })(setupCalculator);
})();
