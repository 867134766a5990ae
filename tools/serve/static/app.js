/* app.js: the browser front-end of `gomoku serve` (plain ES2020, no framework, no build step).
 *
 * What it does:
 *  - on load, creates a game (POST /games) with the new-game form's defaults; "New game" (or `n` on
 *    the board) creates another and deletes the previous one;
 *  - draws the board in the SVG #board: wood, grid, star points, column letters and row numbers
 *    (row 1 at the top, as in the move names), stones (circle.stone.black|white[data-x][data-y]),
 *    the last-move marker, the winning line (class `win` on its stones) and, under renju, the
 *    points forbidden for Black (g.forbidden, a red cross with a <title> naming the kind);
 *  - one invisible hit target per intersection (rect.pt[data-x][data-y]): clicking plays there
 *    (POST /games/{id}/move, with the chosen strength as `visits` or `time_ms`);
 *    while a request is in flight body[data-busy="1"] is set and clicks do nothing;
 *  - Undo (POST /games/{id}/undo), SGF / PSQ download links (#dl-sgf, #dl-psq);
 *  - the analysis overlay (#overlay, #overlay-kind): a heatmap (rect.heat) of the engine's last
 *    candidates (visit shares) or of the network's policy (POST /games/{id}/analyze), the expected
 *    continuation (text.pv: the engine's pv without its first move, the one played) and the
 *    win-rate bar (#winrate, Black's chance);
 *  - keyboard play: arrow keys move the cursor (rect.cursor) on the focused board, Enter or Space
 *    plays at it, `u` undoes, `n` starts a new game.
 * Coordinates: x = column from the left, y = row from the top, both 0-based; "h8" is x 7, y 7.
 */
"use strict";

