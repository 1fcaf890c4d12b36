// Figures that follow the hand (klrl_app/instant.py). Two elements run this script: the run's
// driver (which slider, this run's stop and numbers, which charts follow it) and the address
// of the table of every stop of the setting (fetched once, after plotly.js). While the thumb
// moves, the readout and the charts are redrawn for the stop under it at most once per
// animation frame (the latest stop; the ones in between are dropped), without a run.

const followers = (window.klrlFollowers = window.klrlFollowers || {});
const tables = (window.klrlTables = window.klrlTables || {});
const SETTLE_MS = 500;   // the thumb has rested: the live region may speak

function findSlider(label) {
  return Array.from(document.querySelectorAll('input[type="range"]'))
    .find(input => input.getAttribute("aria-label") === label) || null;
}

// A select slider's stop by the text it shows (positions shift when a linked value between
// stops comes and goes); a plain slider's by its value. The input's value is snapped to the
// slider's step: a linked value between steps (?steps=2750 with steps of 100) reads there as
// the step beside it (2800), while the text shows the value itself. When the text is not the
// snapped value's, the text is the key (no stop of the table: the run draws it).
function keyOf(input, kind) {
  if (kind === "index") return input.getAttribute("aria-valuetext");
  const snapped = parseFloat(input.value), shown = shownNumber(input);
  if (!shown) return snapped;
  return snapped.toFixed(shown.decimals) === shown.text ? snapped : shown.value;
}

// The number a plain slider's text shows, with its decimals (null for a text that is not one).
function shownNumber(input) {
  const text = input.getAttribute("aria-valuetext");
  if (text === null || !/^-?[0-9]+(\.[0-9]+)?$/.test(text)) return null;
  return { text, value: parseFloat(text), decimals: (text.split(".")[1] || "").length };
}

// The key of the stop under the thumb, knowing this run's value: a linked value with more
// decimals than the slider shows (ppo-clip?eps=0.355, shown as "0.35") is no stop of the
// table, and while the thumb has not moved since the run (its input's value is the one the
// run found) and shows it, it is the run's own value (the run draws it), not the stop its
// text reads as.
function thumbOf(state) {
  const input = state.input, kind = state.data.kind, current = state.data.current;
  const key = keyOf(input, kind);
  // cheap tests first: this runs at every move of the thumb
  if (kind === "index" || input.value !== state.runInput || typeof current !== "number") return key;
  const shown = shownNumber(input), table = tableOf(state);
  if (!shown || !table || indexOf(table, current) >= 0) return key;
  return Math.abs(current - shown.value) <= 0.5 * 10 ** -shown.decimals + 1e-12 ? current : key;
}

function sameKey(a, b, kind) {
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (kind === "index") return a === b;
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a));
}

function write(spans, texts) {
  if (!texts || spans.length !== texts.length) return;
  spans.forEach((span, i) => {
    // Change the text node in place: the page's own redraw then finds the node it made.
    const text = span.firstChild;
    if (text && text.nodeType === Node.TEXT_NODE && text.nodeValue !== texts[i]) {
      text.nodeValue = texts[i];
    }
  });
}

function readoutBox() { return document.querySelector(".klrl-readout-main"); }

function writeReadout(values, labels) {
  const box = readoutBox();
  if (!box) return;
  write(box.querySelectorAll(".klrl-value"), values);
  if (labels) write(box.querySelectorAll(".klrl-label"), labels);
}

// A stop's readout from the table (its labels when they change with the stop).
function writeStopReadout(table, row) {
  writeReadout(row.v, row.l || table.labels);
}

function chartDiv(key) {
  return document.querySelector(`.klrl-chart[data-klrl-key="${CSS.escape(key)}"]`);
}

// A value the stop repeats is sent once: {"$": [chart, i]} stands for the i-th patch's value
// of that chart at the same stop (instant.py's _share).
function resolve(row, value) {
  if (value && typeof value === "object" && !Array.isArray(value) && "$" in value) {
    const [chart, i] = value.$;
    return row.c[chart][i][1];
  }
  return value;
}

// plotly.js's typed-array form ({dtype, bdata}, plots.typed_arrays) as the array itself.
// plotly.js would decode a spec into a new array on every redraw, so Plotly.react would find
// every trace changed and recompute them all; decoded once here, an array the stop does not
// change is the same array from draw to draw, and a stop that moves only an axis
// (length-bias) is redrawn without recomputing its traces.
const ARRAYS = { f8: Float64Array, f4: Float32Array, i4: Int32Array, i2: Int16Array,
                 i1: Int8Array, u4: Uint32Array, u2: Uint16Array, u1: Uint8Array };

