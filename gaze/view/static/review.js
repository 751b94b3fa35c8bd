// gaze review: the page asks /api/state for the clips and every decision so far, and sends each
// decision to /api/decide with the revision it saw; the server logs it before answering, so
// closing the page loses nothing. Keyboard first: see the "Keys" note on the page.
(function () {
  "use strict";
  var REASONS = ["not visible", "wrong type", "wrong span", "duplicate"];
  var video = document.getElementById("player");
  var state = null, book = null, current = 0, selected = 0, editing = null, rejecting = false;
  var stillCache = {};

  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined) { node.textContent = text; }
    if (cls) { node.className = cls; }
    return node;
  }
  function say(text) { var m = $("message"); m.textContent = text; m.hidden = !text; }
  function clip() { return state.clips[current]; }
  function fps() { return clip().fps || 30; }
  function frameOf(t) { return Math.round(t * fps()); }
  function timeOfFrame(f) { return (f + 0.5) / fps(); } // the middle of the frame: never the edge

  function load() {
    return fetch("/api/state", { cache: "no-store" }).then(function (r) { return r.json(); })
      .then(function (s) { state = s; draw(); });
  }

  function decide(action, value) {
    var body = { clip_id: clip().clip_id, action: action, value: value, revision: state.revision };
    return fetch("/api/decide", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().then(function (answer) {
        if (!r.ok) { say(answer.error || "the decision was not saved"); return false; }
        say("");
        return load().then(function () { return true; });
      });
    }).catch(function () { say("the review server does not answer: nothing was saved"); return false; });
  }

  function decisionOf(index) { return clip().decisions[String(index)]; }

  function eventItem(ev, index, added) {
    var li = el("li");
    var d = added ? null : decisionOf(index);
    var shown = d && d.decision === "edit" ? Object.assign({}, ev, d.fields) : ev;
    li.appendChild(el("b", shown.type || "untyped"));
    li.appendChild(el("span", " " + shown.start_s.toFixed(2) + "-" + shown.end_s.toFixed(2) +
      " s · severity " + (shown.severity === null || shown.severity === undefined ? "—" : shown.severity)));
    if (d) {
      li.className = d.decision === "accept" ? "accepted" : d.decision === "reject" ? "rejected" : "edited";
      li.appendChild(el("span", d.decision + (d.reason ? ": " + d.reason : ""), "badge"));
    }
    li.appendChild(el("div", shown.description || "", "dim"));
    if (shown.evidence && shown.evidence.length) {
      var ul = el("ul", undefined, "dim");
      shown.evidence.forEach(function (item) { ul.appendChild(el("li", item)); });
      li.appendChild(ul);
    }
    if (!added) { li.appendChild(keyFrames(shown)); }
    li.dataset.index = String(index);
    li.addEventListener("click", function () {
      if (!added) { selected = index; }
      seek(shown.start_s);
      draw();
    });
    return li;
  }

  // before, during and after the event, decoded by the server (a click seeks there)
  function keyFrames(ev) {
    var box = el("div", undefined, "kfs");
    var f = 1 / fps();
    var times = [Math.max(0, ev.start_s - 0.25), (ev.start_s + ev.end_s) / 2, ev.end_s + 0.25];
    var roles = ["before", "during", "after"];
    var url = "/stills/" + current + "?t=" + times.map(function (t) { return t.toFixed(3); }).join(",");
    if (!stillCache[url]) {  // decoded once per page, not at every redraw
      stillCache[url] = fetch(url).then(function (r) { return r.json(); });
    }
    stillCache[url]
      .then(function (stills) {
        stills.forEach(function (s, i) {
          if (!s) { return; }
          var fig = el("figure", undefined, "kf");
          var img = el("img"); img.src = s.src; img.alt = roles[i] + " frame";
          fig.appendChild(img);
          fig.appendChild(el("figcaption", roles[i] + " · " + s.t_s.toFixed(2) + " s"));
          fig.addEventListener("click", function (e) { e.stopPropagation(); seek(s.t_s + f / 2); });
          box.appendChild(fig);
        });
      });
    return box;
  }

  function drawTimeline() {
    var box = $("timeline"), c = clip();
    box.innerHTML = "";
    var duration = video.duration || Math.max.apply(null, [1].concat(
      c.proposed.map(function (e) { return e.end_s; }), c.added.map(function (e) { return e.end_s; })));
    function span(e, cls) {
      var s = el("div", "", "span" + (cls ? " " + cls : ""));
      s.style.left = (100 * e.start_s / duration) + "%";
      s.style.width = Math.max(0.5, 100 * (e.end_s - e.start_s) / duration) + "%";
      box.appendChild(s);
    }
    c.proposed.forEach(function (e, i) {
      var d = decisionOf(i);
      if (!d || d.decision !== "reject") { span(d && d.fields ? Object.assign({}, e, d.fields) : e); }
    });
    c.added.forEach(function (e) { span(e, "added"); });
    var cursor = el("div", "", "cursor");
    cursor.style.left = (100 * (video.currentTime || 0) / duration) + "%";
    box.appendChild(cursor);
    box.onclick = function (ev) {
      var r = box.getBoundingClientRect();
      seek((ev.clientX - r.left) / r.width * duration);
    };
  }

  function draw() {
    var c = clip();
    var list = $("clip-list");
    list.innerHTML = "";
    var done = 0;
    state.clips.forEach(function (k, i) {
      var li = el("li", k.clip_id);
      if (k.status) { done += 1; li.appendChild(el("span", k.status, "st")); }
      if (i === current) { li.className = "current"; }
      li.addEventListener("click", function () { go(i); });
      list.appendChild(li);
    });
    $("progress").textContent = done + " done · " + (state.clips.length - done) + " to do · " +
      "annotator " + state.annotator;
    $("clip-title").textContent = c.clip_id;
    $("instruction").textContent = c.instruction;
    $("method").textContent = c.method || "nobody (annotating from scratch)";
    $("status").textContent = c.status ? "marked " + c.status : "not finished";
    if (video.dataset.src !== c.video) { video.dataset.src = c.video; video.src = c.video; }
    var proposed = $("proposed");
    proposed.innerHTML = "";
    c.proposed.forEach(function (e, i) {
      var li = eventItem(e, i, false);
      if (i === selected) { li.classList.add("selected"); }
      proposed.appendChild(li);
    });
    if (!c.proposed.length) { proposed.appendChild(el("li", "none", "dim")); }
    var added = $("added");
    added.innerHTML = "";
    c.added.forEach(function (e, i) { added.appendChild(eventItem(e, i, true)); });
    drawTimeline();
  }

  function seek(t) { video.currentTime = Math.max(0, t); }
  function step(frames) {
    video.pause();
    seek(timeOfFrame(Math.max(0, frameOf(video.currentTime - 0.5 / fps()) + frames)));
  }
  video.addEventListener("timeupdate", show);
  video.addEventListener("seeked", show);
  function show() {
    $("frame").textContent = String(frameOf(video.currentTime - 0.5 / fps()));
    $("now").textContent = video.currentTime.toFixed(3) + " s";
    if (state) { drawTimeline(); }
  }

  function go(index) {
    if (index < 0 || index >= state.clips.length) { return; }
    current = index; selected = 0; closeEditor(); draw();
  }

  // the editor: an event's type (with its definition and exclusion rule), span, severity, words
  function openEditor(kind, start) {
    var form = $("editor");
    var c = clip(), base = kind === "edit" ? c.proposed[selected] : null;
    if (kind === "edit" && !base) { return; }
    var d = base ? decisionOf(selected) : null;
    var ev = base ? Object.assign({}, base, d && d.fields ? d.fields : {}) :
      { type: book.types[0].name, start_s: start, end_s: start, severity: 3, description: "" };
    editing = kind;
    $("editor-title").textContent = kind === "edit" ? "Edit event " + (selected + 1) : "Add an event";
    form.type.value = ev.type || book.types[0].name;
    form.start_s.value = ev.start_s.toFixed(3);
    form.end_s.value = ev.end_s.toFixed(3);
    form.severity.value = String(Math.round(ev.severity || 3));
    form.description.value = ev.description || "";
    typeHelp();
    form.hidden = false;
    form.type.focus();
  }
  function closeEditor() { editing = null; $("editor").hidden = true; }
  function typeHelp() {
    var t = book.types.filter(function (x) { return x.name === $("editor").type.value; })[0];
    $("type-help").textContent = t ? t.dimension + ": " + t.definition + " Not: " + t.exclusion_rule : "";
  }
  function fieldsOf() {
    var form = $("editor");
    var t = book.types.filter(function (x) { return x.name === form.type.value; })[0];
    return {
      dimension: t.dimension, type: t.name, start_s: +form.start_s.value, end_s: +form.end_s.value,
      severity: +form.severity.value, description: form.description.value
    };
  }
  function save() {
    var fields = fieldsOf();
    var sent = editing === "edit" ? decide("edit", { index: selected, fields: fields })
      : decide("add", { event: fields });
    sent.then(function (ok) { if (ok) { closeEditor(); } });
  }

  function reject(reasonIndex) {
    rejecting = false;
    decide("reject", { index: selected, reason: REASONS[reasonIndex] });
  }

  document.addEventListener("keydown", function (e) {
    if (!state || e.ctrlKey || e.metaKey || e.altKey) { return; }
    var form = $("editor");
    if (editing) {
      if (e.key === "Escape") { closeEditor(); e.preventDefault(); return; }
      if (e.key === "Enter") { save(); e.preventDefault(); return; }
      var inText = e.target.tagName === "INPUT" && e.target.type === "text";
      if (!inText && (e.key === "s" || e.key === "e")) {
        var t = timeOfFrame(frameOf(video.currentTime - 0.5 / fps())) - 0.5 / fps();
        form[e.key === "s" ? "start_s" : "end_s"].value = Math.max(0, t).toFixed(3);
        e.preventDefault();
        return;
      }
      if (!inText && (e.key === "," || e.key === ".")) { step(e.key === "," ? -1 : 1); e.preventDefault(); }
      return;
    }
    if (rejecting && "1234".indexOf(e.key) >= 0) { reject(+e.key - 1); e.preventDefault(); return; }
    rejecting = false;
    var c = clip();
    var keys = {
      " ": function () { if (video.paused) { video.play(); } else { video.pause(); } },
      ",": function () { step(-1); },
      ".": function () { step(1); },
      "n": function () {
        if (!c.proposed.length) { return; }
        selected = (selected + 1) % c.proposed.length; seek(c.proposed[selected].start_s); draw();
      },
      "a": function () { if (c.proposed.length) { decide("accept", { index: selected }); } },
      "r": function () {
        if (c.proposed.length) { rejecting = true; say("reject why? 1 not visible · 2 wrong type · 3 wrong span · 4 duplicate"); }
      },
      "e": function () { openEditor("edit"); },
      "+": function () { openEditor("add", video.currentTime); },
      "c": function () { decide("status", { status: "clean" }); },
      "u": function () { decide("status", { status: "undecidable" }); },
      "d": function () {
        decide("status", { status: "done" }).then(function (ok) { if (ok) { go(current + 1); } });
      },
      "j": function () { go(current + 1); },
      "k": function () { go(current - 1); }
    };
    if (keys[e.key]) { keys[e.key](); e.preventDefault(); }
  });

  $("set-start").addEventListener("click", function () {
    $("editor").start_s.value = Math.max(0, video.currentTime).toFixed(3);
  });
  $("set-end").addEventListener("click", function () {
    $("editor").end_s.value = Math.max(0, video.currentTime).toFixed(3);
  });
  $("save").addEventListener("click", save);
  $("cancel").addEventListener("click", closeEditor);

  fetch("/api/codebook").then(function (r) { return r.json(); }).then(function (b) {
    book = b;
    var form = $("editor");
    b.types.forEach(function (t) {
      var o = el("option", t.name + " (" + t.dimension + ")"); o.value = t.name; form.type.appendChild(o);
    });
    b.severity.forEach(function (s) {
      var o = el("option", s.level + " " + s.label); o.value = String(s.level); form.severity.appendChild(o);
    });
    form.type.addEventListener("change", typeHelp);
    return load();
  });
})();
