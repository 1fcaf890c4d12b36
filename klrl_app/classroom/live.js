// A class session's live updates (klrl_app/classroom/live.py): a long poll of the server's
// /klrl-class/<code>/pulse route, which answers when the session's version (a question opened
// or revealed, everyone brought somewhere, the end) or, for the lecturer, the number of answers
// differs from what this page shows, or after ~25 s with nothing new. On a change the element
// sets its trigger, and Streamlit reruns the fragment it sits in: one run per change, none
// while the class waits.

const polls = (window.klrlClassPolls = window.klrlClassPolls || new Map());
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

export default function ({ parentElement, data, setTriggerValue }) {
  const sig = JSON.stringify(data);
  const old = polls.get(parentElement);
  if (old && old.sig === sig) return;
  parentElement.querySelector(".klrl-class-early")?.remove();   // the run has drawn the page
  if (old) { old.stop = true; old.ctl.abort(); }
  const p = { sig, stop: false, ctl: new AbortController() };
  polls.set(parentElement, p);
  run(p, parentElement, data, setTriggerValue);
}

async function run(p, el, data, setTriggerValue) {
  let since = data.version, count = data.count, lastFire = 0, backoff = 1000;
  while (!p.stop) {
    if (!el.isConnected) { p.stop = true; polls.delete(el); return; }
    const url = data.url + "?since=" + encodeURIComponent(since) +
      (count === null || count === undefined ? "" : "&count=" + encodeURIComponent(count));
    try {
      const r = await fetch(url, { signal: p.ctl.signal, cache: "no-store" });
      if (!r.ok) throw new Error("HTTP " + r.status);
      const s = await r.json();
      // a page left behind (the reader went to another page): its fragment is gone too
      if (p.stop || !el.isConnected) { p.stop = true; polls.delete(el); return; }
      const news = s.gone || s.version !== since ||
        (count !== null && count !== undefined && s.count !== count);
      if (news) {
        const wait = (data.min_gap_ms || 0) - (Date.now() - lastFire);
        if (wait > 0) await sleep(wait);   // the lecturer's count: at most one run a second
        if (p.stop || !el.isConnected) return;
        if (s.reveal && data.round != null && s.reveal.round === data.round) {
          showTruth(el, s.reveal.truth);   // the verdict and the chart come with the run
        }
        lastFire = Date.now();
        since = s.version;
        if (count !== null && count !== undefined) count = s.count;
        setTriggerValue("changed", { version: s.version ?? null, count: s.count ?? null,
                                     gone: !!s.gone, at: lastFire });
        if (s.gone) { p.stop = true; return; }
      }
      backoff = 1000;
    } catch (err) {
      if (p.stop) return;
      await sleep(backoff);            // the server restarting, the network gone: back off
      backoff = Math.min(2 * backoff, 15000);
    }
  }
}

// The truth of the question on this screen, as soon as its reveal is news (live.py sends it):
// the fragment's run, with this student's verdict and the class's chart, may take seconds when
// a whole class reruns at once.
function showTruth(el, truth) {
  if (el.querySelector(".klrl-class-early")) return;
  const box = document.createElement("div");
  box.className = "klrl-class-early";
  box.setAttribute("role", "status");
  box.setAttribute("aria-live", "polite");
  const label = document.createElement("p");
  label.className = "klrl-class-label";
  label.textContent = "True value";
  const value = document.createElement("p");
  value.className = "klrl-class-count";
  value.textContent = truth;
  const next = document.createElement("p");
  next.textContent = "Revealed. Your answer and the class's answers follow.";
  box.append(label, value, next);
  el.append(box);
}