function decoded(spec) {
  const bytes = Uint8Array.from(atob(spec.bdata), c => c.charCodeAt(0));
  return new ARRAYS[spec.dtype](bytes.buffer);
}

function isSpec(node) {
  return node && typeof node === "object" && !Array.isArray(node) &&
         typeof node.bdata === "string" && node.dtype in ARRAYS && node.shape === undefined;
}

function decodeAll(node) {
  if (isSpec(node)) return decoded(node);
  if (Array.isArray(node)) return node.map(decodeAll);
  if (node && typeof node === "object" && !ArrayBuffer.isView(node)) {
    for (const k of Object.keys(node)) node[k] = decodeAll(node[k]);
  }
  return node;
}

function at(node, path) {
  for (const part of path) node = node === undefined || node === null ? node : node[part];
  return node;
}

// A stop's patches, made ready once (the first time the thumb is on it): references resolved,
// arrays decoded. Patches inside a spec (the server diffs into it: its bdata, and its dtype
// when the stop's array has another type) become one patch of the whole decoded array, at
// the first of them. ``table.base`` is decoded by then; ``table.rawBase`` is as sent.
function ready(table, row) {
  if (row.ready) return row;
  const charts = {};
  for (const [k, patches] of Object.entries(row.c)) {
    const out = [], specs = new Map();   // a spec's path -> its patch in ``out``
    for (const [path, raw] of patches) {
      const value = resolve(row, raw);
      const parent = path.slice(0, -1), base = path.length ? at(table.rawBase[k], parent) : null;
      if (isSpec(base) && ["bdata", "dtype"].includes(path[path.length - 1])) {
        const id = JSON.stringify(parent);
        if (!specs.has(id)) { specs.set(id, [parent, { ...base }]); out.push(specs.get(id)); }
        specs.get(id)[1][path[path.length - 1]] = value;
      } else {
        out.push([path, decodeAll(structuredClone(value))]);
      }
    }
    for (const patch of specs.values()) patch[1] = decoded(patch[1]);
    charts[k] = out;
  }
  row.c = charts;
  row.ready = true;
  return row;
}

// A copy that plotly.js and the theme colouring may write into (they write into objects),
// sharing the arrays of numbers and texts with the table: Plotly.react finds an array it drew
// last time unchanged, and a stop that changes no array (length-bias: only the axis's end)
// is redrawn without recomputing its traces. An axis range is copied: a zoom writes into it.
// The template is shared too: a new one, even equal, makes plotly.js recompute every trace.
function copyOf(node, key) {
  if (key === "template") return node;
  const shared = key !== "range";
  if (ArrayBuffer.isView(node)) return shared ? node : node.slice();
  if (Array.isArray(node)) {
    if (node.every(v => v === null || typeof v !== "object")) return shared ? node : node.slice();
    return node.map(v => copyOf(v, null));
  }
  if (node && typeof node === "object") {
    const out = {};
    for (const k of Object.keys(node)) if (!k.startsWith("_")) out[k] = copyOf(node[k], k);
    return out;
  }
  return node;
}

// The stop's figure: the base with the stop's patches (a patch at the root is the figure).
function figureAt(base, patches) {
  let figure = copyOf(base, null);
  for (const [path, value] of patches || []) {
    if (!path.length) return copyOf(value, null);
    let node = figure;
    for (let i = 0; i < path.length - 1; i++) {
      let child = node[path[i]];
      // A patch of one item writes into its array: the table's array is not to be touched.
      if (Array.isArray(child) || ArrayBuffer.isView(child)) node[path[i]] = child = child.slice();
      node = child;
    }
    const key = path[path.length - 1];
    node[key] = copyOf(value, key);
  }
  return figure;
}

function tableOf(state) {
  const t = tables[state.data.slug];
  return t && t.setting === state.data.setting ? t : null;
}

function indexOf(table, key) {
  if (key === null || key === undefined) return -1;
  if (table.kind === "index") return table.keys.indexOf(key);
  return table.keys.findIndex(k => sameKey(k, key, "value"));
}

