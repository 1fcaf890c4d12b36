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
