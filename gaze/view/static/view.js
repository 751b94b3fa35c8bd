// The run viewer's tables: sort by a column's values, and filter clips by their attributes.
(function () {
  "use strict";
  document.querySelectorAll("th[data-sort]").forEach(function (th) {
    th.addEventListener("click", function () {
      var table = th.closest("table"), body = table.tBodies[0];
      var col = Array.prototype.indexOf.call(th.parentNode.children, th);
      var down = th.dataset.dir !== "down";
      th.dataset.dir = down ? "down" : "up";
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
        var nx = x === undefined || x === "" ? NaN : +x, ny = y === undefined || y === "" ? NaN : +y;
        if (isNaN(nx) && isNaN(ny)) {
          return (a.cells[col].textContent).localeCompare(b.cells[col].textContent) * (down ? 1 : -1);
        }
        if (isNaN(nx)) { return 1; }
        if (isNaN(ny)) { return -1; }
        return down ? ny - nx : nx - ny;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });

  var differ = document.getElementById("only-differ");
  if (differ) {
    differ.addEventListener("change", function () {
      document.querySelectorAll("#compare tbody tr").forEach(function (r) {
        r.hidden = differ.checked && r.dataset.differs === "0";
      });
    });
  }

  var form = document.getElementById("filters");
  if (!form) { return; }
  var rows = Array.prototype.slice.call(document.querySelectorAll("#clips tbody tr"));
  var shown = document.getElementById("shown");
  // list attributes are joined with "|" so that values may hold spaces
  function has(list, value) { return !value || ("|" + list + "|").indexOf("|" + value + "|") >= 0; }
  function apply() {
    var f = {};
    form.querySelectorAll("select,input").forEach(function (el) { f[el.name] = el.value.trim(); });
    var count = 0;
    rows.forEach(function (r) {
      var d = r.dataset;
      var ok = has(d.generator, f.generator) && has(d.dims, f.dimension) && has(d.types, f.type) &&
        has(d.flags, f.flag) && (+d.sev || 0) >= (+f.severity || 0) &&
        (!f.text || d.text.indexOf(f.text.toLowerCase()) >= 0);
      r.hidden = !ok;
      if (ok) { count += 1; }
    });
    if (shown) { shown.textContent = count + " of " + rows.length + " clips shown"; }
  }
  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  apply();
})();