// Draw the stop ``key``: a promise of {firstAt} (when its first chart was drawn) if the table
// holds it, of false if not ("computing…"); null when there is no table for this setting.
function drawStop(state, key) {
  const table = tableOf(state);
  if (!table) return null;
  const i = indexOf(table, key);
  if (i < 0) return null;                 // not a stop of the table (a linked in-between value)
  const row = table.rows[i];
  // The charts the table carries (a setting whose table would be too large carries none:
  // its charts wait for the run).
  const charts = state.data.charts.filter(k => k in table.base)
    .map(k => [k, chartDiv(k)]).filter(([, div]) => div);
  if (!row) {
    // Not computed yet: never show another stop's numbers as if they were this one's.
    writeReadout(state.data.values.map(() => "…"), null);
    charts.forEach(([, div]) => {
      div.classList.add("klrl-computing");
      div.klrlStop = key;
      div.klrlFigure = undefined;
      div.klrlFromTable = false;           // the run's figure must be drawn
    });
    return Promise.resolve(false);
  }
  ready(table, row);
  writeStopReadout(table, row);
  const since = performance.now();
  const drawOne = ([k, div]) => {
    // A chart drawn in the next frame: a run may have drawn its own figure since (Reset moves
    // the slider and another control: the run's figure is of the new setting, the table's of
    // the old one), or the setting changed. The run's figure stays.
    if (div.klrlRunDrawnAt > since || tableOf(state) !== table) return null;
    if (div.classList.contains("klrl-computing")) div.classList.remove("klrl-computing");
    div.klrlStop = key;
    div.klrlFigure = undefined;          // the next run's figure: skipped if for this stop
    div.klrlFromTable = true;
    div.klrlSetting = state.data.setting;   // ... and drawn from this setting's table
    if (row.a[k] && div.getAttribute("aria-label") !== row.a[k]) div.setAttribute("aria-label", row.a[k]);
    const figure = figureAt(table.base[k], row.c[k]);
    return window.klrlDrawChart ? window.klrlDrawChart(div, figure) : null;
  };
  // The first chart (the page's main figure) is drawn in this frame and painted with the
  // readout; the others in the next frame. Drawn in one go, every chart would wait for all of
  // them (plotly.js takes 30-40 ms a chart here) before anything reached the screen.
  const [first, ...rest] = charts;
  let firstAt = null;
  const drawn = Promise.resolve(first ? drawOne(first) : null).then(() => {
    firstAt = performance.now();
    if (!rest.length) return null;
    return new Promise(resolve => requestAnimationFrame(resolve))
      .then(() => Promise.all(rest.map(drawOne)));
  });
  return drawn.then(() => ({ firstAt }));
}

function nextFrame(state) {
  if (!state.raf) state.raf = requestAnimationFrame(() => frame(state, true));
}

// ``inFrame``: called by an animation frame's callback (else by a move, between frames).
function frame(state, inFrame = false) {
  state.raf = 0;
  if (state.drawing) return;              // the frame after this draw takes the latest stop
  if (state.cooling) { nextFrame(state); return; }
  const key = state.pending;
  if (sameKey(key, state.drawn, state.data.kind) && !state.stale) return;
  state.stale = false;
  const done = drawStop(state, key);
  if (!done) return;
  state.drawing = true;
  // One draw per painted frame: until the frame that paints this draw has passed, moves wait
  // (a draw made between frames is painted by the next frame; its callbacks come first).
  state.cooling = true;
  const cool = () => { state.cooling = false; };
  requestAnimationFrame(inFrame ? cool : () => requestAnimationFrame(cool));
  done.catch(() => false).then(result => {
    state.drawing = false;
    state.drawn = key;
    // latency.py and the browser tests listen: which stop was drawn (ok: from the table;
    // false: "computing…"), when its first chart was drawn and when all of them were.
    const ok = !!result;
    const at = performance.now();
    window.dispatchEvent(new CustomEvent("klrl-follow-drawn", {
      detail: { slug: state.data.slug, key, ok, at, firstAt: (result && result.firstAt) || at } }));
    if (state.stale || !sameKey(state.pending, key, state.data.kind)) nextFrame(state);
  });
}

// Draw the stop under the thumb now if nothing was drawn since the last animation frame (a key
// press, or a drag's first move, is on screen in the frame it lands in, with its readout),
// else at the next frame, which takes the latest stop and drops the ones in between.
function schedule(state) {
  if (state.raf) return;
  if (!state.drawing && !state.cooling) frame(state);
  else nextFrame(state);
}

