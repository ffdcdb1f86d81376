// Filters for the by-group table of the results explorer (results/index.md, site_src/results_page.py).
// Its own data-group-filter attributes keep it apart from the main table's filters and script.
// The table is complete HTML without this script; the script shows one comparison at a time (the
// selects start on the data-default values), so a reader sees every group of one attribute and rate.
(function () {
  "use strict";

  function setup() {
    var table = document.querySelector("table[data-fc-groups]");
    if (!table || table.dataset.fcReady) return;
    table.dataset.fcReady = "true";
    var panel = table.closest(".fc-groups").querySelector(".fc-filters");
    var selects = Array.prototype.slice.call(panel.querySelectorAll("select[data-group-filter]"));
    var count = panel.querySelector(".fc-group-count");
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    panel.hidden = false;

    function apply() {
      var shown = 0;
      rows.forEach(function (row) {
        var keep = selects.every(function (s) {
          return !s.value || row.dataset[s.dataset.groupFilter] === s.value;
        });
        row.hidden = !keep;
        if (keep) shown += 1;
      });
      count.textContent = shown + " of " + rows.length + " rows";
    }

    function reset() {
      selects.forEach(function (s) {
        var wanted = s.dataset.default || "";
        var has = Array.prototype.some.call(s.options, function (o) { return o.value === wanted; });
        // No default (or one this table lacks): the first real option, so one comparison shows.
        s.value = wanted && has ? wanted : (s.options.length > 1 ? s.options[1].value : "");
      });
      apply();
    }

    selects.forEach(function (s) { s.addEventListener("change", apply); });
    panel.querySelector("[data-group-filter-reset]").addEventListener("click", reset);
    reset();
  }

  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(setup);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
