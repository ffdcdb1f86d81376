// The results explorer (results/index.md, made by site_src/rendering/results_page.py): filters,
// sorting and paging for the fairness table, filters and paging for the by-group table, toggletips
// for the help. The page carries each table's first rows as plain HTML (readable without this
// script); every row is in a script beside the page (the section's data-rows-src), loaded the
// first time a reader filters, sorts or asks for more, so the first view stays small (issue 28).
// A script rather than fetch(): it loads from a site opened from disk too.
// Started by assets/pages.js on the page as loaded and after each of Material's instant navigations.
(function () {
  "use strict";

  var PAGE = 50;  // rows shown at a time; "Show more" adds as many again

  // Every row of table `name`, once: calls done() when they are in the table's body.
  function loadRows(section, table, name, done) {
    if (table.dataset.fcComplete) { done(); return; }
    var more = section.querySelector(".fc-more");
    (table.fcWaiting = table.fcWaiting || []).push(done);
    if (table.fcWaiting.length > 1) return;  // already loading
    function finish() {
      table.tBodies[0].innerHTML = window.fcRows[name];
      // The rows file leaves out each cell's data-label (its column's name, which a phone shows
      // above the value): the headings give it back.
      var labels = Array.prototype.map.call(table.tHead.rows[0].cells, function (th) {
        var named = th.querySelector(".fc-sort") || th;
        return named.firstChild ? named.firstChild.textContent.trim() : "";
      });
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        Array.prototype.forEach.call(row.cells, function (cell, i) { cell.setAttribute("data-label", labels[i]); });
      });
      table.dataset.fcComplete = "true";
      var waiting = table.fcWaiting;
      table.fcWaiting = [];
      waiting.forEach(function (f) { f(); });
    }
    if (window.fcRows && window.fcRows[name]) { finish(); return; }
    var script = document.createElement("script");
    script.src = more.dataset.rowsSrc;
    script.onload = finish;
    script.onerror = function () {
      table.fcWaiting = [];
      more.textContent = "The rest of the rows could not be loaded; every row is in the CSV file above.";
    };
    document.head.appendChild(script);
  }

  // The paging line under a table: what is shown, and a button for the next rows.
  function pager(section, onMore) {
    var more = section.querySelector(".fc-more");
    more.textContent = "";
    var button = document.createElement("button");
    button.type = "button";
    button.className = "md-button fc-more-btn";
    button.addEventListener("click", onMore);
    more.appendChild(button);
    return button;
  }

  // The table `selector` finds on this page, marked as set up; null if absent or set up already.
  // (A property, not an attribute: a copy of the page saved by the browser sets up again.)
  function claim(selector) {
    var table = document.querySelector(selector);
    if (!table || table.fcReady) return null;
    table.fcReady = true;
    return table;
  }

  // Show the first `limit` rows that every select keeps (its value, or "all") and `extra` keeps,
  // if given; `key` names the select's data attribute that says which row attribute it filters.
  // Returns how many rows match.
  function filterRows(rows, selects, key, count, extra, limit, total) {
    var matched = 0, shown = 0;
    rows.forEach(function (row) {
      var keep = selects.every(function (s) {
        return !s.value || row.dataset[s.dataset[key]] === s.value;
      }) && (!extra || extra(row));
      if (keep) matched += 1;
      row.hidden = !(keep && matched <= limit);
      if (!row.hidden) shown += 1;
    });
    count.textContent = fmt(matched) + " of " + fmt(total) + " rows" + (shown < matched ? " (showing " + fmt(shown) + ")" : "");
    return matched;
  }

  function fmt(n) { return n.toLocaleString("en"); }

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
    var total = parseInt(explorer.querySelector(".fc-more").dataset.rowsTotal, 10);
    var limit = PAGE;
    var help = setupHelp(explorer);
    panel.hidden = false;

    // Before every row is loaded: the page's first rows, and a button that loads the rest.
    var button = pager(explorer, function () {
      if (!table.dataset.fcComplete) { whole(function () { limit = PAGE; applyFilters(); }); return; }
      limit += PAGE;
      applyFilters();
    });

    function whole(then) {
      button.disabled = true;
      loadRows(explorer, table, "results", function () {
        rows = Array.prototype.slice.call(tbody.rows);
        help.wire(tbody);
        button.disabled = false;
        then();
      });
    }

    function applyFilters() {
      if (!table.dataset.fcComplete) {
        count.textContent = "the first " + fmt(rows.length) + " of " + fmt(total) + " rows";
        button.textContent = "Show all " + fmt(total) + " rows, " + PAGE + " at a time";
        return;
      }
      var matched = filterRows(rows, selects, "filter", count, function (row) {
        return !sigOnly.checked || row.dataset.significant === "true";
      }, limit, total);
      var left = matched - Math.min(limit, matched);
      button.hidden = left === 0;
      button.textContent = "Show " + Math.min(PAGE, left) + " more (" + fmt(left) + " not shown)";
    }

    function refilter() {
      limit = PAGE;
      whole(applyFilters);
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
      limit = PAGE;
      applyFilters();
    }

    selects.forEach(function (s) { s.addEventListener("change", refilter); });
    sigOnly.addEventListener("change", refilter);
    panel.querySelector("[data-filter-reset]").addEventListener("click", function () {
      selects.forEach(function (s) { s.value = ""; });
      sigOnly.checked = false;
      limit = PAGE;
      applyFilters();
    });
    Array.prototype.forEach.call(table.tHead.querySelectorAll("button.fc-sort"), function (button) {
      button.addEventListener("click", function () {
        var th = button.closest("th");
        whole(function () { sortBy(th); });
      });
    });
    applyFilters();
  }

  // The by-group table: its own data-group-filter attributes keep it apart from the main table's
  // filters. It shows one comparison at a time (the selects start on their data-default values),
  // so a reader sees every group of one attribute and rate.
  function setupGroups() {
    var table = claim("table[data-fc-groups]");
    if (!table) return;
    var section = table.closest(".fc-groups");
    var panel = section.querySelector(".fc-filters");
    var selects = Array.prototype.slice.call(panel.querySelectorAll("select[data-group-filter]"));
    var count = panel.querySelector(".fc-group-count");
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var total = parseInt(section.querySelector(".fc-more").dataset.rowsTotal, 10);
    var limit = PAGE;
    panel.hidden = false;
    var button = pager(section, function () { limit += PAGE; apply(); });
    button.hidden = true;

    function apply() {
      if (!table.dataset.fcComplete) {  // the page's rows are the opening view, every one of them
        count.textContent = fmt(rows.length) + " of " + fmt(total) + " rows";
        return;
      }
      var matched = filterRows(rows, selects, "groupFilter", count, null, limit, total);
      var left = matched - Math.min(limit, matched);
      button.hidden = left === 0;
      button.textContent = "Show " + Math.min(PAGE, left) + " more (" + fmt(left) + " not shown)";
    }

    function refilter() {
      limit = PAGE;
      loadRows(section, table, "groups", function () {
        rows = Array.prototype.slice.call(table.tBodies[0].rows);
        apply();
      });
    }

    // The view the page opens on: each select on its data-default (the rows the page carries).
    function defaults() {
      selects.forEach(function (s) {
        var wanted = s.dataset.default || "";
        var has = Array.prototype.some.call(s.options, function (o) { return o.value === wanted; });
        s.value = wanted && has ? wanted : "";
      });
    }

    selects.forEach(function (s) { s.addEventListener("change", refilter); });
    panel.querySelector("[data-group-filter-reset]").addEventListener("click", function () {
      defaults();
      if (table.dataset.fcComplete) refilter(); else apply();
    });
    defaults();
    apply();
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
    function wireAll(root) {
    Array.prototype.forEach.call(root.querySelectorAll("[data-help]:not([aria-controls]):not(th[data-fc-help])"), function (el) {
      var text = el.dataset.help;
      el.removeAttribute("title");  // the toggletip replaces the hover-only tooltip
      if (el.tagName === "TH") {
        el.dataset.fcHelp = "true";
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
    }
    wireAll(explorer);
    document.addEventListener("click", function (ev) { if (!tip.contains(ev.target)) close(); });
    document.addEventListener("keydown", function (ev) { if (ev.key === "Escape") close(); });
    return { wire: wireAll };
  }

  function setup() {
    setupResults();
    setupGroups();
  }

  (window.fcOnEveryPage || function (f) { f(); })(setup);
})();
