// Sorts a table by a header's column when its button is pressed: numbers
// by value (the first number in the cell; "—" last), text by locale;
// pressing again reverses. aria-sort tells screen readers the order.
(function () {
  "use strict";
  function value(cell, numeric) {
    var t = cell.textContent.trim();
    if (!numeric) return t;
    if (t.charAt(0) === "∞") return Infinity;
    var m = t.match(/[-+−]?\d+(\.\d+)?(e[-+]?\d+)?/i);
    return m ? parseFloat(m[0].replace("−", "-")) : NaN;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      var button = th.querySelector("button");
      if (!button) return;
      button.addEventListener("click", function () {
        var numeric = th.dataset.kind === "number";
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        heads.forEach(function (h) { h.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = value(a.cells[col], numeric), y = value(b.cells[col], numeric);
          if (numeric) {
            if (isNaN(x)) return isNaN(y) ? 0 : 1;
            if (isNaN(y)) return -1;
            return dir * (x - y);
          }
          return dir * x.localeCompare(y);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
