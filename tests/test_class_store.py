"""The class store (klrl_app/classroom/store.py) against SQLite and a real PostgreSQL server."""

from __future__ import annotations

import json
import math
import multiprocessing
import re

import pytest
import sqlalchemy as sa

from klrl_app.classroom import questions, store as cs
from tests.class_db import pg_server  # noqa: F401  (fixture)

SPEC_NUMBER = {
    "id": "test/number",
    "page": "groups",
    "setting": {"p": "0.1"},
    "prompt": "A number from 0 to 1?",
    "kind": "number",
    "lo": 0.0,
    "hi": 1.0,
    "step": 0.01,
    "unit": "",
    "choices": [],
    "tolerance": 0.05,
    "truth": 0.5,
    "explain": "It is one half.",
}
SPEC_CHOICE = {
    **SPEC_NUMBER,
    "id": "test/choice",
    "kind": "choice",
    "prompt": "Up or down?",
    "choices": ["rises", "falls"],
    "truth": "falls",
}


class Clock:
    def __init__(self, t: float = 1_000_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'class.db'}"
    return request.getfixturevalue("pg_server").new_database()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def db(url, clock):
    s = cs.ClassStore(url, clock=clock)
    yield s
    s.engine.dispose()


def _tables(url):
    engine = sa.create_engine(url)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_schema_is_made_on_first_use(url):
    assert not {"klrl_sessions", "klrl_rounds", "klrl_answers"} & _tables(url)
    s = cs.ClassStore(url)
    assert {"klrl_sessions", "klrl_rounds", "klrl_answers"} <= _tables(url)
    code, key = s.start()
    s.engine.dispose()
    again = cs.ClassStore(url)  # a second process: the schema is kept, and the class
    assert again.session(code).code == code
    assert again.is_lecturer(code, key)
    again.engine.dispose()


def test_sqlite_is_in_wal_mode(tmp_path):
    s = cs.ClassStore(f"sqlite:///{tmp_path / 'c.db'}")
    with s.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar().lower() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000


def test_code_and_key(db):
    code, key = db.start()
    assert re.fullmatch(f"[{cs.ALPHABET}]{{6}}", code)
    assert not set(code) & set("0O1IL5S2Z8B")
    assert len(key) >= 32  # 24 random bytes in base64: 192 bits
    with db.engine.connect() as conn:
        stored = conn.execute(sa.select(cs.sessions.c.key_hash)).scalar()
    assert key not in stored and stored == cs._hash(key)
    # a typed code is forgiving about case and spaces
    assert db.session(" " + code.lower()[:3] + " " + code.lower()[3:]).code == code
    codes = {db.start()[0] for _ in range(30)}
    assert len(codes) == 30


def test_a_whole_question(db):
    code, key = db.start()
    v0 = db.session(code).version
    rid = db.open_question(code, key, SPEC_NUMBER)
    s = db.session(code)
    assert s.version > v0 and s.round.id == rid and s.round.state == "open"
    assert s.round.spec == SPEC_NUMBER
    assert db.submit(code, "ann", "0.4") == 0.4
    assert db.submit(code, "bob", 0.7) == 0.7
    assert db.pulse(code) == (s.version, 2)
    assert db.answers(rid) == []  # nothing of the answers before the reveal
    assert sorted(db.results(code, key, rid)) == [0.4, 0.7]
    db.reveal(code, key)
    assert db.session(code).round.state == "revealed"
    assert sorted(db.answers(rid)) == [0.4, 0.7]
    assert db.answer_of(rid, "ann") == 0.4 and db.answer_of(rid, "carl") is None
    with pytest.raises(cs.NotOpen):
        db.submit(code, "carl", 0.5)  # after the reveal: too late
    db.close(code, key)
    assert db.session(code).round.state == "closed"


def test_one_answer_per_student_and_a_change_replaces_it(db):
    code, key = db.start()
    rid = db.open_question(code, key, SPEC_CHOICE)
    db.submit(code, "ann", "rises")
    db.submit(code, "ann", "falls")
    db.submit(code, "bob", "rises")
    assert db.count(rid) == 2
    assert sorted(db.results(code, key, rid)) == ["falls", "rises"]
    assert db.answer_of(rid, "ann") == "falls"
    # a new question is a new round: the first one's answers stay with it
    rid2 = db.open_question(code, key, SPEC_NUMBER)
    assert db.count(rid2) == 0 and db.count(rid) == 2


@pytest.mark.parametrize(
    "raw", ["abc", "", "nan", "inf", "-inf", float("nan"), float("inf"), "1.5", -0.1, "1e308", None]
)
def test_bad_numbers_are_refused_and_not_stored(db, raw):
    code, key = db.start()
    rid = db.open_question(code, key, SPEC_NUMBER)
    with pytest.raises(ValueError) as err:
        db.submit(code, "ann", raw)
    assert str(err.value)  # a message to show
    assert db.count(rid) == 0


