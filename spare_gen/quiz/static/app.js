// The quiz page: instructions, one question at a time (keys 1-4 or clicks), training feedback, the time limit.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const VIEWS = { f: "F (front)", r: "R (right)", t: "T (top)" };
  const EXTRA = { iso: "isometric drawing" };
  let person = new URLSearchParams(location.search).get("person");
  let config = null, state = null, shownAt = 0, busy = false, ticker = null, deadline = 0;

  const esc = (text) => String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const mode = () => document.body.dataset.mode;
  const setMode = (m) => { document.body.dataset.mode = m; };

  async function request(url, options) {
    const response = await fetch(url, options);
    const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    return body;
  }

  function screen(html, m, button = true) {
    stopTimer();
    $("question").hidden = true; $("screen").hidden = false;
    $("screen-body").innerHTML = html; $("name-form").hidden = true; $("continue").hidden = !button;
    setMode(m);
  }

  function progress() {
    const s = state;
    $("person-name").textContent = "participant: " + s.person;
    $("bar-fill").style.width = (100 * s.answered / Math.max(1, s.total)).toFixed(1) + "%";
    document.body.dataset.position = s.done ? "done" : String(s.position);
    if (s.done) { $("progress").textContent = `all ${s.total} questions answered`; return; }
    const item = s.item, title = config.tasks[item.task].title;
    $("progress").textContent = `${item.phase === "training" ? "Training" : "Test"}: ${title}, question ${item.in_block} of ${item.block_size}`;
  }

  function instructions() {
    const tasks = Object.values(config.tasks).map((t) => `<li><b>${esc(t.title)}</b>: ${esc(t.instructions)}</li>`).join("");
    const back = state.answered > 0
      ? `<p class="welcome-back">Welcome back: ${state.answered} of ${state.total} questions answered; you continue where you stopped.</p>` : "";
    screen(`${back}<h2>Instructions</h2><p>${esc(config.general)}</p><div class="cube">${config.pose_cube}</div>
      <ul>${tasks}</ul><p><b>${esc(config.protocol_text)}</b></p>
      <p class="note">Answer with the keys <kbd>1</kbd> to <kbd>4</kbd> or by clicking a choice; <kbd>Enter</kbd> goes on.
      You can close the page at any time and come back with the same link.</p>`, "instructions");
  }

  function intro() {
    const item = state.item, task = config.tasks[item.task];
    const phase = item.phase === "training"
      ? "Training: after each answer you see the right one."
      : (item.time_limit_s ? `Test: ${item.time_limit_s} seconds per question; no answers are shown.` : "Test: no answers are shown.");
    screen(`<h2>${esc(task.title)}</h2><p>${esc(task.instructions)}</p><p><b>${esc(phase)}</b>
      ${item.block_size} question${item.block_size === 1 ? "" : "s"}.</p>`, "intro");
  }

  function proceed(first = false) {
    progress();
    if (state.done) { screen(`<h2>Thank you</h2><p>All ${state.total} questions are answered and saved. You can close this page.</p>`, "done", false); return; }
    if (first || state.item.block_start) intro(); else renderQuestion();
  }

  function figure(cls, inner, caption) {
    return `<figure class="${cls}">${inner}<figcaption>${esc(caption)}</figcaption></figure>`;
  }

  async function renderQuestion() {
    stopTimer(); setMode("loading-question");
    try {  // the question goes on screen now: its time starts (a reply read before an intro or feedback did not)
      state = await request("/api/state?person=" + encodeURIComponent(person));
    } catch (error) {
      screen(`<p class="error">${esc(error.message)}. Reload the page to continue.</p>`, "error", false); return;
    }
    progress();
    if (state.done) { proceed(); return; }
    const item = state.item;
    $("screen").hidden = true; $("question").hidden = false; $("feedback").hidden = true;
    $("prompt").textContent = config.tasks[item.task].instructions;
    let inputs = Object.entries(item.views).map(([v, url]) => figure("view", `<img src="${url}" alt="${VIEWS[v]}">`, VIEWS[v])).join("");
    inputs += Object.entries(item.extra).map(([k, url]) => figure("extra", `<img src="${url}" alt="${EXTRA[k] || k}">`, EXTRA[k] || k)).join("");
    if (item.pose_cube) {
      const caption = item.query_pose ? `the viewing pose: ${item.query_pose}` : "the poses to choose from";
      inputs += figure("cube", item.pose_cube, caption);
    }
    $("inputs").innerHTML = inputs;
    const choices = item.candidates.length
      ? item.candidates.map((url, k) => `<button class="choice" data-choice="${k}"><img src="${url}" alt="candidate ${k + 1}"><span class="label"><kbd>${k + 1}</kbd></span></button>`)
      : item.choice_poses.map((p, k) => `<button class="choice pose" data-choice="${k}">pose ${p} <kbd>${k + 1}</kbd></button>`);
    $("choices").innerHTML = choices.join("");
    for (const button of $("choices").querySelectorAll("button")) {
      button.addEventListener("click", () => { button.blur(); answer(Number(button.dataset.choice)); });
    }
    const images = [...document.querySelectorAll("#question img")];
    Promise.all(images.map((img) => img.decode().catch(() => null))).then(() => {
      shownAt = performance.now();
      if (item.time_limit_s) startTimer(item.time_limit_s);
      setMode("question");
    });
  }

  function startTimer(seconds) {
    deadline = shownAt + 1000 * seconds;
    $("timer").hidden = false;
    const tick = () => {
      const left = Math.max(0, deadline - performance.now());
      $("timer").textContent = `${Math.ceil(left / 1000)} s`;
      $("timer").classList.toggle("low", left < 10000);
      if (left <= 0) { stopTimer(); answer(null); }
    };
    tick(); ticker = setInterval(tick, 200);
  }

  function stopTimer() { if (ticker) clearInterval(ticker); ticker = null; $("timer").hidden = true; }

  async function answer(choice) {
    if (busy || mode() !== "question") return;
    if (choice !== null && !(choice >= 0 && choice < state.item.n_choices)) return;
    busy = true; stopTimer(); setMode("saving");
    const responseMs = Math.round(performance.now() - shownAt);
    try {
      const reply = await request("/api/answer", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ person, position: state.item.position, choice, response_ms: responseMs }),
      });
      state = reply;
      if (reply.feedback) showFeedback(reply.feedback);
      else if (reply.stored && reply.stored.timed_out) {
        progress();
        screen(`<h2>Time is up</h2><p>${choice === null ? "No answer was given in time" : "The answer came after the time limit"}: this question counts as wrong.</p>`, "timeout");
      } else proceed();
    } catch (error) {
      screen(`<p class="error">Your answer was not saved: ${esc(error.message)}. Reload the page to continue.</p>`, "error", false);
    } finally {
      busy = false;
    }
  }

  function showFeedback(f) {
    const buttons = [...$("choices").querySelectorAll("button")];
    buttons[f.answer].classList.add("right");
    if (f.choice !== null && !f.correct) buttons[f.choice].classList.add("wrong");
    const text = f.correct ? "Right." : `Not right: the answer is ${f.answer + 1}.`;
    $("feedback").innerHTML = `${esc(text)} <span class="note">Press <kbd>Enter</kbd> for the next question.</span>`;
    $("feedback").className = f.correct ? "right" : "wrong"; $("feedback").hidden = false;
    setMode("feedback");
  }

  function next() {
    const m = mode();
    if (m === "consent") instructions();
    else if (m === "instructions") proceed(true);
    else if (m === "intro") renderQuestion();
    else if (m === "feedback" || m === "timeout") proceed();
  }

  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT") return;
    if (e.key === "Enter") { e.preventDefault(); next(); return; }
    if (/^[1-9]$/.test(e.key) && !e.repeat) { e.preventDefault(); answer(Number(e.key) - 1); }  // a held key answers once
  });
  $("continue").addEventListener("click", () => { $("continue").blur(); next(); });
  $("name-form").addEventListener("submit", (e) => {
    e.preventDefault();
    location.search = "?person=" + encodeURIComponent($("name-input").value.trim());
  });

  async function start() {
    try {
      config = await request("/api/config");
      $("title").textContent = `Spatial reasoning questions (${config.protocol})`;
      if (!person) person = config.default_person;
      if (!person) {
        screen("<h2>Spatial reasoning questions</h2><p>Enter the name or participant code you were given; use the same one to continue later.</p>", "name", false);
        $("name-form").hidden = false; $("progress").textContent = ""; $("name-input").focus();
        return;
      }
      state = await request("/api/state?person=" + encodeURIComponent(person));
      progress();
      if (state.done) { proceed(); return; }
      if (config.consent && state.answered === 0) {
        screen(`<h2>Consent</h2><div class="consent">${config.consent}</div><p>Press <b>Continue</b> to agree and go on.</p>`, "consent");
      } else instructions();
    } catch (error) {
      screen(`<p class="error">${esc(error.message)}</p>`, "error", false);
    }
  }
  start();
})();
