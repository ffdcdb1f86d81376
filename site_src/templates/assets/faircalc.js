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
//                                               the workers too
//
// This file is FairCalc itself and its plumbing (carry, background, and the worker's side,
// serve); it loads first, with nothing before it. The methods are modules of their own, split by
// method as faircode/significance/ is, each carried (FairCalc.carry) in this order, the order
// assets/pages.js loads them in:
//
//   faircalc-core.js         FairCalcCore: input checks, special functions, what every method shares
//   faircalc-exact.js        FairCalcExact: the exact test, the score intervals, compare
//   faircalc-power.js        FairCalcPower: exact power, the minimum detectable gap, the audit size
//   faircalc-groups.js       FairCalcGroups: adjusted p-values, k groups, the homogeneity test
//   faircalc-text.js         FairCalcText: how the pages write numbers
//   faircalc-equivalence.js  FairCalcEquivalence: the equivalence test and the three-state verdict
//
// Conventions: group A is the group the question is about (the disadvantaged group), B the
// comparison; a gap is A minus B, a rate in [0, 1]. Valid input never throws: a quantity that is
// undefined (a group with no one in it) is NaN and `reasons[field]` says why (`reason` joins
// them). Invalid input (negative counts, flagged above people, non-integers) throws a TypeError
// or RangeError naming the argument.
//
// The whole file is one function, `faircalc`, called at once on the page; a worker is built from
// its own source and the carried modules' (Function.prototype.toString), so the worker needs no
// second file and no fetch, and works from a copy of the site opened from disk (file://), where
// a browser refuses `new Worker("file://...")` and `fetch`.
(function faircalc(root, inWorker) {
  "use strict";

  // Where each of FairCalc's own names lives. FairCalc is whole (and frozen) from the start and
  // looks each name up as it is used, so FairCalc.compare is FairCalcExact.compare once
  // faircalc-exact.js has been carried, here and in a worker alike.
  var HOMES = {
    SMALL_SAMPLE_THRESHOLD: "FairCalcCore",
    compare: "FairCalcExact",
    power: "FairCalcPower",
    detectableGap: "FairCalcPower",
    auditSize: "FairCalcPower",
    adjust: "FairCalcGroups",
    groups: "FairCalcGroups",
    // For the page, the tests and faircalc-equivalence.js: the normal quantile and distribution
    // function, and the log binomial probability.
    ndtri: "FairCalcCore",
    ndtr: "FairCalcCore",
    logDbinom: "FairCalcCore",
  };
  // The methods `background` runs: those whose work grows with the people (an exact power is
  // O(people) work for each of O(sqrt(people)) totals; 101 s for 10^6 against 10^6 on a laptop),
  // and every function of a carried module ("FairCalcEquivalence.verdict").
  var BACKGROUND = ["compare", "power", "detectableGap", "auditSize", "groups"];
  var carried = []; // [name, module] of each carried module, in the order carried
  var workerUrl = null;
  // In a worker, told when each exact power starts and how far it has gone (serve sets it); null
  // on the page, where the same functions run without it.
  var tracker = null;

  function fail(Kind, message) {
    throw new Kind("FairCalc: " + message);
  }

  // What every carried module is lent, as module(root, plumbing): how it refuses bad input, and
  // how a long computation says how far it has gone (silent on the page; in a worker, a message
  // to the page, which `background` hands to its onProgress).
  var plumbing = Object.freeze({
    fail: fail,
    progress: Object.freeze({
      start: function () { if (tracker !== null) tracker.start(); },
      at: function (fraction) { if (tracker !== null) tracker.at(fraction); },
    }),
  });

  /**
   * A module that extends FairCalc (faircalc-core.js and the modules after it): `module(root,
   * plumbing)` returns its functions, set (frozen) as root[name] here and in every worker
   * `background` starts, which runs the module's own source after this script's: so its
   * functions run off the page's thread too, still with no second request. Returns root[name].
   */
  function carry(name, module) {
    if (typeof name !== "string" || !/^[A-Za-z]\w*$/.test(name)) fail(TypeError, "`name` must be a JavaScript name; got " + String(name));
    if (typeof module !== "function") fail(TypeError, "`module` must be a function (root) => {functions}");
    carried = carried.filter(function (c) { return c[0] !== name; }).concat([[name, module]]);
    workerUrl = null; // the next worker carries it too
    root[name] = Object.freeze(module(root, plumbing));
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

  // A worker running this script's source, then each carried module's, in the order carried
  // (made once, until another module is carried); throws where the browser refuses one.
  function newWorker() {
    if (workerUrl === null) {
      var source = ["(" + faircalc + ")(self, true);"].concat(carried.map(function (c) {
        return "self.FairCalc.carry(" + JSON.stringify(c[0]) + ", " + c[1] + ");";
      }));
      workerUrl = URL.createObjectURL(new Blob([source.join("\n")], { type: "text/javascript" }));
    }
    return new Worker(workerUrl);
  }

  // The worker's answer as the page's: its result, or its error as the same kind of error.
  function settleFrom(message, resolve, reject) {
    if (!message.error) return resolve(message.result);
    var e = message.error;
    reject(e.name === "RangeError" ? new RangeError(e.message) : e.name === "TypeError" ? new TypeError(e.message) : new Error(e.message));
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
        worker = newWorker();
      } catch (err) {
        return onThePage();
      }
      worker.onmessage = function (ev) {
        if (ev.data.progress) { if (onProgress && !done) onProgress(ev.data.progress); return; }
        finish();
        settleFrom(ev.data, resolve, reject);
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

  var FairCalc = { version: 1, background: background, carry: carry };
  Object.keys(HOMES).forEach(function (name) {
    Object.defineProperty(FairCalc, name, { enumerable: true, get: function () { return (root[HOMES[name]] || {})[name]; } });
  });
  root.FairCalc = Object.freeze(FairCalc);
  if (inWorker) serve(root);
})(typeof window !== "undefined" ? window : this);
