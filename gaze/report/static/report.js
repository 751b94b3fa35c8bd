// Keeps the video, the timeline, the progress curve and the event list on one time: clicking an
// event, a frame or a chart seeks; playing moves the cursor and marks the events under it.
(function () {
  "use strict";
  var video = document.getElementById("player");
  var charts = Array.prototype.slice.call(document.querySelectorAll("svg.axis"));
  var spans = Array.prototype.slice.call(document.querySelectorAll("[data-start]"));
  var now = document.getElementById("now");

  function mark(t) {
    charts.forEach(function (svg) {
      var x0 = +svg.dataset.x0, x1 = +svg.dataset.x1, d = +svg.dataset.duration;
      var x = x0 + (x1 - x0) * Math.min(Math.max(t, 0), d) / d;
      var line = svg.querySelector(".cursor");
      if (line) { line.setAttribute("x1", x); line.setAttribute("x2", x); }
    });
    spans.forEach(function (el) {
      el.classList.toggle("active", t >= +el.dataset.start && t <= +el.dataset.end);
    });
    if (now) { now.textContent = t.toFixed(2) + " s"; }
  }

  function seek(t) {
    if (video) { video.currentTime = t; }
    document.body.dataset.sought = String(t);  // for scripts; not a seek target (data-t)
    mark(t);
  }

  // the time under a pointer on a chart (null off its plot area)
  function timeAt(svg, clientX) {
    var box = svg.getBoundingClientRect(), view = svg.viewBox.baseVal;
    var x = (clientX - box.left) * view.width / box.width;
    var x0 = +svg.dataset.x0, x1 = +svg.dataset.x1;
    return x >= x0 && x <= x1 ? (x - x0) / (x1 - x0) * +svg.dataset.duration : null;
  }

  document.addEventListener("click", function (e) {
    var target = e.target.closest ? e.target.closest("[data-t]") : null;
    if (target) { e.preventDefault(); seek(+target.dataset.t); return; }
    var svg = e.target.closest ? e.target.closest("svg.axis") : null;
    var t = svg ? timeAt(svg, e.clientX) : null;
    if (t !== null) { seek(t); }
  });

  // dragging along a chart (the progress curve, the timeline) scrubs the video
  var dragging = null;
  charts.forEach(function (svg) {
    svg.addEventListener("pointerdown", function (e) {
      if (timeAt(svg, e.clientX) === null) { return; }
      dragging = svg;
      svg.setPointerCapture(e.pointerId);
      e.preventDefault();
    });
    svg.addEventListener("pointermove", function (e) {
      if (dragging !== svg) { return; }
      var t = timeAt(svg, e.clientX);
      if (t !== null) { seek(t); }
    });
    svg.addEventListener("pointerup", function () { dragging = null; });
  });

  // a run viewer's clip pages: [ and ] walk the run, u goes back to it
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || /INPUT|SELECT|TEXTAREA/.test(e.target.tagName)) { return; }
    var to = { "[": "prev", "]": "next", "u": "up" }[e.key];
    var link = to ? document.getElementById(to) : null;
    if (link) { window.location.href = link.href; }
  });

  // the transcript: show one role's exchanges, or only those without a usable answer
  var role = document.getElementById("x-role"), bad = document.getElementById("x-bad");
  function filterExchanges() {
    document.querySelectorAll(".exchange").forEach(function (li) {
      li.hidden = (role.value && li.dataset.role !== role.value) || (bad.checked && li.dataset.ok === "1");
    });
  }
  if (role && bad) {
    role.addEventListener("change", filterExchanges);
    bad.addEventListener("change", filterExchanges);
  }

  if (video) {
    video.addEventListener("error", function () {
      var note = document.createElement("div");
      note.className = "note";
      note.textContent = "This browser cannot play the video (its codec or container); the " +
        "frames on this page were decoded by gaze and still show the evidence.";
      video.parentNode.insertBefore(note, video);
      video.style.display = "none";
    });
    var follow = function () {
      mark(video.currentTime);
      if (!video.paused && !video.ended) { window.requestAnimationFrame(follow); }
    };
    video.addEventListener("play", follow);
    video.addEventListener("seeked", function () { mark(video.currentTime); });
    video.addEventListener("timeupdate", function () { mark(video.currentTime); });
  }
})();
