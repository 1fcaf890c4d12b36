#!/usr/bin/env python
"""Mutation check: plant one bug at a time in a private copy of the project and see whether
the tests notice.

Mutant lists live in ``mutation/mutants/<module>.py``; each defines

    MUTANTS = [(path, old_snippet, new_snippet, why), ...]
    TESTS = ["tests/test_core_x.py", ...]     # optional: narrows the test selection

``path`` is relative to the repository root; ``old_snippet`` must occur exactly once in it
(otherwise the mutant is reported as "stale" and counted as an error). A mutant whose ``why``
begins with the word "equivalent" is one its author has shown cannot change any result; it is
run all the same and reported apart (it should survive) and is left out of the kill rate.

How a run goes:

1. The files the tests need (klrl_core/, klrl_app/, tests/, pages/, app.py, pytest.ini,
   .streamlit/) are copied once into a temporary directory (one copy per job), so the
   checkout itself is never modified and other people's test runs are not disturbed.
2. The unmutated copy runs each test selection once (the baseline): it must pass, and its
   duration sets the timeout.
3. For each mutant: the mutated text is written over the file in the copy (the original bytes
   are kept in memory), ``python -m pytest -x -q -p no:cacheprovider <selection>`` runs with
   the copy as working directory, and the original bytes are written back in a ``finally``.
   Tests failing (or failing to import) = killed; passing = survived; too slow = timeout.
   The kill rate counts killed and timed-out mutants as caught (a hanging suite fails too).
4. The copies are deleted at the end, also after Ctrl-C or SIGTERM.

Usage (from the repository root, with the project's virtualenv active):

    python mutation/run.py                      # every mutant module
    python mutation/run.py --module tilt bandit # some modules
    python mutation/run.py --module tilt --only 3 7   # mutants 3 and 7 of tilt (1-based)
    python mutation/run.py --full               # ignore TESTS: the whole fast suite every time
    python mutation/run.py --module tilt --tests tests/test_core_tilt.py   # own selection
    python mutation/run.py --jobs 2 --json out.json
    python mutation/run.py --list               # show the mutants, run nothing

Exit status: 0 when no non-equivalent mutant survived and nothing errored, 1 otherwise.
Standard library only.
"""

from __future__ import annotations

import argparse
import atexit
import concurrent.futures as cf
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANT_DIR = Path(__file__).resolve().parent / "mutants"
# What the tests need; everything else (benchmarks, docs, .venv, .git) stays behind.
COPY_ITEMS = ("klrl_core", "klrl_app", "tests", "pages", "app.py", "pytest.ini", ".streamlit")
FAST_SUITE = ["tests", "--ignore=tests/e2e"]
PYTEST = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
EQUIVALENT = re.compile(r"^\W*equivalent\b", re.IGNORECASE)


@dataclass
class Mutant:
    module: str  # name of the mutant file (e.g. "tilt")
    index: int  # 1-based position in its MUTANTS list
    path: str
    old: str
    new: str
    why: str
    tests: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.module}:{self.index}"

    @property
    def equivalent(self) -> bool:
        return bool(EQUIVALENT.match(self.why))


@dataclass
class Result:
    name: str
    path: str
    why: str
    equivalent: bool
    status: str  # killed | survived | timeout | stale | error
    seconds: float
    detail: str = ""  # the first failing test, or what went wrong


# ----------------------------------------------------------------------------- loading


