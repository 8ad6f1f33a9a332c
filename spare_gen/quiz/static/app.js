// The quiz page: consent, instructions, one question at a time (keys 1-4 or clicks), training feedback, the time
// limit. A question's clock starts when its drawings are on screen: the page then tells the server (/api/shown), which
// keeps the time, so a reload shows the time left; nothing else is ever timed.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const VIEWS = { f: "F (front)", r: "R (right)", t: "T (top)" };
  const EXTRA = { iso: "isometric drawing" };
  let person = new URLSearchParams(location.search).get("person");
  let config = null, state = null, shownAt = 0, busy = false, ticker = null, deadline = 0, saved = 0;

  const esc = (text) => String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const mode = () => document.body.dataset.mode;
  const setMode = (m) => { document.body.dataset.mode = m; };

  class Unreachable extends Error {}  // no reply at all: the server is down or the network is cut

  async function request(url, options) {
    let response;
    try {
      response = await fetch(url, options);
    } catch (error) {
      throw new Unreachable("the server did not reply");
    }
    const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    return body;
  }

  const post = (url, body) => request(url, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });

  function screen(html, m, button = true) {
    stopTimer();
    $("question").hidden = true; $("screen").hidden = false;
    $("screen-body").innerHTML = html; $("name-form").hidden = true; $("continue").hidden = !button;
    $("decline").hidden = true; $("continue").firstChild.textContent = "Continue ";
    setMode(m);
  }

  function progress() {
    const s = state;
    saved = s.answered;
    $("person-name").textContent = "participant: " + s.person;
    $("bar-fill").style.width = (100 * s.answered / Math.max(1, s.total)).toFixed(1) + "%";
    document.body.dataset.position = s.done ? "done" : String(s.position);
    if (s.done) { $("progress").textContent = `all ${s.total} questions answered`; return; }
    if (!s.item) { $("progress").textContent = ""; return; }  // before consent: no plan yet
    const item = s.item, title = config.tasks[item.task].title;
    $("progress").textContent = `${item.phase === "training" ? "Training" : "Test"}: ${title}, question ${item.in_block} of ${item.block_size}`;
  }

  function consent() {
    screen(`<h2>Consent</h2><div class="consent">${config.consent}</div>
      <p>Press <b>I agree</b> to take part, or <b>I do not agree</b> to leave: then nothing about you is stored.</p>`, "consent");
    $("continue").firstChild.textContent = "I agree "; $("decline").hidden = false;
  }

  async function agree() {
    setMode("saving");
    try {
      state = await post("/api/consent", { person, consent_sha256: config.consent_sha256 });
    } catch (error) {
      screen(`<p class="error">Your agreement was not recorded: ${esc(error.message)}. Reload the page to try again.</p>`, "error", false);
      return;
    }
    progress(); instructions();
  }

  function decline() {
    $("progress").textContent = "";
    screen(`<h2>You did not agree</h2><p>Thank you for your time. Nothing about you was stored: no name, no answer.
      You can close this page.</p>`, "declined", false);
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
    const labels = item.choice_labels;  // the words the feedback uses too
    const choices = item.candidates.length
      ? item.candidates.map((url, k) => `<button class="choice" data-choice="${k}"><img src="${url}" alt="${esc(labels[k])}"><span class="label">${esc(labels[k])} <kbd>${k + 1}</kbd></span></button>`)
      : labels.map((label, k) => `<button class="choice pose" data-choice="${k}">${esc(label)} <kbd>${k + 1}</kbd></button>`);
    $("choices").innerHTML = choices.join("");
    for (const button of $("choices").querySelectorAll("button")) {
      button.addEventListener("click", () => { button.blur(); answer(Number(button.dataset.choice)); });
    }
    const images = [...document.querySelectorAll("#question img")];
    await Promise.all(images.map((img) => img.decode().catch(() => null)));
    let shown;
    try {  // every drawing is on screen: the clock starts now (or goes on, after a reload), on the server's side
      shown = await post("/api/shown", { person, position: item.position });
    } catch (error) {
      screen(`<p class="error">${esc(error.message)}. Reload the page to continue.</p>`, "error", false); return;
    }
    const now = performance.now();
    shownAt = now - 1000 * shown.elapsed_s;  // a reload: the time since the first showing counts
    setMode("question");
    if (shown.time_limit_s) {
      if (shown.time_left_s <= 0) { answer(null); return; }
      startTimer(now + 1000 * shown.time_left_s);
    }
  }

  function startTimer(until) {
    deadline = until;
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
      const reply = await post("/api/answer", { person, position: state.item.position, choice, response_ms: responseMs });
      state = reply;
      if (reply.feedback) showFeedback(reply.feedback);
      else if (reply.stored && reply.stored.timed_out) {
        progress();
        screen(`<h2>Time is up</h2><p>${choice === null ? "No answer was given in time" : "The answer came after the time limit"}: this question counts as wrong.</p>`, "timeout");
      } else proceed();
    } catch (error) {
      const before = saved ? `Your ${saved} earlier answer${saved === 1 ? " is" : "s are"} saved. ` : "";
      if (error instanceof Unreachable) {  // the answer may or may not have reached the disk: say so
        screen(`<p class="error">The server did not reply, so this answer may not have been saved. ${before}
          Reload the page when the server is back: you continue where your saved answers end.</p>`, "error", false);
      } else {
        screen(`<p class="error">This answer was not saved: ${esc(error.message)}. ${before}Reload the page to continue.</p>`, "error", false);
      }
    } finally {
      busy = false;
    }
  }

  function showFeedback(f) {
    const buttons = [...$("choices").querySelectorAll("button")];
    buttons[f.answer].classList.add("right");
    if (f.choice !== null && !f.correct) buttons[f.choice].classList.add("wrong");
    const key = (k) => `${f[k]} (key ${f[k === "answer_label" ? "answer" : "choice"] + 1})`;
    const text = f.correct ? `Right: ${key("answer_label")}.`
      : f.choice === null ? `No answer: the answer is ${key("answer_label")}.`
      : `Not right: the answer is ${key("answer_label")}; you chose ${key("choice_label")}.`;
    $("feedback").innerHTML = `${esc(text)} <span class="note">Press <kbd>Enter</kbd> for the next question.</span>`;
    $("feedback").className = f.correct ? "right" : "wrong"; $("feedback").hidden = false;
    setMode("feedback");
  }

  function next() {
    const m = mode();
    if (m === "consent") agree();
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
  $("decline").addEventListener("click", () => { $("decline").blur(); if (mode() === "consent") decline(); });
  $("name-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const params = new URLSearchParams(location.search);  // the token stays: the link works in another browser too
    params.set("person", $("name-input").value.trim());
    location.search = "?" + params.toString();
  });

  async function start() {
    try {
      config = await request("/api/config");
      $("title").textContent = `Spatial reasoning questions (${config.protocol})`;
      if (!person) person = config.default_person;
      if (!person) {
        screen(`<h2>Spatial reasoning questions</h2><p>Enter the participant code you were given (not your name);
          use the same one to continue later.</p>`, "name", false);
        $("name-form").hidden = false; $("progress").textContent = ""; $("name-input").focus();
        return;
      }
      state = await request("/api/state?person=" + encodeURIComponent(person));
      progress();
      if (state.done) { proceed(); return; }
      if (state.consent_needed) consent();
      else if (state.item && state.item.shown) renderQuestion();  // back to the question on screen: its clock goes on
      else instructions();
    } catch (error) {
      screen(`<p class="error">${esc(error.message)}</p>`, "error", false);
    }
  }
  start();
})();
