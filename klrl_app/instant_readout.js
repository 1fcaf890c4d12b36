// The instant readout (klrl_app/instant.py): when the page's main slider moves to a stop whose
// numbers the last run sent, write them into the readout at once; the run that follows
// redraws the readout with the same numbers.

function findSlider(label) {
  return Array.from(document.querySelectorAll('input[type="range"]'))
    .find(input => input.getAttribute("aria-label") === label) || null;
}

function keyOf(input, kind) {
  return kind === "index" ? parseInt(input.value, 10) : parseFloat(input.value);
}

function show(state) {
  const { input, data, rows } = state;
  if (!input || !input.isConnected) return;
  const k = keyOf(input, data.kind);
  if (Number.isNaN(k)) return;
  const row = rows.find(([key]) => Math.abs(key - k) <= 1e-9 * Math.max(1, Math.abs(k)));
  if (!row) return;                     // not sent: the run will bring it
  const box = document.querySelector(".klrl-readout-main");
  if (!box) return;
  write(box.querySelectorAll(".klrl-value"), row[1]);
  if (row[2]) write(box.querySelectorAll(".klrl-label"), row[2]);
}

function write(spans, texts) {
  if (spans.length !== texts.length) return;
  spans.forEach((span, i) => {
    // Change the text node in place: the page's own redraw then finds the node it made.
    const text = span.firstChild;
    if (text && text.nodeType === Node.TEXT_NODE && text.nodeValue !== texts[i]) {
      text.nodeValue = texts[i];
    }
  });
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
      state.observer = new MutationObserver(() => show(state));
      state.observer.observe(input, { attributes: true, attributeFilter: ["value", "aria-valuetext"] });
    }
  }
  // This run's numbers are for data.current; if the slider has moved on since, show its stop.
  if (input && keyOf(input, data.kind) !== data.current) show(state);
}
