// The results explorer (results/index.md, made by site_src/rendering/results_page.py): filters and
// sorting for the fairness table, filters for the by-group table, toggletips for the help.
// Each table is complete HTML without this script; the script only hides rows and reorders them.
// Material's instant navigation swaps pages without a reload, so setup runs on each `document$`.
(function () {
  "use strict";

  // The table `selector` finds on this page, marked as set up; null if absent or set up already.
  function claim(selector) {
    var table = document.querySelector(selector);
    if (!table || table.dataset.fcReady) return null;
    table.dataset.fcReady = "true";
    return table;
  }

  // Show the rows that every select keeps (its value, or "all") and `extra` keeps, if given;
  // `key` names the select's data attribute that says which row attribute it filters.
  function filterRows(rows, selects, key, count, extra) {
    var shown = 0;
    rows.forEach(function (row) {
      var keep = selects.every(function (s) {
        return !s.value || row.dataset[s.dataset[key]] === s.value;
      }) && (!extra || extra(row));
      row.hidden = !keep;
      if (keep) shown += 1;
    });
    count.textContent = shown + " of " + rows.length + " rows";
  }

  function setupResults() {
    var table = claim("table[data-fc-results]");
    if (!table) return;
    var explorer = table.closest(".fc-explorer");
    var panel = explorer.querySelector(".fc-filters");
    var selects = Array.prototype.slice.call(panel.querySelectorAll("select[data-filter]"));
    var sigOnly = panel.querySelector("[data-filter-significant]");
    var count = panel.querySelector(".fc-count");
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    panel.hidden = false;

    function applyFilters() {
      filterRows(rows, selects, "filter", count, function (row) {
        return !sigOnly.checked || row.dataset.significant === "true";
      });
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
    setupHelp(explorer);
  }

  // The by-group table: its own data-group-filter attributes keep it apart from the main table's
  // filters. It shows one comparison at a time (the selects start on their data-default values),
  // so a reader sees every group of one attribute and rate.
  function setupGroups() {
    var table = claim("table[data-fc-groups]");
    if (!table) return;
    var panel = table.closest(".fc-groups").querySelector(".fc-filters");
    var selects = Array.prototype.slice.call(panel.querySelectorAll("select[data-group-filter]"));
    var count = panel.querySelector(".fc-group-count");
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    panel.hidden = false;

    function apply() { filterRows(rows, selects, "groupFilter", count); }

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

  // Help that `title` gave only on hover: a toggletip that a click, a tap, Enter or Space opens
  // and Escape, a second press or a click elsewhere closes. Column headings get a "?" button (the
  // heading itself sorts); cells with help become focusable buttons themselves.
  function setupHelp(explorer) {
    var tip = document.createElement("div");
    tip.className = "fc-tip";
    tip.id = "fc-tip";
    tip.setAttribute("role", "status");
    tip.hidden = true;
    document.body.appendChild(tip);
    var owner = null;

    function close() {
      if (owner) owner.setAttribute("aria-expanded", "false");
      tip.hidden = true;
      owner = null;
    }
    function open(trigger, text) {
      if (owner === trigger) { close(); return; }
      close();
      owner = trigger;
      trigger.setAttribute("aria-expanded", "true");
      tip.textContent = text;
      tip.hidden = false;
      var r = trigger.getBoundingClientRect();
      var left = Math.min(window.scrollX + r.left, window.scrollX + document.documentElement.clientWidth - tip.offsetWidth - 8);
      tip.style.left = Math.max(window.scrollX + 4, left) + "px";
      tip.style.top = (window.scrollY + r.bottom + 4) + "px";
    }
    function wire(trigger, text) {
      trigger.setAttribute("aria-expanded", "false");
      trigger.setAttribute("aria-controls", "fc-tip");
      trigger.addEventListener("click", function (ev) { ev.stopPropagation(); open(trigger, text); });
      trigger.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); open(trigger, text); }
        if (ev.key === "Escape") close();
      });
    }
    Array.prototype.forEach.call(explorer.querySelectorAll("[data-help]"), function (el) {
      var text = el.dataset.help;
      el.removeAttribute("title");  // the toggletip replaces the hover-only tooltip
      if (el.tagName === "TH") {
        var button = document.createElement("button");
        button.type = "button";
        button.className = "fc-help-btn";
        button.textContent = "?";
        button.setAttribute("aria-label", "What is " + el.textContent.trim() + "?");
        el.appendChild(button);
        wire(button, text);
      } else if (el.tagName === "TD") {
        // A button inside the cell keeps the table's semantics (a cell is not a button).
        var inner = document.createElement("button");
        inner.type = "button";
        inner.className = "fc-help-cell";
        while (el.firstChild) inner.appendChild(el.firstChild);
        el.appendChild(inner);
        inner.setAttribute("aria-label", (inner.textContent.trim() ? inner.textContent.trim() + ": " : "") + text);
        wire(inner, text);
      } else {
        el.tabIndex = 0;
        el.setAttribute("role", "button");
        el.setAttribute("aria-label", (el.textContent.trim() ? el.textContent.trim() + ": " : "") + text);
        wire(el, text);
      }
    });
    document.addEventListener("click", function (ev) { if (!tip.contains(ev.target)) close(); });
    document.addEventListener("keydown", function (ev) { if (ev.key === "Escape") close(); });
  }

  function setup() {
    setupResults();
    setupGroups();
  }

  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(setup);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