function moved(state) {
  if (!state.input) return;
  const key = thumbOf(state);
  const same = sameKey(key, state.pending, state.data.kind);
  state.pending = key;
  // Hold the live region while the thumb moves: a screen reader hears the settled value once.
  // A run that rewrites the slider at the value it has does not move the thumb.
  if (!same) {
    const box = readoutBox();
    if (box) box.setAttribute("aria-busy", "true");
    clearTimeout(state.settle);
    state.settle = setTimeout(() => { readoutBox()?.removeAttribute("aria-busy"); }, SETTLE_MS);
  }
  schedule(state);
}

// live_chart.js asks before drawing a run's figure: is the thumb elsewhere (the driver draws
// that stop, or says it is computing)? Then the run's figure would show another stop.
window.klrlThumbAway = function (key, stop) {
  for (const state of Object.values(followers)) {
    if (!state.input || !state.input.isConnected || !state.data.charts.includes(key)) continue;
    if (!tableOf(state) || !(key in tableOf(state).base)) return false;
    const thumb = thumbOf(state);
    return !sameKey(thumb, stop, state.data.kind) &&
           indexOf(tableOf(state), thumb) >= 0;
  }
  return false;
};

function driver(parentElement, data) {
  const state = followers[data.slug] || (followers[data.slug] = {});
  state.data = data;
  const input = findSlider(data.label);
  if (input !== state.input) {
    if (state.observer) state.observer.disconnect();
    state.input = input;
    state.drawn = undefined;
    if (input) {
      state.observer = new MutationObserver(() => {
        // The driver left the page (another page, or a run without it): stop watching.
        if (!parentElement.isConnected) { state.observer.disconnect(); return; }
        moved(state);
      });
      state.observer.observe(input, { attributes: true,
                                      attributeFilter: ["value", "aria-valuetext"] });
    }
  }
  // This run's numbers are for data.current. If the thumb is still there, write them back
  // (the redraw only rewrote what changed since the previous run); if it has moved on, draw
  // its stop from the table.
  if (input) state.runInput = input.value;
  const thumb = input ? thumbOf(state) : null;
  if (input && !sameKey(thumb, data.current, data.kind) && tableOf(state)) {
    // The run's redraw has just written its own stop's numbers: put the thumb's readout back
    // now, in this callback, and draw its charts again (also when a draw of it is under way:
    // it wrote the readout before the run did).
    const table = tableOf(state), row = table.rows[indexOf(table, thumb)];
    if (row) writeStopReadout(table, row);
    state.stale = true;
    state.pending = thumb;
    schedule(state);
  } else {
    writeReadout(data.values, data.labels);
    state.drawn = data.current;
  }
}

// A run cut short by the next one (the thumb moved back while it ran) can leave its readout
// on screen without reaching its driver, whose callback would have put the thumb's back. The
// readout says whose numbers it shows (data-klrl-stop): when a run writes another stop's than
// the one under the thumb, write the thumb's from the table.
function readoutWritten() {
  const box = readoutBox();
  const mark = box && box.getAttribute("data-klrl-stop");
  if (mark === null || mark === undefined) return;
  const stop = JSON.parse(mark);
  for (const state of Object.values(followers)) {
    if (!state.input || !state.input.isConnected || !state.data) continue;
    const table = tableOf(state), thumb = thumbOf(state);
    if (!table || sameKey(thumb, stop, state.data.kind)) return;
    const row = table.rows[indexOf(table, thumb)];
    if (row) writeStopReadout(table, row);
    return;
  }
}

if (!window.klrlReadoutWatch) {
  window.klrlReadoutWatch = new MutationObserver(readoutWritten);
  window.klrlReadoutWatch.observe(document.body, { subtree: true, attributes: true,
                                                   attributeFilter: ["data-klrl-stop"] });
}

// The table is fetched over HTTP (instant.py's /klrl-table/<hash>; the browser inflates it)
// once the page's plotly.js is there: on a phone's first load it would otherwise share the
// network with plotly.js and hold back the first chart. A hash names one content, so a table
// seen before comes from the browser's cache.
async function afterPlotly(slug) {
  // the charts' module may not have asked for plotly.js yet (it loads beside this one)
  const charts = followers[slug]?.data?.charts?.length;
  for (let i = 0; charts && !window.__klrlPlotly && i < 200; i++) {
    await new Promise(resolve => setTimeout(resolve, 50));
  }
  const plotly = window.__klrlPlotly;
  return plotly ? plotly.promise.catch(() => null) : null;
}

