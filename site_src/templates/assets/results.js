// The results explorer (results/index.md, made by site_src/rendering/results_page.py): filters,
// sorting and paging for the fairness table, filters and paging for the by-group table, toggletips
// for the help. The page carries each table's first rows as plain HTML (readable without this
// script); every row is in a script beside the page (the section's data-rows-src), loaded the
// first time a reader filters, sorts or asks for more, so the first view stays small (issue 28).
// A script rather than fetch(): it loads from a site opened from disk too.
// Started by assets/pages.js on the page as loaded and after each of Material's instant navigations.
// Needs helpers.js first (assets/pages.js loads it before this).
(function () {
  "use strict";

  var PAGE = 50;  // rows shown at a time; "Show more" adds as many again
  var el = window.fcHelpers.el, thousands = window.fcHelpers.thousands;

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
    var button = el("button", { type: "button", class: "md-button fc-more-btn" });
    button.addEventListener("click", onMore);
    more.appendChild(button);
    return button;
  }

  // The button that shows the next rows, once `matched` rows match and `limit` are shown: hidden
  // when none are left.
  function showMore(button, matched, limit) {
    var left = matched - Math.min(limit, matched);
    button.hidden = left === 0;
    button.textContent = "Show " + Math.min(PAGE, left) + " more (" + thousands(left) + " not shown)";
  }

  // The table `selector` finds on this page, set up once (fcHelpers.once); null if absent or set
  // up already.
  function claim(selector) {
    var table = document.querySelector(selector);
    return table && window.fcHelpers.once(table) ? table : null;
  }

  // A filtered table and what works it, in `section`: the filters' panel, its selects (those
  // `filters` finds), the line that counts the rows (`counter`), the rows as the page carries
  // them, how many there are in all, and how many to show.
  function tableView(table, section, filters, counter) {
    var panel = section.querySelector(".fc-filters");
    return {
      table: table, section: section, panel: panel,
      selects: Array.prototype.slice.call(panel.querySelectorAll(filters)),
      count: panel.querySelector(counter),
      rows: Array.prototype.slice.call(table.tBodies[0].rows),
      total: parseInt(section.querySelector(".fc-more").dataset.rowsTotal, 10),
      limit: PAGE,
    };
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
    count.textContent = thousands(matched) + " of " + thousands(total) + " rows" + (shown < matched ? " (showing " + thousands(shown) + ")" : "");
    return matched;
  }

  // `rows` sorted by the column of heading `th`, the other way round from how it is sorted now
  // (ascending first), as its aria-sort then says. Numbers sort by their raw value (data-value);
  // undefined cells always go last; ties keep the table's order.
  function sortedRows(rows, th) {
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
    return keyed.map(function (k) { return k.row; });
  }

  // ------------------------------------------------------------------ the fairness table

  function setupResults() {
    var table = claim("table[data-fc-results]");
    if (!table) return;
    var view = tableView(table, table.closest(".fc-explorer"), "select[data-filter]", ".fc-count");
    view.sigOnly = view.panel.querySelector("[data-filter-significant]");
    var tbody = table.tBodies[0];
    var help = setupHelp(view.section);
    view.panel.hidden = false;

    // Before every row is loaded: the page's first rows, and a button that loads the rest.
    view.button = pager(view.section, function () {
      if (!table.dataset.fcComplete) { whole(function () { view.limit = PAGE; showResults(view); }); return; }
      view.limit += PAGE;
      showResults(view);
    });

    function whole(then) {
      view.button.disabled = true;
      loadRows(view.section, table, "results", function () {
        view.rows = Array.prototype.slice.call(tbody.rows);
        help.wire(tbody);
        view.button.disabled = false;
        then();
      });
    }

    function refilter() {
      view.limit = PAGE;
      whole(function () { showResults(view); });
    }

    function sortBy(th) {
      view.rows = sortedRows(view.rows, th);
      view.rows.forEach(function (row) { tbody.appendChild(row); });
      view.limit = PAGE;
      showResults(view);
    }

    view.selects.forEach(function (s) { s.addEventListener("change", refilter); });
    view.sigOnly.addEventListener("change", refilter);
    view.panel.querySelector("[data-filter-reset]").addEventListener("click", function () {
      view.selects.forEach(function (s) { s.value = ""; });
      view.sigOnly.checked = false;
      view.limit = PAGE;
      showResults(view);
    });
    Array.prototype.forEach.call(table.tHead.querySelectorAll("button.fc-sort"), function (sort) {
      sort.addEventListener("click", function () {
        var th = sort.closest("th");
        whole(function () { sortBy(th); });
      });
    });
    showResults(view);
  }

  // The fairness table's rows as its filters (and "significant only") and its paging say; before
  // every row is loaded, the page's first rows, and the button offers the rest.
  function showResults(view) {
    if (!view.table.dataset.fcComplete) {
      view.count.textContent = "the first " + thousands(view.rows.length) + " of " + thousands(view.total) + " rows";
      view.button.textContent = "Show all " + thousands(view.total) + " rows, " + PAGE + " at a time";
      return;
    }
    showMore(view.button, filterRows(view.rows, view.selects, "filter", view.count, function (row) {
      return !view.sigOnly.checked || row.dataset.significant === "true";
    }, view.limit, view.total), view.limit);
  }

  // ------------------------------------------------------------------ the by-group table

  // The by-group table: its own data-group-filter attributes keep it apart from the main table's
  // filters. It shows one comparison at a time (the selects start on their data-default values),
  // so a reader sees every group of one attribute and rate.
  function setupGroups() {
    var table = claim("table[data-fc-groups]");
    if (!table) return;
    var view = tableView(table, table.closest(".fc-groups"), "select[data-group-filter]", ".fc-group-count");
    view.panel.hidden = false;
    var button = pager(view.section, function () { view.limit += PAGE; apply(); });
    button.hidden = true;

    function apply() {
      if (!table.dataset.fcComplete) {  // the page's rows are the opening view, every one of them
        view.count.textContent = thousands(view.rows.length) + " of " + thousands(view.total) + " rows";
        return;
      }
      showMore(button, filterRows(view.rows, view.selects, "groupFilter", view.count, null, view.limit, view.total), view.limit);
    }

    function refilter() {
      view.limit = PAGE;
      loadRows(view.section, table, "groups", function () {
        view.rows = Array.prototype.slice.call(table.tBodies[0].rows);
        apply();
      });
    }

    // The view the page opens on: each select on its data-default (the rows the page carries).
    function defaults() {
      view.selects.forEach(function (s) {
        var wanted = s.dataset.default || "";
        var has = Array.prototype.some.call(s.options, function (o) { return o.value === wanted; });
        s.value = wanted && has ? wanted : "";
      });
    }

    view.selects.forEach(function (s) { s.addEventListener("change", refilter); });
    view.panel.querySelector("[data-group-filter-reset]").addEventListener("click", function () {
      defaults();
      if (table.dataset.fcComplete) refilter(); else apply();
    });
    defaults();
    apply();
  }

  // ------------------------------------------------------------------ help

  // Help that `title` gave only on hover: a toggletip that a click, a tap, Enter or Space opens
  // and Escape, a second press or a click elsewhere closes. Column headings get a "?" button (the
  // heading itself sorts); cells with help become focusable buttons themselves.
  function setupHelp(explorerBox) {
    var tip = toggletip();
    function wireAll(root) {
      Array.prototype.forEach.call(root.querySelectorAll("[data-help]:not([aria-controls]):not(th[data-fc-help])"), function (node) {
        var text = node.dataset.help;
        node.removeAttribute("title");  // the toggletip replaces the hover-only tooltip
        tip.wire(helpTrigger(node, text), text);
      });
    }
    wireAll(explorerBox);
    document.addEventListener("click", function (ev) { if (!tip.node.contains(ev.target)) tip.close(); });
    document.addEventListener("keydown", function (ev) { if (ev.key === "Escape") tip.close(); });
    return { wire: wireAll };
  }

  // The one toggletip of the page (#fc-tip), shown under the trigger that opened it.
  function toggletip() {
    var tip = el("div", { class: "fc-tip", id: "fc-tip", role: "status" });
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
    return { node: tip, close: close, wire: wire };
  }

  // What opens the help of `node`: a "?" button in a column heading, a button holding a cell's
  // content (a cell is not a button: the table keeps its semantics), or the element itself.
  function helpTrigger(node, text) {
    if (node.tagName === "TH") {
      node.dataset.fcHelp = "true";
      var button = el("button", { type: "button", class: "fc-help-btn", "aria-label": "What is " + node.textContent.trim() + "?" }, "?");
      node.appendChild(button);
      return button;
    }
    if (node.tagName === "TD") {
      var inner = el("button", { type: "button", class: "fc-help-cell" });
      while (node.firstChild) inner.appendChild(node.firstChild);
      node.appendChild(inner);
      inner.setAttribute("aria-label", (inner.textContent.trim() ? inner.textContent.trim() + ": " : "") + text);
      return inner;
    }
    node.tabIndex = 0;
    node.setAttribute("role", "button");
    node.setAttribute("aria-label", (node.textContent.trim() ? node.textContent.trim() + ": " : "") + text);
    return node;
  }

  function setup() {
    setupResults();
    setupGroups();
  }

  (window.fcOnEveryPage || function (f) { f(); })(setup);
})();
