// The run viewer's tables: sort by a column's values, export what is shown as CSV, and filter
// clips by their attributes.
(function () {
  "use strict";

  // a cell's value for a spreadsheet: its number where it has one, else its text
  function cellValue(cell) {
    var v = cell.dataset.v;
    return v !== undefined && v !== "" && !isNaN(+v) ? v : cell.textContent.replace(/\s+/g, " ").trim();
  }
  function csvField(text) {
    return /[",\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }
  document.querySelectorAll(".tablewrap > table[id]").forEach(function (table) {
    var button = document.createElement("button");
    button.className = "csv seek";
    button.type = "button";
    button.textContent = "CSV";
    button.title = "the rows shown, as a CSV file";
    button.addEventListener("click", function () {
      var rows = Array.prototype.slice.call(table.rows).filter(function (r) { return !r.hidden; });
      var text = rows.map(function (r) {
        return Array.prototype.map.call(r.cells, function (c) { return csvField(cellValue(c)); }).join(",");
      }).join("\n") + "\n";
      var link = document.createElement("a");
      link.href = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
      link.download = table.id + ".csv";
      document.body.appendChild(link);
      link.click();
      link.remove();
    });
    table.parentNode.parentNode.insertBefore(button, table.parentNode);
  });
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