const loading = {};

async function table(data) {
  const t = tables[data.slug];
  if ((t && t.id === data.id) || loading[data.slug] === data.id) return;
  loading[data.slug] = data.id;
  await afterPlotly(data.slug);
  let parsed = null;
  for (let attempt = 0; attempt < 3 && !parsed; attempt++) {
    if (loading[data.slug] !== data.id) return;   // a newer table was named meanwhile
    try {
      const response = await fetch(data.url);
      // 404: forgotten by the server (its runs still draw every stop)
      if (response.status === 404) break;
      if (response.ok) parsed = await response.json();
    } catch (e) { /* the network: try again */ }
    if (!parsed) await new Promise(resolve => setTimeout(resolve, 1000 * (attempt + 1)));
  }
  if (loading[data.slug] !== data.id) return;
  delete loading[data.slug];
  if (!parsed) { console.warn("klrl table", data.url); return; }
  parsed.rawBase = parsed.base;
  parsed.base = decodeAll(structuredClone(parsed.base));
  parsed.id = data.id;
  parsed.setting = data.setting;
  tables[data.slug] = parsed;
  // The thumb may have moved while the run was under way.
  const state = followers[data.slug];
  if (state && state.input && state.data && state.data.setting === data.setting) {
    const thumb = thumbOf(state);
    if (!sameKey(thumb, state.data.current, state.data.kind)) {
      state.stale = true;
      state.pending = thumb;
      schedule(state);
    }
  }
}

// Play (instant.py's play_button): a button that moves the slider one stop per tick, as the
// right arrow key does, so the figures follow it from the table and the link and the run
// follow the slider as they do for a key press. It stops at the last stop (Play there starts
// again from the first) and when the page or the slider goes away.
const PLAY_TEXT = { play: "▶ Play", pause: "⏸ Pause" };

function pressOn(input, key) {
  for (const type of ["keydown", "keyup"]) {
    input.dispatchEvent(new KeyboardEvent(type, { key, code: key, bubbles: true }));
  }
}

function atEnd(input) { return parseFloat(input.value) >= parseFloat(input.max); }

function playButton(parentElement, data) {
  let button = parentElement.querySelector("button.klrl-play");
  if (!button) {
    button = document.createElement("button");
    button.type = "button";
    button.className = "klrl-play";
    Object.assign(button.style, {
      font: "inherit", color: "inherit", background: "transparent", cursor: "pointer",
      border: "1px solid rgba(128, 132, 149, 0.55)", borderRadius: "0.5rem",
      padding: "0.3rem 0.8rem", minHeight: "2.5rem", whiteSpace: "nowrap",
    });
    parentElement.appendChild(button);
  }
  const player = button.klrlPlayer || (button.klrlPlayer = { timer: 0 });
  player.data = data;
  const show = playing => {
    const [text, name] = playing ? [PLAY_TEXT.pause, "Pause"] : [PLAY_TEXT.play, "Play"];
    button.textContent = text;
    // the name says what a press does (not aria-pressed as well: a toggle whose name
    // changes is read twice over)
    button.setAttribute("aria-label", `${name}: step through ${data.play}`);
  };
  const stop = () => { clearInterval(player.timer); player.timer = 0; show(false); };
  const tick = () => {
    const input = findSlider(player.data.play);
    if (!button.isConnected || !input) { stop(); return; }
    if (atEnd(input)) { stop(); return; }
    pressOn(input, "ArrowRight");
    if (atEnd(input)) stop();
  };
  button.onclick = () => {
    if (player.timer) { stop(); return; }
    const input = findSlider(player.data.play);
    if (!input) return;
    if (atEnd(input)) pressOn(input, "Home");
    show(true);
    player.timer = setInterval(tick, player.data.interval || 200);
  };
  show(!!player.timer);
}

export default function ({ parentElement, data }) {
  if (data.url !== undefined) table(data).catch(e => console.error("klrl table", e));
  else if (data.play !== undefined) playButton(parentElement, data);
  else driver(parentElement, data);
}

// For tests/e2e/test_instant_js.py, which runs them in Chromium on figures of its own.
export { copyOf, decodeAll, figureAt, ready };
