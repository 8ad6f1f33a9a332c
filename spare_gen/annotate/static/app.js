// The rater page: fetch the pair on screen, draw it, send the answer for the shown side, show breaks and progress.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const KEYS = { ArrowLeft: "left", 1: "left", ArrowRight: "right", 3: "right", ArrowDown: "equal", 2: "equal" };
  let rater = new URLSearchParams(location.search).get("rater");
  let state = null, shownAt = 0, busy = false, showGtUnder = true, dialogOpen = false;

  const gtView = Viewer.attach($("view-gt"));
  const leftView = Viewer.attach($("view-left"));
  const rightView = Viewer.attach($("view-right"));
  const under = () => !showGtUnder;

  function size() {
    const byWidth = Math.floor((window.innerWidth - 90) / 3), byHeight = window.innerHeight - 220;
    const side = Math.max(200, Math.min(460, byWidth, byHeight));
    for (const id of ["view-gt", "view-left", "view-right"]) { $(id).style.width = side + "px"; $(id).style.height = side + "px"; }
    for (const id of ["picture-gt", "picture-left", "picture-right"]) { $(id).style.width = Math.round(0.6 * side) + "px"; }
    Viewer.redraw();
  }

  function setMode(mode) { document.body.dataset.mode = mode; }

  function openDialog(templateId, mode) {
    $("dialog-body").replaceChildren($(templateId).content.cloneNode(true));
    const breakText = $("break-every-text");
    if (breakText && state) breakText.textContent = state.break_every || "(never)";
    if (templateId === "instructions" && state && state.answered > 0) {
      const back = document.createElement("p");
      back.className = "welcome-back";
      back.textContent = `Welcome back: ${state.answered} of ${state.total} pairs answered, continuing with pair ${state.position + 1}.`;
      $("dialog-body").prepend(back);
    }
    $("name-form").hidden = true; $("dialog-close").hidden = mode === "done";
    $("overlay").hidden = false; dialogOpen = true; setMode(mode);
  }

  function closeDialog() {
    if (!dialogOpen || !state || state.done) return;
    $("overlay").hidden = true; dialogOpen = false; shownAt = performance.now(); setMode("rating");
  }

  function showError(message) {
    $("dialog-body").innerHTML = "";
    const p = document.createElement("p"); p.className = "error"; p.textContent = message;
    $("dialog-body").append(p); $("dialog-close").hidden = true; $("overlay").hidden = false; dialogOpen = true;
    setMode("error");
  }

  function render() {
    const s = state;
    $("rater-name").textContent = "rater: " + s.rater;
    $("progress").textContent = s.done ? `all ${s.total} pairs rated` : `pair ${s.position + 1} of ${s.total} · ${s.answered} answered`;
    $("bar-fill").style.width = (100 * s.answered / Math.max(1, s.total)).toFixed(1) + "%";
    document.body.dataset.position = s.done ? "done" : String(s.position);
    if (s.done) {
      for (const view of [gtView, leftView, rightView]) view.layers = [];
      for (const id of ["picture-gt", "picture-left", "picture-right"]) $(id).hidden = true;
      Viewer.redraw();
      openDialog("done", "done");
      return;
    }
    const item = s.item;
    gtView.layers = [{ graph: item.gt, color: Viewer.COLORS.gt, width: 1.4, markers: true }];
    leftView.layers = [{ graph: item.gt, color: Viewer.COLORS.gtUnder, width: 1.2, markers: false, hidden: under },
                       { graph: item.left, color: Viewer.COLORS.candidate, width: 1.4, markers: true }];
    rightView.layers = [{ graph: item.gt, color: Viewer.COLORS.gtUnder, width: 1.2, markers: false, hidden: under },
                        { graph: item.right, color: Viewer.COLORS.candidate, width: 1.4, markers: true }];
    for (const side of ["gt", "left", "right"]) {
      const img = $("picture-" + side);
      if (item.pictures[side]) { img.src = item.pictures[side]; img.hidden = false; } else { img.removeAttribute("src"); img.hidden = true; }
    }
    Viewer.redraw();
    shownAt = performance.now();
  }

  async function request(url, options) {
    const response = await fetch(url, options);
    const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    return body;
  }

  async function load() {
    state = await request("/api/state?rater=" + encodeURIComponent(rater));
    render();
  }

  async function choose(choice) {
    if (busy || dialogOpen || !state || state.done) return;
    busy = true; setMode("saving");
    const responseMs = Math.round(performance.now() - shownAt);
    try {
      state = await request("/api/answer", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ rater, position: state.item.position, choice, response_ms: responseMs }),
      });
      setMode("rating");
      render();
      if (!state.done && state.break_every > 0 && state.answered % state.break_every === 0) openDialog("break", "break");
    } catch (error) {
      showError("Your answer was not saved: " + error.message + ". Reload the page to continue.");
    } finally {
      busy = false;
    }
  }

  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT") return;
    if (e.key === "Enter" || e.key === "Escape") { if (dialogOpen) { e.preventDefault(); closeDialog(); } return; }
    if (e.key === "?" || e.key === "h") { openDialog("instructions", "instructions"); return; }
    if (e.key === "r" || e.key === "R") { Viewer.reset(); return; }
    if (e.key === "g" || e.key === "G") { showGtUnder = !showGtUnder; Viewer.redraw(); return; }
    if (e.key in KEYS) { e.preventDefault(); if (!e.repeat) choose(KEYS[e.key]); }  // a held key answers once
  });
  for (const button of document.querySelectorAll("#choices button")) {
    button.addEventListener("click", () => { button.blur(); choose(button.dataset.choice); });
  }
  $("dialog-close").addEventListener("click", closeDialog);
  $("help-button").addEventListener("click", (e) => { e.target.blur(); openDialog("instructions", "instructions"); });
  $("name-form").addEventListener("submit", (e) => {
    e.preventDefault();
    location.search = "?rater=" + encodeURIComponent($("name-input").value.trim());
  });
  window.addEventListener("resize", size);

  async function start() {
    size();
    try {
      if (!rater) rater = (await request("/api/config")).default_rater;
      if (!rater) {
        $("dialog-body").innerHTML = "<h2>Wireframe comparison</h2><p>Enter the name you rate under; use the same name to continue later.</p>";
        $("name-form").hidden = false; $("dialog-close").hidden = true; $("overlay").hidden = false; dialogOpen = true;
        $("progress").textContent = "";
        setMode("name");
        return;
      }
      await load();
      if (!state.done) openDialog("instructions", "instructions");
    } catch (error) {
      showError(error.message);
    }
  }
  start();
})();
