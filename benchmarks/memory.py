"""A class opening links with distinct settings: one server process's resident memory (issue 33).

    python benchmarks/memory.py [--links 1000] [--every 50] [--concurrency 2] [--ref COMMIT]
                                [--json F]

One `streamlit run app.py` process on loopback (its background tables on, as deployed; short
session TTL, so closed tabs are reaped as in a lecture). Every page is opened once at its
defaults (the warm-up); then ``--links`` links, each with a setting no earlier link had
(seeds, κ, p, k, ... in turn across the pages, see LINKS), are opened as a browser does at the
protocol level (GET of the page, the websocket, one rerun_script with the link's query string,
read to the end of the run; errors are counted: a compile error, an exception element, a run
that does not finish in ``--timeout`` s) and closed. The process's VmRSS is read after the
warm-up and every ``--every`` links. Goal: under 600 MB after 1,000 links. With ``--ref``
the server runs that commit instead (a temporary git worktree), for a before/after.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect as ws_connect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.capacity import http_get, rss_kb
from tests.e2e import harness

GOAL_MB = 600


def _links():
    """(page, query) pairs, every one a setting not seen before: page caches, background
    tables and stops' tables all get new entries."""
    for i in itertools.count(1):
        yield "bandit", {"seed": 1000 + i}
        yield "kl-penalty", {"seed": 1000 + i}
        yield "ppo-clip", {"seed": 1000 + i}
        yield "dpo", {"seed": 1000 + i}
        yield "step-labels", {"seed": 1000 + i}
        yield "groups", {"k": 2 + i % 60, "p": round(0.01 + (i * 0.0137) % 0.97, 4)}
        yield "normalization", {"k": 2 + i % 200, "p": round(0.02 + (i * 0.0071) % 0.95, 4)}
        yield "pass-at-k", {"samples": 10 + i, "p": 0.05}
        yield "entropy", {"eta": round(0.05 + (i * 0.013) % 2.0, 3)}
        if i % 5 == 0:  # a full training run each: seconds of CPU, fewer of them
            yield "length-bias", {"seed": 1000 + i}
            yield "loop", {"seed": 1000 + i}


async def open_link(base: str, page: str, query: dict, timeout: float) -> str | None:
    """Open one link as a browser does and read its run to the end; an error's text or None."""
    qs = urlencode(query)
    cookies: dict[str, str] = {}
    try:
        status, _, _ = await http_get(f"{base}/{page}?{qs}", cookies, timeout)
        await http_get(f"{base}/_stcore/health", cookies, timeout)
        xsrf = cookies.get("_streamlit_xsrf", "PLACEHOLDER_AUTH_TOKEN")
        async with ws_connect(
            base.replace("http://", "ws://") + "/_stcore/stream",
            subprotocols=["streamlit", xsrf],
            origin=base,
            additional_headers={"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())},
            max_size=None,
            ping_interval=None,
            open_timeout=timeout,
        ) as ws:
            msg = BackMsg()
            rs = msg.rerun_script
            rs.query_string, rs.page_script_hash, rs.page_name = qs, "", page
            rs.context_info.url = f"{base}/{page}?{qs}"
            rs.context_info.timezone, rs.context_info.locale = "UTC", "en-US"
            await ws.send(msg.SerializeToString())
            deadline = time.monotonic() + timeout
            started = False
            while True:
                fm = ForwardMsg()
                fm.ParseFromString(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
                kind = fm.WhichOneof("type")
                if kind == "new_session":
                    started = True
                elif (
                    kind == "delta"
                    and fm.delta.WhichOneof("type") == "new_element"
                    and fm.delta.new_element.WhichOneof("type") == "exception"
                ):
                    return f"{page}?{qs}: exception {fm.delta.new_element.exception.message}"
                elif kind == "script_finished" and started:
                    if fm.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
                        return None
                    if fm.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                        return f"{page}?{qs}: compile error"
    except TimeoutError:
        return f"{page}?{qs}: no end of run within {timeout:.0f} s"
    except Exception as err:
        return f"{page}?{qs}: {type(err).__name__}: {err}"


async def amain(args) -> dict:
    out: dict = {"links": args.links, "rss_mb": [], "errors": []}
    with harness.running_server(
        cwd=args.cwd, extra_args=("--server.disconnectedSessionTTL", "5")
    ) as s:
        pid = s.pid
        out["rss_start_mb"] = round(rss_kb(pid) / 1024)
        for page in (
            "bandit",
            "kl-penalty",
            "ppo-clip",
            "dpo",
            "step-labels",
            "groups",
            "normalization",
            "pass-at-k",
            "entropy",
            "length-bias",
            "loop",
            "tilt",
            "best-of-n",
            "overoptimization",
            "rarity",
            "token-credit",
        ):
            err = await open_link(s.url, page, {}, args.timeout)
            if err:
                out["errors"].append(err)
        out["rss_warm_mb"] = round(rss_kb(pid) / 1024)
        print(
            f"started {out['rss_start_mb']} MB, every page once {out['rss_warm_mb']} MB", flush=True
        )
        links = _links()
        done, t0 = 0, time.monotonic()
        while done < args.links:
            batch = [next(links) for _ in range(min(args.concurrency, args.links - done))]
            errs = await asyncio.gather(*(open_link(s.url, p, q, args.timeout) for p, q in batch))
            out["errors"] += [e for e in errs if e]
            done += len(batch)
            if done % args.every < len(batch) or done == args.links:
                mb = round(rss_kb(pid) / 1024)
                out["rss_mb"].append([done, mb])
                print(
                    f"{done:5d} links  {mb:4d} MB  ({time.monotonic() - t0:.0f} s, "
                    f"{len(out['errors'])} errors)",
                    flush=True,
                )
        out["seconds"] = round(time.monotonic() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--links", type=int, default=1000)
    ap.add_argument("--every", type=int, default=50)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json")
    ap.add_argument("--ref", help="measure this commit instead of the checkout")
    args = ap.parse_args()
    args.cwd = ROOT
    if args.ref:
        args.cwd = Path(tempfile.mkdtemp(prefix="klrl-ref-")) / "ref"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(args.cwd), args.ref],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
    try:
        out = asyncio.run(amain(args))
    finally:
        if args.ref:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(args.cwd)],
                cwd=ROOT,
                capture_output=True,
            )
    peak = max([mb for _, mb in out["rss_mb"]] + [out["rss_warm_mb"]])
    print(
        f"peak {peak} MB after {args.links} links (goal < {GOAL_MB} MB); "
        f"{len(out['errors'])} errors",
        *out["errors"][:5],
        sep="\n",
    )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