def load_mutants(modules: list[str] | None) -> list[Mutant]:
    files = sorted(p for p in MUTANT_DIR.glob("*.py") if not p.name.startswith("_"))
    known = {p.stem for p in files}
    if modules:
        unknown = sorted(set(modules) - known)
        if unknown:
            sys.exit(
                f"unknown mutant module(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        files = [p for p in files if p.stem in modules]
    out: list[Mutant] = []
    for p in files:
        spec = importlib.util.spec_from_file_location(f"_mutants_{p.stem}", p)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        tests = list(getattr(mod, "TESTS", None) or FAST_SUITE)
        for i, entry in enumerate(getattr(mod, "MUTANTS", []), start=1):
            if len(entry) != 4:
                sys.exit(f"{p.name}: mutant {i} is not (path, old, new, why)")
            path, old, new, why = entry
            out.append(Mutant(p.stem, i, str(path), old, new, str(why), tests))
    return out


# ----------------------------------------------------------------------------- the private copy


class Workspace:
    """One private copy of the project. Mutations are applied there and always undone."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="klrl-mutation-"))
        ignore = shutil.ignore_patterns(
            "__pycache__", "*.pyc", ".hypothesis", ".pytest_cache", "artifacts", "screenshots"
        )
        for item in COPY_ITEMS:
            src = ROOT / item
            if src.is_dir():
                shutil.copytree(src, self.dir / item, ignore=ignore)
            elif src.exists():
                shutil.copy2(src, self.dir / item)
        self._saved: dict[Path, bytes] = {}  # files currently mutated -> original bytes
        self._lock = threading.Lock()
        self.proc: subprocess.Popen | None = None

    # -- mutation
    def apply(self, m: Mutant) -> str | None:
        """Write the mutant; returns an error text instead when it cannot be applied."""
        target = self.dir / m.path
        if not target.is_file():
            return f"stale mutant: {m.path} does not exist"
        original = target.read_bytes()
        text = original.decode("utf-8")
        count = text.count(m.old)
        if count != 1:
            return f"stale mutant: old snippet occurs {count} times in {m.path}"
        if m.old == m.new:
            return "stale mutant: old and new snippets are the same"
        with self._lock:
            self._saved[target] = original
        target.write_bytes(text.replace(m.old, m.new).encode("utf-8"))
        return None

    def restore(self) -> None:
        with self._lock:
            for target, original in list(self._saved.items()):
                target.write_bytes(original)
                del self._saved[target]

    # -- running the tests
    def env(self) -> dict:
        env = dict(os.environ)
        # No bytecode caches: a mutant of the same size written in the same second as the
        # previous one could otherwise be served a stale .pyc.
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPATH"] = str(self.dir) + os.pathsep + env.get("PYTHONPATH", "")
        return env

    def pytest(self, args: list[str], timeout: float | None):
        """Run pytest in the copy. Returns (returncode or None on timeout, seconds, output)."""
        shutil.rmtree(self.dir / ".hypothesis", ignore_errors=True)  # no examples carried over
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            PYTEST + args,
            cwd=self.dir,
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            out, _ = self.proc.communicate(timeout=timeout)
            rc = self.proc.returncode
        except subprocess.TimeoutExpired:
            self.kill()
            out, _ = self.proc.communicate()
            rc = None
        except BaseException:  # Ctrl-C / SIGTERM while waiting: stop pytest too
            self.kill()
            raise
        finally:
            self.proc = None
        return rc, time.perf_counter() - t0, out or ""

    def kill(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the pytest process and its children
            except ProcessLookupError:
                pass

    def check_imports_copy(self) -> None:
        """Make sure the tests import the copy's packages, not the checkout's."""
        code = "import klrl_core, klrl_app; print(klrl_core.__file__); print(klrl_app.__file__)"
        out = subprocess.run(
            [sys.executable, "-c", code],
            cwd=self.dir,
            env=self.env(),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for f in out:
            if not Path(f).resolve().is_relative_to(self.dir.resolve()):
                raise RuntimeError(f"the copy imports {f}, not its own package")

    def close(self) -> None:
        self.kill()
        self.restore()
        shutil.rmtree(self.dir, ignore_errors=True)


WORKSPACES: list[Workspace] = []


def _cleanup() -> None:
    for ws in WORKSPACES:
        ws.close()
    WORKSPACES.clear()


def _on_sigterm(signum, frame):
    raise KeyboardInterrupt


# ----------------------------------------------------------------------------- running


def first_failure(output: str) -> str:
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" - ")[0]
    for line in output.splitlines():
        if "Error" in line or "error" in line:
            return line.strip()[:120]
    return output.strip().splitlines()[-1][:120] if output.strip() else ""


def run_mutant(ws: Workspace, m: Mutant, timeout: float) -> Result:
    try:
        problem = ws.apply(m)
        if problem:
            return Result(m.name, m.path, m.why, m.equivalent, "stale", 0.0, problem)
        rc, secs, out = ws.pytest(m.tests, timeout)
    finally:
        ws.restore()
    if rc is None:
        return Result(m.name, m.path, m.why, m.equivalent, "timeout", secs, f"> {timeout:.0f} s")
    if rc in (1, 2):  # tests failed, or the mutated code broke collection (import error)
        return Result(m.name, m.path, m.why, m.equivalent, "killed", secs, first_failure(out))
    if rc == 0:
        return Result(m.name, m.path, m.why, m.equivalent, "survived", secs)
    return Result(
        m.name,
        m.path,
        m.why,
        m.equivalent,
        "error",
        secs,
        f"pytest exit {rc}: {first_failure(out)}",
    )


def baseline(ws: Workspace, selections: list[list[str]]) -> dict:
    """Each test selection must pass unmutated; returns its duration in seconds."""
    times = {}
    for sel in selections:
        rc, secs, out = ws.pytest(sel, None)
        if rc != 0:
            print(out[-3000:])
            raise SystemExit(
                f"baseline failed for {' '.join(sel)} (pytest exit {rc}): "
                "fix the tests before checking mutants"
            )
        times[tuple(sel)] = secs
        print(f"baseline {secs:6.1f} s  {' '.join(sel)}", flush=True)
    return times


def format_table(results: list[Result]) -> str:
    lines = [f"{'mutant':<18} {'status':<10} {'secs':>6}  why / detail", "-" * 100]
    for r in results:
        status = r.status + (" (eq)" if r.equivalent else "")
        why = r.why if len(r.why) <= 60 else r.why[:57] + "..."
        lines.append(f"{r.name:<18} {status:<10} {r.seconds:6.1f}  {why}")
        if r.detail and r.status != "killed":
            lines.append(f"{'':<37}-> {r.detail}")
    return "\n".join(lines)


def summarise(results: list[Result]) -> dict:
    real = [r for r in results if not r.equivalent]
    eq = [r for r in results if r.equivalent]
    count = lambda rs, s: sum(r.status == s for r in rs)  # noqa: E731
    per_module: dict = {}
    for r in results:
        mod = r.name.split(":")[0]
        d = per_module.setdefault(
            mod,
            {"mutants": 0, "equivalent": 0, "killed": 0, "survived": 0, "timeout": 0, "error": 0},
        )
        d["mutants"] += 1
        if r.equivalent:
            d["equivalent"] += 1
        else:
            d[{"stale": "error"}.get(r.status, r.status)] += 1
    killed = count(real, "killed")
    caught = killed + count(real, "timeout")  # a hanging suite does not pass either
    return {
        "mutants": len(results),
        "non_equivalent": len(real),
        "killed": killed,
        "survived": count(real, "survived"),
        "timeout": count(real, "timeout"),
        "errors": count(real, "error")
        + count(real, "stale")
        + count(eq, "stale")
        + count(eq, "error"),
        "equivalent": len(eq),
        "equivalent_killed": count(eq, "killed"),
        "caught": caught,
        "kill_rate": caught / len(real) if real else 1.0,
        "per_module": per_module,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--module",
        nargs="+",
        metavar="NAME",
        help="mutant modules to run (file names in mutation/mutants, no .py)",
    )
    ap.add_argument(
        "--only",
        nargs="+",
        type=int,
        metavar="N",
        help="run only these mutant numbers (1-based) of the chosen module(s)",
    )
    ap.add_argument("--jobs", type=int, default=1, help="parallel copies (default 1)")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    ap.add_argument(
        "--full",
        action="store_true",
        help="use the whole fast suite (tests --ignore=tests/e2e) for every mutant",
    )
    ap.add_argument(
        "--tests",
        nargs="+",
        metavar="ARG",
        help="pytest arguments to use for every mutant instead of TESTS",
    )
    ap.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds per mutant (default: 5x the baseline + 30 s)",
    )
    ap.add_argument(
        "--skip-equivalent", action="store_true", help="do not run mutants marked equivalent"
    )
    ap.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the unmutated run (then --timeout defaults to 600 s)",
    )
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = ap.parse_args(argv)

    mutants = load_mutants(args.module)
    if args.only:
        mutants = [m for m in mutants if m.index in set(args.only)]
    if args.skip_equivalent:
        mutants = [m for m in mutants if not m.equivalent]
    if args.full or args.tests:
        for m in mutants:
            m.tests = list(args.tests or FAST_SUITE)
    if args.list:
        for m in mutants:
            print(f"{m.name:<18} {'[eq] ' if m.equivalent else ''}{m.path}: {m.why}")
        return 0
    if not mutants:
        print("no mutants selected")
        return 0

    atexit.register(_cleanup)
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started in background
    jobs = max(1, min(args.jobs, len(mutants)))
    results: list[Result] = []
    t_start = time.perf_counter()
    try:
        for _ in range(jobs):
            WORKSPACES.append(Workspace())
        WORKSPACES[0].check_imports_copy()
        print(
            f"{len(mutants)} mutants, {jobs} job(s), copies in "
            f"{', '.join(str(w.dir) for w in WORKSPACES)}",
            flush=True,
        )
        selections = []
        for m in mutants:
            if m.tests not in selections:
                selections.append(m.tests)
        if args.no_baseline:
            base = {}
        else:
            base = baseline(WORKSPACES[0], selections)

        def timeout_for(m: Mutant) -> float:
            if args.timeout:
                return args.timeout
            b = base.get(tuple(m.tests))
            return 600.0 if b is None else 5 * b + 30

        free: list[Workspace] = list(WORKSPACES)
        free_lock = threading.Lock()
        stopping = threading.Event()

        def task(m: Mutant) -> Result | None:
            if stopping.is_set():
                return None
            with free_lock:
                ws = free.pop()
            try:
                return run_mutant(ws, m, timeout_for(m))
            finally:
                with free_lock:
                    free.append(ws)

        pool = cf.ThreadPoolExecutor(max_workers=jobs)
        pending = {pool.submit(task, m) for m in mutants}
        try:
            while pending:
                # short waits, so that Ctrl-C and SIGTERM are handled at once
                done, pending = cf.wait(pending, timeout=0.5, return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    r = fut.result()
                    results.append(r)
                    print(
                        f"  {r.name:<18} {r.status:<9}{' (eq)' if r.equivalent else '':<6}"
                        f"{r.seconds:6.1f} s  {r.detail}",
                        flush=True,
                    )
        except BaseException:
            stopping.set()
            for ws in WORKSPACES:  # pytest stops, so the workers return,
                ws.kill()  # restoring their files on the way out
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    except KeyboardInterrupt:
        print("\ninterrupted: the copies are restored and removed", file=sys.stderr)
        _cleanup()
        return 130
    finally:
        _cleanup()

    order = {m.name: i for i, m in enumerate(mutants)}
    results.sort(key=lambda r: order[r.name])
    summary = summarise(results)
    print()
    print(format_table(results))
    print()
    for mod, d in summary["per_module"].items():
        n = d["mutants"] - d["equivalent"]
        print(
            f"{mod:<16} {d['killed']:>3}/{n:<3} killed, {d['survived']} survived, "
            f"{d['timeout']} timeout, {d['error']} error, {d['equivalent']} equivalent"
        )
    print(
        f"\nkill rate {summary['caught']}/{summary['non_equivalent']} = "
        f"{100 * summary['kill_rate']:.1f}% of non-equivalent mutants caught "
        f"({summary['killed']} killed, {summary['timeout']} timeout; "
        f"{summary['survived']} survived, "
        f"{summary['errors']} errors; {summary['equivalent']} marked equivalent, "
        f"{summary['equivalent_killed']} of them killed)  "
        f"[{time.perf_counter() - t_start:.0f} s]"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"summary": summary, "results": [asdict(r) for r in results]}, indent=2)
        )
    ok = summary["survived"] == 0 and summary["errors"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
