"""What a class waiting on a question costs the server: N students' browsers each hold one long
poll of /klrl-class/<code>/pulse (klrl_app/classroom/live.py), as live.js does, and the server's
CPU time is read from /proc over a window. Then one change (a question opened) and how long the
N waiters take to hear of it.

    python benchmarks/class_idle.py --students 300 --seconds 60

Starts its own server (tests/e2e/harness.py) with a fresh SQLite data folder.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and its children so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")


async def student(
    host: str, port: int, code: str, since: int, stop: asyncio.Event, heard: list, counts: list
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while not stop.is_set():
            writer.write(
                f"GET /klrl-class/{code}/pulse?since={since} HTTP/1.1\r\n"
                f"Host: {host}\r\nConnection: keep-alive\r\n\r\n".encode()
            )
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(
                next(
                    line.split(b":")[1]
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
            )
            body = json.loads(await reader.readexactly(length))
            counts[0] += 1
            if body.get("version") != since:
                heard.append(time.monotonic())
                since = body.get("version", since)
    finally:
        writer.close()


async def main(n: int, seconds: float) -> None:
    from tests.e2e import harness

    data = tempfile.mkdtemp(prefix="klrl-class-bench-")
    os.environ["KLRL_DATA_DIR"] = data
    from klrl_app.classroom import store as cs

    db = cs.ClassStore(f"sqlite:///{data}/class.db")
    with harness.running_server() as server:
        host, port = "127.0.0.1", server.port
        code, key = db.start()
        version = db.session(code).version
        stop, heard, counts = asyncio.Event(), [], [0]
        tasks = [
            asyncio.create_task(student(host, port, code, version, stop, heard, counts))
            for _ in range(n)
        ]
        await asyncio.sleep(5)  # everyone connected and waiting
        c0, t0, r0 = cpu_s(server.pid), time.monotonic(), counts[0]
        await asyncio.sleep(seconds)
        c1, t1, r1 = cpu_s(server.pid), time.monotonic(), counts[0]
        idle = (c1 - c0) / (t1 - t0)
        print(
            f"{n} idle students for {t1 - t0:.0f} s: server CPU {100 * idle:.1f}% of one core "
            f"({r1 - r0} answered polls, {(r1 - r0) / (t1 - t0):.1f}/s)"
        )
        spec = {
            "id": "bench/x",
            "page": "groups",
            "setting": {},
            "prompt": "?",
            "kind": "number",
            "lo": 0,
            "hi": 1,
            "step": 0.01,
            "unit": "",
            "choices": [],
            "tolerance": 0.05,
            "truth": 0.5,
            "explain": "",
        }
        t_change = time.monotonic()
        db.open_question(code, key, spec)  # another process: the server's tick sees it
        while len(heard) < n and time.monotonic() - t_change < 10:
            await asyncio.sleep(0.01)
        lat = sorted(h - t_change for h in heard)
        if lat:
            print(
                f"a question opened: {len(lat)} of {n} heard within {lat[-1]:.2f} s "
                f"(median {lat[len(lat) // 2]:.2f} s)"
            )
        stop.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=60)
    args = ap.parse_args()
    asyncio.run(main(args.students, args.seconds))