(() => {
  const SVG_NS = "http://www.w3.org/2000/svg";
  const CELL = 40;            // grid spacing in SVG units
  const M_LO = 46;            // margin left and top (room for the coordinates)
  const M_HI = 26;            // margin right and bottom
  const STONE_R = CELL * 0.46;
  const REQUEST_TIMEOUT_MS = 120000;
  const POLICY_MIN = 0.005;   // policy values below this get no heat square
  const LETTERS = "abcdefghijklmnopqrstuvwxyz";

  const $ = (id) => document.getElementById(id);
  const ui = {
    board: $("board"), status: $("status"), info: $("info"), cursorInfo: $("cursor-info"),
    form: $("new-game-form"), size: $("size"), rule: $("rule"), you: $("you"),
    strength: $("strength"), undo: $("undo"), sgf: $("dl-sgf"), psq: $("dl-psq"),
    overlay: $("overlay"), overlayKind: $("overlay-kind"), winrate: $("winrate"),
    analysisInfo: $("analysis-info"), engineInfo: $("engine-info"), moves: $("moves"),
    engineName: $("engine-name"),
  };

  const app = {
    game: null,         // the last GameState from the server
    gen: 0,             // bumped by each new game: answers to older requests are dropped
    busy: false,        // a request is in flight
    busyLabel: "",
    controller: null,   // AbortController of the request in flight
    expired: false,     // the server no longer knows the game (404 no_such_game)
    message: null,      // a transient message (an error) shown instead of the turn
    pending: null,      // {x, y, color}: the player's stone, drawn while the engine thinks
    creating: false,    // a POST /games is in flight (no second one meanwhile)
    preview: null,      // {x, y}: a touch screen's first tap, played by a second tap there
    stateSeq: 0,        // counts the GameStates taken (a resync older than the last is dropped)
    cursor: { x: 7, y: 7 },
    analysis: null,     // {key, data}: /analyze's answer for the position `key`
    layers: null,       // the SVG groups, built by buildBoard()
    cursorEl: null,     // rect.cursor
    pts: new Map(),     // "x,y" -> rect.pt
  };

  // ------------------------------------------------------------------------------ helpers
  const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
  const other = (c) => (c === "black" ? "white" : "black");
  const px = (x) => M_LO + x * CELL;
  const py = (y) => M_LO + y * CELL;
  const key = (x, y) => `${x},${y}`;
  const pct = (p) => `${Math.round(p * 100)}%`;

  const coarsePointer = window.matchMedia("(pointer: coarse)");

  function colName(x) { return x < LETTERS.length ? LETTERS[x] : String(x + 1); }
  function moveName(x, y) {
    const w = app.game ? app.game.width : 15;
    return w <= LETTERS.length ? `${LETTERS[x]}${y + 1}` : `${x},${y}`;
  }

  function svg(tag, attrs = {}, parent = null) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (parent) parent.appendChild(node);
    return node;
  }

  /** The stones on the board: Map "x,y" -> colour. */
  function occupancy() {
    const m = new Map();
    if (app.game) for (const mv of app.game.moves) m.set(key(mv.x, mv.y), mv.color);
    return m;
  }

  function lastMove() {
    return (app.game && app.game.moves[app.game.moves.length - 1]) || null;
  }

  /** The engine's last reply, if it is still the last move on the board (not undone). */
  function currentEngine() {
    const g = app.game, last = lastMove();
    if (!g || !g.engine || !last) return null;
    return g.engine.x === last.x && g.engine.y === last.y ? g.engine : null;
  }

  function forbiddenAt(x, y) {
    const f = app.game && app.game.forbidden;
    return (f || []).find((p) => p.x === x && p.y === y) || null;
  }

  function canPlay() {
    const g = app.game;
    return !!g && !app.busy && !app.expired && g.status === "playing" && g.to_move === g.you;
  }

  function strength() {
    const [kind, value] = ui.strength.value.split(":");
    return kind === "time" ? { time_ms: Number(value) } : { visits: Number(value) };
  }

  // ---------------------------------------------------------------------------------- API
  class ApiError extends Error {
    constructor(status, code, message, retryAfter) {
      super(message);
      Object.assign(this, { status, code, retryAfter });
    }
  }

  /** fetch() a JSON endpoint; resolves to the parsed answer (null for 204), throws ApiError. */
  async function api(method, path, body, signal) {
    const opts = { method, headers: { Accept: "application/json" }, signal };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, opts);
    } catch (e) {
      if (e.name === "AbortError") throw e;
      throw new ApiError(0, "network", "Cannot reach the server.");
    }
    if (res.status === 204) return null;
    let data = null;
    try { data = await res.json(); } catch (_) { /* not JSON */ }
    if (!res.ok) {
      const code = (data && data.error) || `http_${res.status}`;
      let msg = data && (data.message || (typeof data.detail === "string" ? data.detail : null));
      if (!msg) msg = `The server answered ${res.status} ${res.statusText}.`;
      throw new ApiError(res.status, code, msg, res.headers.get("Retry-After"));
    }
    return data;
  }

  function setBusy(on, label = "") {
    app.busy = on;
    app.busyLabel = label;
    if (on) document.body.setAttribute("data-busy", "1");
    else document.body.removeAttribute("data-busy");
  }

  /**
   * Runs one request that answers a GameState (fn(signal) -> Promise<GameState>) with the page
   * busy: takes the state, fetches the policy analysis if the overlay needs it (still busy, so
   * that body[data-busy] covers everything drawn), draws. Resolves to true on success.
   */
  async function run(label, fn) {
    const gen = app.gen;
    const ctl = new AbortController();
    app.controller = ctl;
    setBusy(true, label);
    renderStatus();
    const timer = setTimeout(() => ctl.abort(), REQUEST_TIMEOUT_MS);
    try {
      const state = await fn(ctl.signal);
      if (gen !== app.gen) return false;
      setState(state);
      if (needAnalysis()) await loadAnalysis(ctl.signal);
      return gen === app.gen;
    } catch (e) {
      if (gen === app.gen) showError(e);
      return false;
    } finally {
      clearTimeout(timer);
      if (gen === app.gen) {
        app.pending = null;
        app.controller = null;
        setBusy(false);
        render();
      }
    }
  }

  function showError(e) {
    if (e.name === "AbortError") {
      app.message = "The server took too long to answer.";
    } else if (e.code === "no_such_game") {
      app.expired = true;
      app.message = "Sorry, the game expired: press New game to start another.";
    } else if (e.code === "busy" || e.status === 503) {
      const s = Number(e.retryAfter);
      app.message = `The server is busy; try again${s > 0 ? ` in ${s} s` : " shortly"}.`;
    } else if (e.code === "game_busy") {
      app.message = "The engine is still busy with this game; try again in a moment.";
    } else {
      app.message = e.message || "Something went wrong.";
    }
    // After any refusal the page takes the server's position again (it is the reference).
    if (app.game && !app.expired) resync();
  }

  async function resync() {
    const gen = app.gen, msg = app.message, seq = app.stateSeq;
    try {
      const state = await api("GET", `/games/${app.game.id}`);
      // dropped when anything newer arrived meanwhile (a move answered after this GET left)
      if (gen !== app.gen || app.busy || seq !== app.stateSeq) return;
      setState(state);
      app.message = msg;
      render();
    } catch (_) { /* keep what we have */ }
  }

  function setState(state) {
    const old = app.game;
    const resized = !old || old.width !== state.width || old.height !== state.height;
    if (!old || old.id !== state.id) {
      app.analysis = null;
      app.cursor = { x: Math.floor((state.width - 1) / 2), y: Math.floor((state.height - 1) / 2) };
    }
    app.game = state;
    app.stateSeq += 1;
    app.expired = false;
    app.message = null;
    app.preview = null;
    if (resized) buildBoard(state.width, state.height);
    const base = `/games/${encodeURIComponent(state.id)}`;
    ui.sgf.href = `${base}/sgf`;
    ui.psq.href = `${base}/psq`;
    // the game's id in the address: a reload (or the link) resumes this game
    if (location.hash !== `#game=${state.id}`) history.replaceState(null, "", `#game=${state.id}`);
  }

  // ------------------------------------------------------------------------------ actions
  function newGame() {
    const body = {
      size: Number(ui.size.value), rule: ui.rule.value, you: ui.you.value, ...strength(),
    };
    if (app.creating) return;                     // one new game at a time (no orphans)
    const previous = app.game && !app.expired ? app.game.id : null;
    if (app.controller) app.controller.abort();   // drop whatever was in flight
    app.gen += 1;
    app.pending = null;
    app.creating = true;
    const label = body.you === "white" ? "engine is thinking…" : "starting a new game…";
    run(label, (signal) => api("POST", "/games", body, signal)).then((ok) => {
      if (ok && previous && previous !== app.game.id) {
        api("DELETE", `/games/${encodeURIComponent(previous)}`).catch(() => {});
      }
    }).finally(() => { app.creating = false; });
  }

  function play(x, y) {
    const g = app.game;
    if (!canPlay()) { renderStatus(); return; }       // not our turn, thinking, over, expired
    const occupied = occupancy().get(key(x, y));
    if (occupied) {
      app.message = `${moveName(x, y)} is already taken.`;
      renderStatus();
      return;
    }
    // A forbidden point goes to the server too (it explains why); it gets no provisional stone.
    if (!forbiddenAt(x, y)) app.pending = { x, y, color: g.you };
    const body = { move: [x, y], ...strength() };
    run("engine is thinking…",
      (signal) => api("POST", `/games/${encodeURIComponent(g.id)}/move`, body, signal));
  }

  function undo() {
    const g = app.game;
    if (!g || app.busy) return;
    if (app.expired) { renderStatus(); return; }
    run("taking back…", (signal) => api("POST", `/games/${encodeURIComponent(g.id)}/undo`,
      undefined, signal));
  }

  // -------------------------------------------------------------------------- analysis
  function overlayOn() { return ui.overlay.checked; }
  function positionKey() {
    const g = app.game, last = lastMove();
    return g ? `${g.id}:${g.moves.length}:${last ? key(last.x, last.y) : "-"}` : "";
  }
  function needAnalysis() {
    const g = app.game;
    return !!g && overlayOn() && ui.overlayKind.value === "policy" && g.status === "playing"
      && !app.expired && (!app.analysis || app.analysis.key !== positionKey());
  }

  /** Fetches /analyze for the current position into app.analysis (its errors only noted). */
  async function loadAnalysis(signal) {
    const k = positionKey();
    try {
      const data = await api("POST", `/games/${encodeURIComponent(app.game.id)}/analyze`,
        undefined, signal);
      app.analysis = { key: k, data };
    } catch (e) {
      if (e.name === "AbortError") throw e;
      if (e.code === "no_such_game") throw e;
      app.analysis = { key: k, data: null, error: e.message };
    }
  }

  /** The overlay's switches changed: fetch what is missing (busy meanwhile), then draw. */
  function overlayChanged() {
    if (needAnalysis() && !app.busy) {
      const gen = app.gen;
      const ctl = new AbortController();
      app.controller = ctl;
      setBusy(true, "analysing…");
      renderStatus();
      const timer = setTimeout(() => ctl.abort(), REQUEST_TIMEOUT_MS);
      loadAnalysis(ctl.signal).catch((e) => { if (gen === app.gen) showError(e); }).finally(() => {
        clearTimeout(timer);
        if (gen !== app.gen) return;
        app.controller = null;
        setBusy(false);
        render();
      });
    } else {
      render();
    }
  }

  // ------------------------------------------------------------------------------ drawing
  /** Builds the static board (wood, grid, stars, coordinates, hit targets) for w x h points. */
  function buildBoard(w, h) {
    const b = ui.board;
    b.replaceChildren();
    const vw = M_LO + (w - 1) * CELL + M_HI, vh = M_LO + (h - 1) * CELL + M_HI;
    b.setAttribute("viewBox", `0 0 ${vw} ${vh}`);
    b.setAttribute("aria-label", `Gomoku board, ${w} by ${h}. Arrow keys move the cursor, `
      + "Enter or Space plays, U undoes, N starts a new game.");

    const defs = svg("defs", {}, b);
    const grad = (id, inner, outer) => {
      const g = svg("radialGradient", { id, cx: "35%", cy: "35%", r: "65%" }, defs);
      svg("stop", { offset: "0%", "stop-color": inner }, g);
      svg("stop", { offset: "100%", "stop-color": outer }, g);
    };
    grad("stone-black", "#6b6b6b", "#0b0b0b");
    grad("stone-white", "#ffffff", "#cfcfc8");

    svg("rect", { class: "wood", x: 0, y: 0, width: vw, height: vh, rx: 10 }, b);
    const grid = svg("g", { class: "grid" }, b);
    for (let x = 0; x < w; x++) {
      svg("line", { x1: px(x), y1: py(0), x2: px(x), y2: py(h - 1) }, grid);
    }
    for (let y = 0; y < h; y++) {
      svg("line", { x1: px(0), y1: py(y), x2: px(w - 1), y2: py(y) }, grid);
    }
    svg("rect", { class: "frame", x: px(0), y: py(0), width: (w - 1) * CELL,
      height: (h - 1) * CELL }, grid);
    for (const [sx, sy] of starPoints(w, h)) {
      svg("circle", { class: "star", cx: px(sx), cy: py(sy), r: 4 }, grid);
    }
    const labels = svg("g", { class: "coords", "aria-hidden": "true" }, b);
    for (let x = 0; x < w; x++) {
      svg("text", { x: px(x), y: M_LO - 24 }, labels).textContent = colName(x);
    }
    for (let y = 0; y < h; y++) {
      svg("text", { x: M_LO - 26, y: py(y) }, labels).textContent = String(y + 1);
    }

    const layer = (cls) => svg("g", { class: cls }, b);
    app.layers = {
      heat: layer("heat-layer"), stones: layer("stones"), marks: layer("marks"),
      forbidden: layer("forbidden-layer"), pv: layer("pv-layer"), cursor: layer("cursor-layer"),
      hits: layer("hits"),
    };
    app.cursorEl = svg("rect", { class: "cursor", width: CELL, height: CELL, rx: 6 },
      app.layers.cursor);
    app.pts.clear();
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const r = svg("rect", { class: "pt", "data-x": x, "data-y": y, x: px(x) - CELL / 2,
          y: py(y) - CELL / 2, width: CELL, height: CELL, rx: CELL / 2 }, app.layers.hits);
        app.pts.set(key(x, y), r);
      }
    }
  }

  function starPoints(w, h) {
    const axis = (n) => {
      if (n < 9) return n % 2 ? [(n - 1) / 2] : [];
      const e = n >= 13 ? 3 : 2;
      return n % 2 ? [e, (n - 1) / 2, n - 1 - e] : [e, n - 1 - e];
    };
    const pts = [];
    const xs = axis(w), ys = axis(h);
    for (const x of xs) for (const y of ys) {
      const midX = w % 2 === 1 && x === (w - 1) / 2, midY = h % 2 === 1 && y === (h - 1) / 2;
      if (midX !== midY && Math.min(w, h) < 19) continue;   // small boards: corners + centre
      pts.push([x, y]);
    }
    return pts;
  }

  function render() {
    renderBoard();
    renderStatus();
    renderInfo();
    renderMoves();
    renderOverlay();
  }

  function renderBoard() {
    const g = app.game, L = app.layers;
    if (!g || !L) return;
    const occ = occupancy();
    const win = new Set((g.winning_line || []).map((p) => key(p.x, p.y)));

    L.stones.replaceChildren();
    for (const mv of g.moves) {
      const cls = `stone ${mv.color}${win.has(key(mv.x, mv.y)) ? " win" : ""}`;
      svg("circle", { class: cls, "data-x": mv.x, "data-y": mv.y, cx: px(mv.x), cy: py(mv.y),
        r: STONE_R, fill: `url(#stone-${mv.color})` }, L.stones);
    }
    if (app.pending) {
      const p = app.pending;
      svg("circle", { class: `pending ${p.color}`, "data-x": p.x, "data-y": p.y, cx: px(p.x),
        cy: py(p.y), r: STONE_R, fill: `url(#stone-${p.color})` }, L.stones);
    } else if (app.preview && canPlay() && !occ.get(key(app.preview.x, app.preview.y))) {
      const p = app.preview;   // a touch screen's first tap (see the click handler)
      svg("circle", { class: `preview ${g.you}`, "data-x": p.x, "data-y": p.y, cx: px(p.x),
        cy: py(p.y), r: STONE_R, fill: `url(#stone-${g.you})` }, L.stones);
    }

    L.marks.replaceChildren();
    if (win.size >= 2) {
      const line = [...g.winning_line].sort((a, b) => a.x - b.x || a.y - b.y);
      const a = line[0], z = line[line.length - 1];
      svg("line", { class: "winline", x1: px(a.x), y1: py(a.y), x2: px(z.x), y2: py(z.y) },
        L.marks);
    }
    const last = lastMove();
    if (last) {
      svg("circle", { class: `last on-${last.color}`, "data-x": last.x, "data-y": last.y,
        cx: px(last.x), cy: py(last.y), r: 5.5 }, L.marks);
    }

    // Renju: the points forbidden for Black (the server lists them when Black is to move).
    L.forbidden.replaceChildren();
    const forb = g.status === "playing" ? (g.forbidden || []) : [];
    for (const f of forb) {
      const grp = svg("g", { class: "forbidden", "data-x": f.x, "data-y": f.y }, L.forbidden);
      svg("title", {}, grp).textContent = `${f.move}: forbidden for Black (${f.kind})`;
      const d = CELL * 0.2, cx = px(f.x), cy = py(f.y);
      svg("path", { d: `M${cx - d} ${cy - d}L${cx + d} ${cy + d}M${cx + d} ${cy - d}`
        + `L${cx - d} ${cy + d}` }, grp);
    }

    // Hit targets: occupancy classes (for the hover preview) and tooltips on forbidden points.
    for (const [k, r] of app.pts) {
      r.classList.toggle("occ", occ.has(k));
      const f = forb.find((p) => key(p.x, p.y) === k);
      r.classList.toggle("forb", !!f);
      if (f) {
        if (!r.firstChild) svg("title", {}, r);
        r.firstChild.textContent = `${f.move}: forbidden for Black (${f.kind})`;
      } else if (r.firstChild) {
        r.replaceChildren();
      }
    }
    ui.board.classList.toggle("you-black", g.you === "black");
    ui.board.classList.toggle("you-white", g.you === "white");
    placeCursor();
  }

  function placeCursor() {
    if (!app.cursorEl) return;
    const { x, y } = app.cursor;
    app.cursorEl.setAttribute("x", px(x) - CELL / 2);
    app.cursorEl.setAttribute("y", py(y) - CELL / 2);
    app.cursorEl.setAttribute("data-x", x);
    app.cursorEl.setAttribute("data-y", y);
  }

  function statusText() {
    const g = app.game;
    if (app.busy) return app.busyLabel || "engine is thinking…";
    if (app.message) return app.message;
    if (!g) return "No game. Press New game.";
    if (g.status === "black_won") return "Black wins";
    if (g.status === "white_won") return "White wins";
    if (g.status === "draw") return "Draw";
    if (g.to_move === g.you) {
      // the engine's reply is announced with the turn (the status line is a live region)
      const e = g.engine, last = lastMove();
      const said = e && last && e.x === last.x && e.y === last.y ? `Engine played ${e.move}. ` : "";
      return `${said}Your move (${cap(g.you)})`;
    }
    return `${cap(g.to_move)} to move (engine)`;
  }

  function renderStatus() {
    const text = statusText();
    if (ui.status.textContent !== text) ui.status.textContent = text;   // re-announce changes only
    ui.status.classList.toggle("error", !app.busy && !!app.message);
    const g = app.game;
    ui.status.classList.toggle("over", !!g && !app.busy && !app.message && g.status !== "playing");
    ui.board.classList.toggle("can-play", canPlay());
    const mine = !!g && g.moves.some((m) => m.color === g.you);
    ui.undo.disabled = app.busy || app.expired || !mine;
  }

  function renderInfo() {
    const g = app.game;
    if (!g) return;
    let text = `${cap(g.rule)} · ${g.width}×${g.height} · you: ${cap(g.you)}, `
      + `engine: ${cap(other(g.you))}`;
    if (g.status !== "playing") {
      const winner = g.status === "black_won" ? "black" : g.status === "white_won" ? "white" : "";
      text += winner ? (winner === g.you ? " · you won" : " · the engine won") : " · drawn";
    }
    ui.info.textContent = text;

    const e = g.engine;
    if (e) {
      const bits = [`Engine played ${e.move}`];
      if (e.source) bits.push(e.source);
      if (typeof e.visits === "number") bits.push(`${e.visits} visits`);
      if (typeof e.elapsed_ms === "number") bits.push(`${(e.elapsed_ms / 1000).toFixed(2)} s`);
      ui.engineInfo.textContent = bits.join(" · ");
    } else {
      ui.engineInfo.textContent = "";
    }
  }

  function renderMoves() {
    const g = app.game;
    const ol = ui.moves;
    ol.replaceChildren();
    if (!g) return;
    for (const mv of g.moves) {
      const li = document.createElement("li");
      li.className = mv.color;
      li.textContent = mv.move;
      ol.appendChild(li);
    }
    ol.scrollTop = ol.scrollHeight;
  }

  /** The analysis overlay: heat squares, the expected continuation, the win-rate bar. */
  function renderOverlay() {
    const g = app.game, L = app.layers;
    if (!L) return;
    L.heat.replaceChildren();
    L.pv.replaceChildren();
    const on = overlayOn() && !!g;
    ui.winrate.hidden = !on;
    ui.analysisInfo.hidden = !on;
    if (!on) return;

    const occ = occupancy();
    const kind = ui.overlayKind.value;
    const eng = currentEngine();
    let cells = [];            // [{x, y, p}] on empty points
    let infoText = "";
    if (kind === "visits") {
      const cands = (eng && eng.candidates) || [];
      cells = cands.filter((c) => !occ.has(key(c.x, c.y)))
        .map((c) => ({ x: c.x, y: c.y, p: c.probability || 0 }));
      if (cands.length) {
        const best = cands.reduce((a, b) => ((b.probability || 0) > (a.probability || 0) ? b : a));
        infoText = `Engine's top candidate: ${best.move} (${pct(best.probability || 0)}`
          + `${typeof best.visits === "number" ? `, ${best.visits} visits` : ""})`;
      } else {
        infoText = "No engine candidates for this position yet.";
      }
    } else {
      const a = app.analysis && app.analysis.key === positionKey() ? app.analysis : null;
      if (a && a.data && Array.isArray(a.data.policy)) {
        a.data.policy.forEach((row, y) => row.forEach((p, x) => {
          if (p >= POLICY_MIN && !occ.has(key(x, y))) cells.push({ x, y, p });
        }));
        const top = cells.reduce((b, c) => (!b || c.p > b.p ? c : b), null);
        infoText = top ? `Network's top move: ${moveName(top.x, top.y)} (${pct(top.p)})`
          : "The network has no move here.";
      } else if (a && a.error) {
        infoText = `Analysis unavailable: ${a.error}`;
      } else {
        infoText = g.status === "playing" ? "No analysis yet." : "The game is over.";
      }
    }
    // The expected continuation: the engine's pv after the move it played.
    const pvAt = new Set();
    if (eng && Array.isArray(eng.pv) && g.status === "playing") {
      let colour = g.you;      // pv[1] is the reply the engine expects from you
      for (const p of eng.pv.slice(1)) {
        if (occ.has(key(p.x, p.y)) || pvAt.has(key(p.x, p.y))) break;
        pvAt.add(key(p.x, p.y));
        svg("text", { class: `pv ${colour}`, "data-x": p.x, "data-y": p.y, x: px(p.x),
          y: py(p.y) }, L.pv).textContent = String(pvAt.size);
        colour = other(colour);
      }
    }
    drawHeat(cells, pvAt);
    ui.analysisInfo.textContent = infoText;
    renderWinrate(eng);
  }

  function drawHeat(cells, pvAt) {
    if (!cells.length) return;
    const max = Math.max(...cells.map((c) => c.p));
    const top = cells.find((c) => c.p === max);
    const s = CELL * 0.86;
    for (const c of cells) {
      const rel = max > 0 ? c.p / max : 0;
      const r = svg("rect", { class: c === top ? "heat top" : "heat", "data-x": c.x, "data-y": c.y,
        x: px(c.x) - s / 2, y: py(c.y) - s / 2, width: s, height: s, rx: 6,
        "fill-opacity": (0.18 + 0.62 * Math.sqrt(rel)).toFixed(3) }, app.layers.heat);
      svg("title", {}, r).textContent = `${moveName(c.x, c.y)}: ${(c.p * 100).toFixed(1)}%`;
      if (c.p >= 0.01 && !pvAt.has(key(c.x, c.y))) {      // the percentage, unless a pv number
        svg("text", { class: "heat-label", x: px(c.x), y: py(c.y) }, app.layers.heat)
          .textContent = String(Math.round(c.p * 100));
      }
    }
  }

  /** Black's chance: from the engine's last reply (its own side), else from /analyze. */
  function renderWinrate(eng) {
    const g = app.game;
    let black = null, source = "";
    if (g.status === "black_won") black = 1;
    else if (g.status === "white_won") black = 0;
    else if (g.status === "draw") black = 0.5;
    else if (eng && typeof eng.winrate === "number") {
      black = other(g.you) === "black" ? eng.winrate : 1 - eng.winrate;
      source = "engine";
    } else if (app.analysis && app.analysis.key === positionKey() && app.analysis.data
      && typeof app.analysis.data.winrate === "number") {
      const a = app.analysis.data;
      black = a.side_to_move === "white" ? 1 - a.winrate : a.winrate;
      source = "network";
    }
    const fill = ui.winrate.querySelector(".wr-fill");
    const text = ui.winrate.querySelector(".wr-text");
    if (black === null) {
      fill.style.width = "50%";
      text.textContent = "Black –";
      ui.winrate.setAttribute("aria-valuetext", "no evaluation yet");
      ui.winrate.removeAttribute("aria-valuenow");
      ui.winrate.title = "No evaluation yet";
      return;
    }
    const b = Math.round(Math.min(1, Math.max(0, black)) * 100);
    fill.style.width = `${b}%`;
    text.textContent = `Black ${b}%`;
    ui.winrate.setAttribute("aria-valuenow", String(b));
    ui.winrate.setAttribute("aria-valuetext", `Black ${b}%, White ${100 - b}%`);
    ui.winrate.title = `Black ${b}%, White ${100 - b}%${source ? ` (${source})` : ""}`;
  }

  // ---------------------------------------------------------------------------- keyboard
  function describeCursor() {
    const { x, y } = app.cursor;
    const stone = occupancy().get(key(x, y));
    const f = forbiddenAt(x, y);
    const what = stone ? `${stone} stone` : f ? `forbidden for Black (${f.kind})` : "empty";
    ui.cursorInfo.textContent = `${moveName(x, y)}, ${what}`;
  }

  function onBoardKey(ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey || !app.game) return;
    const step = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const d = step[ev.key];
    if (d) {
      ev.preventDefault();
      const c = app.cursor;
      c.x = Math.min(app.game.width - 1, Math.max(0, c.x + d[0]));
      c.y = Math.min(app.game.height - 1, Math.max(0, c.y + d[1]));
      placeCursor();
      describeCursor();
    } else if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      play(app.cursor.x, app.cursor.y);
    } else if (ev.key === "u" || ev.key === "U") {
      ev.preventDefault();
      undo();
    } else if ((ev.key === "n" || ev.key === "N") && !ev.repeat) {
      ev.preventDefault();
      const g = app.game;
      const live = g && !app.expired && g.status === "playing" && g.moves.length > 0;
      if (!live || window.confirm("Abandon this game and start a new one?")) newGame();
    }
  }

  // ------------------------------------------------------------------------------ wiring
  ui.board.addEventListener("click", (ev) => {
    const pt = ev.target.closest && ev.target.closest(".pt");
    if (!pt) return;
    const x = Number(pt.dataset.x), y = Number(pt.dataset.y);
    app.cursor = { x, y };
    placeCursor();
    // On a touch screen a point can be smaller than a finger (20x20 on a phone): the first tap
    // shows the stone, a second tap on the same point plays it.
    if (coarsePointer.matches && canPlay()) {
      const p = app.preview;
      if (!p || p.x !== x || p.y !== y) {
        app.preview = { x, y };
        app.message = `${moveName(x, y)}: tap again to play`;
        render();
        return;
      }
    }
    app.preview = null;
    play(x, y);
  });
  ui.board.addEventListener("keydown", onBoardKey);
  ui.board.addEventListener("focus", describeCursor);
  ui.form.addEventListener("submit", (ev) => { ev.preventDefault(); newGame(); });
  ui.undo.addEventListener("click", undo);
  ui.overlay.addEventListener("change", overlayChanged);
  ui.overlayKind.addEventListener("change", overlayChanged);
  for (const a of [ui.sgf, ui.psq]) {
    a.addEventListener("click", (ev) => { if (!app.game) ev.preventDefault(); });
  }

  // The engine's name and version in the footer (nothing depends on it).
  api("GET", "/health").then((h) => {
    if (!h) return;
    const bits = [h.engine || "engine", h.engine_version].filter(Boolean);
    const lim = h.limits || {};
    if (lim.max_visits) bits.push(`max ${lim.max_visits} visits`);
    if (lim.max_time_ms) bits.push(`max ${(lim.max_time_ms / 1000).toFixed(1)} s`);
    ui.engineName.textContent = bits.join(" · ");
  }).catch(() => {});

  // Resume the game named in the address (#game=ID) if the server still has it, else start one.
  function resumeOrStart() {
    const m = /^#game=([0-9a-f]{1,64})$/.exec(location.hash);
    if (!m) { newGame(); return; }
    app.gen += 1;
    run("loading the game…", (signal) => api("GET", `/games/${m[1]}`, undefined, signal))
      .then((ok) => {
        // only a game the server no longer has is replaced; a busy server leaves the address
        // as it is, so a reload tries again
        if (!ok) { if (app.expired) newGame(); return; }
        const g = app.game;
        ui.size.value = String(g.width);
        ui.rule.value = g.rule;
        ui.you.value = g.you;
      });
  }

  buildBoard(15, 15);
  resumeOrStart();
})();
