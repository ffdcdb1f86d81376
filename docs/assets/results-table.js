// Filters and sorting for the results explorer (results/index.md, built by site_src/results_page.py).
// The table is complete HTML without this script; the script only hides rows and reorders them.
// Material's instant navigation swaps pages without a reload, so setup runs on each `document$`.
(function () {
  "use strict";

  function setup() {
    var table = document.querySelector("table[data-fc-results]");
    if (!table || table.dataset.fcReady) return;
    table.dataset.fcReady = "true";
    var explorer = table.closest(".fc-explorer");
    var panel = explorer.querySelector(".fc-filters");
    var selects = Array.prototype.slice.call(panel.querySelectorAll("select[data-filter]"));
    var sigOnly = panel.querySelector("[data-filter-significant]");
    var count = panel.querySelector(".fc-count");
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    panel.hidden = false;

    function applyFilters() {
      var shown = 0;
      rows.forEach(function (row) {
        var keep = selects.every(function (s) {
          return !s.value || row.dataset[s.dataset.filter] === s.value;
        });
        if (sigOnly.checked && row.dataset.significant !== "true") keep = false;
        row.hidden = !keep;
        if (keep) shown += 1;
      });
      count.textContent = shown + " of " + rows.length + " rows";
    }

    // Numbers sort by their raw value (data-value); undefined cells always go last.
    function sortBy(th) {
      var index = Array.prototype.indexOf.call(th.parentNode.children, th);
      var numeric = th.dataset.type === "number";
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(th.parentNode.children, function (other) {
        other.removeAttribute("aria-sort");
      });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      function key(row) {
        var cell = row.cells[index];
        if (!numeric) return cell.textContent.trim();
        var raw = cell.dataset.value;
        return raw === undefined || raw === "" ? null : parseFloat(raw);
      }
      var keyed = rows.map(function (row, i) { return { row: row, key: key(row), i: i }; });
      keyed.sort(function (a, b) {
        if (a.key === null || b.key === null) {
          if (a.key === b.key) return a.i - b.i;
          return a.key === null ? 1 : -1;
        }
        var c = numeric ? a.key - b.key : a.key.localeCompare(b.key);
        if (c === 0) return a.i - b.i;  // stable: ties keep the table's order
        return ascending ? c : -c;
      });
      rows = keyed.map(function (k) { return k.row; });
      rows.forEach(function (row) { tbody.appendChild(row); });
    }

    selects.forEach(function (s) { s.addEventListener("change", applyFilters); });
    sigOnly.addEventListener("change", applyFilters);
    panel.querySelector("[data-filter-reset]").addEventListener("click", function () {
      selects.forEach(function (s) { s.value = ""; });
      sigOnly.checked = false;
      applyFilters();
    });
    Array.prototype.forEach.call(table.tHead.querySelectorAll("button.fc-sort"), function (button) {
      button.addEventListener("click", function () { sortBy(button.closest("th")); });
    });
    applyFilters();
  }

  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(setup);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
