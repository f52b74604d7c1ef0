// The web board's only script: it redraws the page when the server says
// refs/liza/state moved (server-sent events), and sends the levers' forms
// without leaving the page. Without it the pages still read, and the
// forms still post.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var busy = false, again = false, waiting = false, last = 0;
  // A busy team moves the board many times a second: a page redraws at
  // most every gap ms, the latest board each time.
  var gap = 250;

  function soon() {
    if (waiting) return;
    waiting = true;
    setTimeout(function () { waiting = false; redraw(); }, Math.max(0, last + gap - Date.now()));
  }

  // redraw fetches this page again and swaps its content in; the levers
  // (and what is typed in them) stay.
  function redraw() {
    if (busy) { again = true; return; }
    busy = true;
    last = Date.now();
    fetch(location.pathname + location.search, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html === null) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var next = doc.getElementById("page");
        if (!next) return;
        document.getElementById("page").replaceWith(document.adoptNode(next));
        document.body.dataset.tip = doc.body.dataset.tip || "";
        document.title = doc.title;
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) { again = false; soon(); }
      });
  }

  if (window.EventSource) {
    var es = new EventSource("/events");
    es.addEventListener("state", function (e) {
      if (e.data !== document.body.dataset.tip) soon();
    });
    es.onopen = function () { live.textContent = "live"; live.className = "on"; };
    es.onerror = function () { live.textContent = "reconnecting…"; live.className = "off"; };
  }

  document.addEventListener("submit", function (ev) {
    var f = ev.target;
    if (!f.classList || !f.classList.contains("lever")) return;
    ev.preventDefault();
    if (f.dataset.confirm && !window.confirm(f.dataset.confirm)) return;
    var out = document.getElementById("result");
    fetch(f.action, {
      method: "POST",
      body: new URLSearchParams(new FormData(f)),
      headers: { Accept: "text/plain" },
      credentials: "same-origin"
    }).then(function (r) {
      return r.text().then(function (t) {
        out.textContent = t.trim();
        out.className = r.ok ? "ok" : "failed";
        if (r.ok) { f.reset(); redraw(); }
      });
    }).catch(function (e) {
      out.textContent = "the board did not answer: " + e;
      out.className = "failed";
    });
  });
})();
