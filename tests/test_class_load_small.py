"""A small class through deploy/start.sh (2 processes behind HAProxy, one SQLite store), one
process killed with SIGKILL while the question is open: benchmarks/class_load.py at 20 students.
Every answer the app confirmed is in the store and on the projector, none is lost, the students
of the killed process get their question back with their own answer, and every student sees the
truth. Needs HAProxy: skips without it, unless KLRL_REQUIRE_PROXY=1 (CI)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STUDENTS = 20


def _haproxy() -> bool:
    return bool(shutil.which("haproxy") or os.path.exists("/usr/sbin/haproxy"))


@pytest.fixture(scope="module")
def kill_one(tmp_path_factory):
    if not _haproxy():
        if os.environ.get("KLRL_REQUIRE_PROXY") == "1":
            pytest.fail("haproxy is missing (apt-get install haproxy) and KLRL_REQUIRE_PROXY=1")
        pytest.skip("haproxy is not installed")
    out = tmp_path_factory.mktemp("class-load") / "kill-one.json"
    env = dict(os.environ, PATH=os.environ.get("PATH", "") + ":/usr/sbin")
    env.pop("KLRL_CLASS_DB_URL", None)
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "class_load.py"),
            "--servers",
            "2",
            "--students",
            str(STUDENTS),
            "--ramp",
            "3",
            "--answer-within",
            "6",
            "--idle-seconds",
            "2",
            "--kill-one",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text()), proc


def test_no_answer_lost_or_counted_twice(kill_one):
    r, proc = kill_one
    assert r["errors"] == 0, r["error_samples"]
    assert r["acknowledged"] == STUDENTS
    assert r["store_count"] == r["acknowledged"]
    assert r["counted"] == r["acknowledged"]  # the projector's count
    assert r["lost"] == 0
    assert proc.returncode == 0, proc.stdout[-2000:]


def test_the_killed_process_s_students_get_their_answer_back(kill_one):
    r, _ = kill_one
    assert r["fault_detail"]["acknowledged_before"] > 0
    assert r["dropped"] > 0  # someone was on the killed process
    assert r["recovered"] == r["dropped_answered"]  # each saw their own answer again
    killed = f"s{r['fault_detail']['killed']}"
    # while the killed process was down, HAProxy sent them to the survivor (or, once it was
    # back, to it): never an error
    assert sum(r["reconnected_to"].values()) == r["dropped"], (killed, r["reconnected_to"])


def test_every_student_sees_the_truth_and_both_processes_share_the_wal_file(kill_one):
    r, _ = kill_one
    assert r["truth_seen"] == STUDENTS and r["wrong_truth"] == 0
    assert r["store_shared"] is True
    assert sorted(r["students_per_server"]) == ["s1", "s2"]  # leastconn: both got some