@pytest.mark.parametrize("raw", ["up", "", "rises and falls", None, 1])
def test_not_a_choice_is_refused(db, raw):
    code, key = db.start()
    rid = db.open_question(code, key, SPEC_CHOICE)
    with pytest.raises(ValueError):
        db.submit(code, "ann", raw)
    assert db.count(rid) == 0


def test_a_bad_answer_leaves_the_good_one(db):
    code, key = db.start()
    rid = db.open_question(code, key, SPEC_NUMBER)
    db.submit(code, "ann", 0.3)
    with pytest.raises(ValueError):
        db.submit(code, "ann", "nan")
    assert db.answer_of(rid, "ann") == 0.3


def test_no_answer_without_an_open_question_or_a_student(db):
    code, key = db.start()
    with pytest.raises(cs.NotOpen):
        db.submit(code, "ann", 0.3)
    with pytest.raises(cs.NotOpen):
        db.submit("ZZZZZZ", "ann", 0.3)
    db.open_question(code, key, SPEC_NUMBER)
    with pytest.raises(ValueError):
        db.submit(code, "", 0.3)


@pytest.mark.parametrize("action", ["open", "reveal", "close", "here", "end", "results"])
@pytest.mark.parametrize("bad", ["", None, "wrong", "KEY"])
def test_every_lecturer_action_needs_the_key(db, action, bad):
    code, key = db.start()
    other_code, other_key = db.start()
    rid = db.open_question(code, key, SPEC_NUMBER)
    db.submit(code, "ann", 0.4)
    before = db.session(code)
    wrong = {"wrong": "x" * len(key), "KEY": other_key}.get(bad, bad)  # another class's key too
    calls = {
        "open": lambda k: db.open_question(code, k, SPEC_CHOICE),
        "reveal": lambda k: db.reveal(code, k),
        "close": lambda k: db.close(code, k),
        "here": lambda k: db.bring_here(code, k, "tilt", {"kappa": "20"}),
        "end": lambda k: db.end(code, k),
        "results": lambda k: db.results(code, k, rid),
    }
    with pytest.raises(cs.Refused):
        calls[action](wrong)
    after = db.session(code)
    assert after == before and db.count(rid) == 1
    assert not db.is_lecturer(code, wrong)
    calls[action](key)  # and the key does it
    with pytest.raises(cs.Refused):  # a key opens its own session only
        db.results(other_code, key, rid)


def test_bring_everyone_here(db):
    code, key = db.start()
    s0 = db.session(code)
    db.bring_here(code, key, "tilt", {"kappa": "20", "lock": "kappa", "key": key, "class": code})
    s = db.session(code)
    assert s.here_page == "tilt" and s.here_version == s0.here_version + 1
    assert s.here_query == {"kappa": "20", "lock": "kappa"}  # never the key
    assert s.version > s0.version


def test_end_deletes_everything(db):
    code, key = db.start()
    keep, keep_key = db.start()
    rid = db.open_question(code, key, SPEC_NUMBER)
    rid_keep = db.open_question(keep, keep_key, SPEC_NUMBER)
    db.submit(code, "ann", 0.4)
    db.submit(keep, "ann", 0.6)
    db.end(code, key)
    assert db.session(code) is None and db.pulse(code) is None
    with db.engine.connect() as conn:
        assert (
            conn.execute(
                sa.select(sa.func.count())
                .select_from(cs.answers)
                .where(cs.answers.c.round_id == rid)
            ).scalar()
            == 0
        )
        assert (
            conn.execute(
                sa.select(sa.func.count()).select_from(cs.rounds).where(cs.rounds.c.code == code)
            ).scalar()
            == 0
        )
    assert db.count(rid_keep) == 1  # another class is untouched
    with pytest.raises(cs.Refused):
        db.open_question(code, key, SPEC_NUMBER)


def test_sessions_expire_after_12_hours_idle(db, clock):
    code, key = db.start()
    rid = db.open_question(code, key, SPEC_NUMBER)
    clock.t += 11 * 3600
    db.submit(code, "ann", 0.4)  # activity keeps it alive
    clock.t += 11 * 3600
    assert db.session(code) is not None and db.is_lecturer(code, key)
    clock.t += 12 * 3600 + 1
    assert db.session(code) is None  # expired, even before the sweep
    with pytest.raises(cs.Refused):
        db.reveal(code, key)
    db.sweep(force=True)
    with db.engine.connect() as conn:
        assert (
            conn.execute(
                sa.select(sa.func.count())
                .select_from(cs.answers)
                .where(cs.answers.c.round_id == rid)
            ).scalar()
            == 0
        )
        assert (
            conn.execute(
                sa.select(sa.func.count())
                .select_from(cs.sessions)
                .where(cs.sessions.c.code == code)
            ).scalar()
            == 0
        )


