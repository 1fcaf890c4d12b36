// The instant readout (klrl_app/instant.py): when the page's main slider moves to a stop whose
// numbers the last run sent, write them into the readout at once; the run that follows
// redraws the readout with the same numbers.

function findSlider(label) {
  return Array.from(document.querySelectorAll('input[type="range"]'))
    .find(input => input.getAttribute("aria-label") === label) || null;
}

// A select slider's stop by the text it shows (positions shift when a linked value between
// stops comes and goes); a plain slider's by its value.
function keyOf(input, kind) {
  return kind === "index" ? input.getAttribute("aria-valuetext") : parseFloat(input.value);
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

function writeReadout(values, labels) {
  const box = document.querySelector(".klrl-readout-main");
  if (!box) return;
  write(box.querySelectorAll(".klrl-value"), values);
  if (labels) write(box.querySelectorAll(".klrl-label"), labels);
}

// The slider moved: its stop's numbers if this run sent them (true), else nothing (false).
function showStop(state) {
  const { input, data, rows } = state;
  const k = keyOf(input, data.kind);
  const row = rows.find(r => sameKey(data.kind === "index" ? r[3] : r[0], k, data.kind));
  if (!row) return false;
  writeReadout(row[1], row[2] || data.labels);
  return true;
}

export default function ({ parentElement, data }) {
  const state = parentElement.klrlInstant || (parentElement.klrlInstant = {});
  if (state.raw !== data.rows) {
    state.raw = data.rows;
    state.rows = JSON.parse(data.rows);
  }
  state.data = data;
  const input = findSlider(data.label);
  if (input !== state.input) {
    if (state.observer) state.observer.disconnect();
    state.input = input;
    if (input) {
      state.observer = new MutationObserver(() => {
        // The driver left the page (another page, or a run without it): stop watching.
        if (!parentElement.isConnected) { state.observer.disconnect(); return; }
        showStop(state);
      });
      state.observer.observe(input, { attributes: true,
                                      attributeFilter: ["value", "aria-valuetext"] });
    }
  }
  // This run's numbers are for data.current. If the slider is still there, write them back
  // (the redraw only rewrote what changed since the previous run); if it has moved on, show
  // its stop when this run sent it, else this run's numbers until the next run comes.
  const moved = input && !sameKey(keyOf(input, data.kind), data.current, data.kind);
  if (!(moved && showStop(state))) writeReadout(data.values, data.labels);
}