def test_a_flood_changes_only_its_own_answer(db):
    code, key = db.start()
    rid = db.open_question(code, key, SPEC_NUMBER)
    db.submit(code, "bob", 0.9)
    stored = refused = 0
    for i in range(1000):
        try:
            db.submit(code, "bot", (i % 100) / 100)
            stored += 1
        except cs.TooFast:
            refused += 1
    assert stored <= cs.BUCKET + 2 and refused >= 990
    assert db.count(rid) == 2 and db.answer_of(rid, "bob") == 0.9
    assert db.submit(code, "ann", 0.2) == 0.2  # the class is not held up


def test_bucket_refills():
    b = cs.Bucket(size=2, refill_s=1.0)
    assert b.take("a", 0.0) and b.take("a", 0.0) and not b.take("a", 0.0)
    assert b.take("b", 0.0)  # one student's bucket is their own
    assert not b.take("a", 0.5) and b.take("a", 1.6)


def _submitter(url, code, students, values, out):
    s = cs.ClassStore(url)
    s.bucket = cs.Bucket(size=10**9)  # this test is about the database
    done = 0
    for v in values:
        for who in students:
            s.submit(code, who, v)
            done += 1
    s.engine.dispose()
    out.put(done)


def test_exactly_once_under_concurrent_processes(db, url):
    code, key = db.start()
    rid = db.open_question(code, key, SPEC_NUMBER)
    shared = [f"s{i}" for i in range(15)]  # every process answers for these
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = []
    for p in range(4):
        own = [f"p{p}-{i}" for i in range(10)]
        values = [round(0.1 * p + 0.01 * j, 2) for j in range(5)]
        procs.append(ctx.Process(target=_submitter, args=(url, code, shared + own, values, out)))
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    assert sum(out.get(timeout=5) for _ in procs) == 4 * 25 * 5
    assert db.count(rid) == 15 + 40  # one row per student, exactly
    possible = {round(0.1 * p + 0.01 * j, 2) for p in range(4) for j in range(5)}
    for who in shared:
        assert db.answer_of(rid, who) in possible
    for p in range(4):  # each process's last value is its own
        assert db.answer_of(rid, f"p{p}-3") == round(0.1 * p + 0.04, 2)


def test_default_url_is_a_file_in_the_data_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("KLRL_CLASS_DB_URL", raising=False)
    monkeypatch.setenv("KLRL_DATA_DIR", str(tmp_path / "data"))
    url = cs.default_url()
    assert url == f"sqlite:///{tmp_path / 'data' / 'class.db'}" and (tmp_path / "data").is_dir()
    monkeypatch.setenv("KLRL_CLASS_DB_URL", "postgresql+psycopg://u@h/db")
    assert cs.default_url() == "postgresql+psycopg://u@h/db"


def test_answers_are_stored_as_parsed(db):
    code, key = db.start()
    rid = db.open_question(code, key, SPEC_NUMBER)
    db.submit(code, "ann", " 0.50 ")
    with db.engine.connect() as conn:
        raw = conn.execute(sa.select(cs.answers.c.value)).scalar()
    assert json.loads(raw) == questions.parse_answer(SPEC_NUMBER, " 0.50 ")
    assert math.isfinite(db.answer_of(rid, "ann"))


def test_plain_postgres_urls_get_the_installed_driver():
    assert cs.with_driver("postgres://u:p@h:5432/d") == "postgresql+psycopg://u:p@h:5432/d"
    assert cs.with_driver("postgresql://u@h/d") == "postgresql+psycopg://u@h/d"
    assert cs.with_driver("postgresql+psycopg://u@h/d") == "postgresql+psycopg://u@h/d"
    assert cs.with_driver("sqlite:///x.db") == "sqlite:///x.db"


def test_a_plain_postgresql_url_works(pg_server):  # noqa: F811 (the fixture)
    url = pg_server.new_database().replace("postgresql+psycopg://", "postgresql://")
    s = cs.ClassStore(url)
    code, key = s.start()
    assert s.is_lecturer(code, key)
    s.engine.dispose()


def test_only_a_revealed_round_is_named_for_the_news(db):
    """live.py sends a round's truth with the news only once the store says it is revealed."""
    code, key = db.start()
    assert db.revealed(code) is None  # no question yet
    rid = db.open_question(code, key, SPEC_NUMBER)
    assert db.revealed(code) is None  # open: its truth is secret
    db.reveal(code, key)
    rnd = db.revealed(code.lower())
    assert (rnd.id, rnd.state, rnd.spec) == (rid, "revealed", SPEC_NUMBER)
    db.close(code, key)
    assert db.revealed(code) is None  # off the screens
    db.open_question(code, key, SPEC_NUMBER)
    assert db.revealed(code) is None  # the next question, open


def test_a_round_id_is_never_given_again(db):
    """The screens and ui.py's caches know a round by its id: the next session's first round
    must not get the id of an ended session's last (SQLite reuses the largest rowid unless
    the table is AUTOINCREMENT)."""
    code, key = db.start()
    first = db.open_question(code, key, SPEC_NUMBER)
    db.reveal(code, key)
    db.end(code, key)  # deletes the session's rounds and answers
    code2, key2 = db.start()
    assert db.open_question(code2, key2, SPEC_NUMBER) > first
