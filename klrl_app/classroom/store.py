"""Where a class session lives: a real database through SQLAlchemy Core, shared by every server
process (and machine, with PostgreSQL) that serves the class.

SQLite by default, with no set-up: ``class.db`` in the app's data folder (``.klrl-data`` beside
app.py, or ``$KLRL_DATA_DIR``), in WAL mode with a busy timeout so several server processes on
one machine read while one writes. PostgreSQL (or any SQLAlchemy URL) when the deployer gives one:
``$KLRL_CLASS_DB_URL``, or ``url`` under ``[connections.klrl_class]`` in secrets.toml (the
layout ``st.connection("klrl_class")`` reads). The schema is made on first use.

Authority: a session's key is 144 random bits, kept only as its SHA-256 (a random key needs no
slow hash) and compared in constant time. Every lecturer action takes the key and is refused
without it, whatever the page shows. A student is only a random cookie value; one answer per
student and round, a changed answer replaces the old (an UPSERT). Sessions expire 12 hours after
their last activity, their rounds and answers with them (swept on use).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from klrl_app.classroom import questions

# No look-alikes: 0/O/D-free of O, 1/I/L, 2/Z, 5/S, 8/B are all left out.
ALPHABET = "ACDEFGHJKMNPQRTUVWXY34679"
CODE_LENGTH = 6
EXPIRE_S = 12 * 3600
SWEEP_EVERY_S = 60.0
# Per student: a burst of BUCKET submissions, then one every REFILL_S seconds.
BUCKET = 6
REFILL_S = 0.5

metadata = sa.MetaData()
sessions = sa.Table(
    "klrl_sessions",
    metadata,
    sa.Column("code", sa.String(16), primary_key=True),
    sa.Column("key_hash", sa.String(64), nullable=False),
    sa.Column("created", sa.Float, nullable=False),
    sa.Column("last_active", sa.Float, nullable=False, index=True),
    sa.Column("version", sa.Integer, nullable=False, default=0),
    sa.Column("here_page", sa.String(200)),
    sa.Column("here_query", sa.Text),
    sa.Column("here_version", sa.Integer, nullable=False, default=0),
)
rounds = sa.Table(
    "klrl_rounds",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("code", sa.String(16), nullable=False, index=True),
    sa.Column("qid", sa.String(200), nullable=False),
    sa.Column("spec", sa.Text, nullable=False),
    sa.Column("state", sa.String(10), nullable=False),  # open | revealed | closed
    sa.Column("opened", sa.Float, nullable=False),
    sa.Column("revealed", sa.Float),
    # SQLite would give a deleted session's last round id to the next round: the screens
    # and ui.py's caches know a round by its id, so an id is never used twice
    sqlite_autoincrement=True,
)
answers = sa.Table(
    "klrl_answers",
    metadata,
    sa.Column("round_id", sa.Integer, primary_key=True),
    sa.Column("student", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("updated", sa.Float, nullable=False),
)


class Refused(Exception):
    """A lecturer action without the session's key, or on a session that has ended."""


class NotOpen(Exception):
    """A submission while no question is open (before it, or after the reveal)."""


class TooFast(Exception):
    """A student submitting faster than the rate limit allows."""


@dataclass(frozen=True)
class Round:
    id: int
    qid: str
    spec: dict
    state: str


@dataclass(frozen=True)
class Session:
    code: str
    version: int
    here_page: str | None
    here_query: dict
    here_version: int
    round: Round | None


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(text: str) -> str:
    """A typed code as stored: upper case, spaces and dashes dropped."""
    return "".join(c for c in str(text).upper() if c.isalnum())


def default_url() -> str:
    """The deployer's database URL, else the SQLite file in the data folder (made here)."""
    url = os.environ.get("KLRL_CLASS_DB_URL", "").strip()
    if not url:
        try:
            import streamlit as st

            url = str(st.secrets["connections"]["klrl_class"]["url"]).strip()
        except Exception:
            url = ""
    if url:
        return url
    folder = Path(
        os.environ.get("KLRL_DATA_DIR") or Path(__file__).resolve().parents[2] / ".klrl-data"
    )
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'class.db'}"


class Bucket:
    """Token buckets per student, in this process: a flood is refused before the database."""

    def __init__(self, size: int = BUCKET, refill_s: float = REFILL_S):
        self.size, self.refill_s = size, refill_s
        self._state: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, who: str, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, last = self._state.get(who, (float(self.size), now))
            tokens = min(self.size, tokens + (now - last) / self.refill_s)
            ok = tokens >= 1.0
            self._state[who] = (tokens - 1.0 if ok else tokens, now)
            if len(self._state) > 50_000:  # forget the full buckets of the quiet
                for k in [k for k, (t, _) in self._state.items() if t >= self.size - 1][:25_000]:
                    del self._state[k]
            return ok


def with_driver(url: str) -> str:
    """A plain postgres:// or postgresql:// URL (as hosts print them) with the installed driver,
    psycopg 3 (SQLAlchemy would otherwise look for psycopg2)."""
    for plain in ("postgres://", "postgresql://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain) :]
    return url


class ClassStore:
    def __init__(self, url: str, clock=time.time):
        url = with_driver(url)
        self.url = url
        self.clock = clock
        self.sqlite = url.startswith("sqlite")
        if self.sqlite:
            self.engine = sa.create_engine(url, connect_args={"timeout": 30})
            event.listen(self.engine, "connect", _sqlite_pragmas)
        else:
            self.engine = sa.create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)
        metadata.create_all(self.engine, checkfirst=True)
        self.bucket = Bucket()
        self._swept = -math.inf

    # ----- helpers ------------------------------------------------------------------------
    def _upsert(self, table, values: dict, keys: list[str], update: list[str]):
        if self.sqlite:
            from sqlalchemy.dialects.sqlite import insert
        else:
            from sqlalchemy.dialects.postgresql import insert
        stmt = insert(table).values(**values)
        return stmt.on_conflict_do_update(
            index_elements=keys, set_={c: stmt.excluded[c] for c in update}
        )

    def _authorise(self, conn, code: str, key: str) -> None:
        row = conn.execute(
            sa.select(sessions.c.key_hash, sessions.c.last_active).where(sessions.c.code == code)
        ).first()
        if (
            row is None
            or not key
            or not hmac.compare_digest(row.key_hash, _hash(str(key)))
            or row.last_active < self.clock() - EXPIRE_S
        ):
            raise Refused("This is not the key of a running class session.")

    def _bump(self, conn, code: str, **values) -> None:
        conn.execute(
            sessions.update()
            .where(sessions.c.code == code)
            .values(version=sessions.c.version + 1, last_active=self.clock(), **values)
        )

    def sweep(self, force: bool = False) -> None:
        """Delete the sessions idle for 12 hours, with their rounds and answers."""
        now = self.clock()
        if not force and now - self._swept < SWEEP_EVERY_S:
            return
        self._swept = now
        with self.engine.begin() as conn:
            old = [
                r.code
                for r in conn.execute(
                    sa.select(sessions.c.code).where(sessions.c.last_active < now - EXPIRE_S)
                )
            ]
            for code in old:
                self._delete(conn, code)

    def _delete(self, conn, code: str) -> None:
        ids = sa.select(rounds.c.id).where(rounds.c.code == code).scalar_subquery()
        conn.execute(answers.delete().where(answers.c.round_id.in_(ids)))
        conn.execute(rounds.delete().where(rounds.c.code == code))
        conn.execute(sessions.delete().where(sessions.c.code == code))

    # ----- anyone ---------------------------------------------------------------------------
    def start(self) -> tuple[str, str]:
        """A new session: its join code and the lecturer's key (shown once, kept as a hash)."""
        self.sweep()
        key = secrets.token_urlsafe(24)
        now = self.clock()
        for _ in range(20):
            code = new_code()
            try:
                with self.engine.begin() as conn:
                    conn.execute(
                        sessions.insert().values(
                            code=code,
                            key_hash=_hash(key),
                            created=now,
                            last_active=now,
                            version=1,
                            here_version=0,
                        )
                    )
                return code, key
            except sa.exc.IntegrityError:
                continue
        raise RuntimeError("no free join code")

    def session(self, code: str) -> Session | None:
        """The running session with this code and its latest round, or None (unknown, ended
        or expired)."""
        self.sweep()
        code = normal_code(code)
        with self.engine.connect() as conn:
            s = conn.execute(sa.select(sessions).where(sessions.c.code == code)).first()
            if s is None or s.last_active < self.clock() - EXPIRE_S:
                return None
            r = conn.execute(
                sa.select(rounds).where(rounds.c.code == code).order_by(rounds.c.id.desc()).limit(1)
            ).first()
        rnd = Round(r.id, r.qid, json.loads(r.spec), r.state) if r is not None else None
        return Session(
            s.code, s.version, s.here_page, json.loads(s.here_query or "{}"), s.here_version, rnd
        )

    def revealed(self, code: str) -> Round | None:
        """The session's latest round if it is revealed (its truth is then everyone's)."""
        with self.engine.connect() as conn:
            r = conn.execute(
                sa.select(rounds)
                .where(rounds.c.code == normal_code(code))
                .order_by(rounds.c.id.desc())
                .limit(1)
            ).first()
        if r is None or r.state != "revealed":
            return None
        return Round(r.id, r.qid, json.loads(r.spec), r.state)

    def is_lecturer(self, code: str, key: str) -> bool:
        try:
            with self.engine.connect() as conn:
                self._authorise(conn, normal_code(code), key)
            return True
        except Refused:
            return False

    def pulse(self, code: str) -> tuple[int, int] | None:
        """(version, answers to the latest round) for the live updates; None if gone."""
        with self.engine.connect() as conn:
            s = conn.execute(
                sa.select(sessions.c.version, sessions.c.last_active).where(sessions.c.code == code)
            ).first()
            if s is None or s.last_active < self.clock() - EXPIRE_S:
                return None
            rid = conn.execute(
                sa.select(sa.func.max(rounds.c.id)).where(rounds.c.code == code)
            ).scalar()
            n = (
                0
                if rid is None
                else conn.execute(
                    sa.select(sa.func.count()).select_from(answers).where(answers.c.round_id == rid)
                ).scalar()
            )
        return int(s.version), int(n)

    # ----- students -------------------------------------------------------------------------
    def submit(self, code: str, student: str, raw: Any) -> float | str:
        """Store a student's answer to the open question (replacing their earlier one) and
        return it as stored. Raises ValueError (a bad answer, never stored), NotOpen or TooFast."""
        code = normal_code(code)
        if not student:
            raise ValueError(
                "Your browser did not keep this app's cookie, so an answer "
                "cannot be told from another student's."
            )
        if not self.bucket.take(f"{code}/{student}"):
            raise TooFast("Too many answers at once: wait a second and submit again.")
        now = self.clock()
        with self.engine.begin() as conn:
            q = (
                sa.select(rounds.c.id, rounds.c.spec, rounds.c.state)
                .where(rounds.c.code == code)
                .order_by(rounds.c.id.desc())
                .limit(1)
            )
            if not self.sqlite:
                q = q.with_for_update(read=True)  # a reveal waits for this answer
            r = conn.execute(q).first()
            if r is None or r.state != "open":
                raise NotOpen("No question is open right now.")
            value = questions.parse_answer(json.loads(r.spec), raw)
            conn.execute(
                self._upsert(
                    answers,
                    {
                        "round_id": r.id,
                        "student": str(student)[:64],
                        "value": json.dumps(value),
                        "updated": now,
                    },
                    ["round_id", "student"],
                    ["value", "updated"],
                )
            )
            conn.execute(sessions.update().where(sessions.c.code == code).values(last_active=now))
        return value

    def answer_of(self, round_id: int, student: str) -> float | str | None:
        with self.engine.connect() as conn:
            v = conn.execute(
                sa.select(answers.c.value).where(
                    answers.c.round_id == round_id, answers.c.student == str(student)[:64]
                )
            ).scalar()
        return None if v is None else json.loads(v)

    def answers(self, round_id: int, revealed_only: bool = True) -> list:
        """Every answer to a round (no students), once it is revealed (or for the key holder:
        ``results``)."""
        with self.engine.connect() as conn:
            if revealed_only:
                state = conn.execute(
                    sa.select(rounds.c.state).where(rounds.c.id == round_id)
                ).scalar()
                if state != "revealed":
                    return []
            return [
                json.loads(v)
                for v in conn.execute(
                    sa.select(answers.c.value).where(answers.c.round_id == round_id)
                ).scalars()
            ]

    def count(self, round_id: int) -> int:
        with self.engine.connect() as conn:
            return int(
                conn.execute(
                    sa.select(sa.func.count())
                    .select_from(answers)
                    .where(answers.c.round_id == round_id)
                ).scalar()
            )

    # ----- the lecturer (every action takes the key) ------------------------------------------
    def open_question(self, code: str, key: str, spec: dict) -> int:
        """Open a question (a ``questions.to_spec`` snapshot); the previous round closes."""
        code = normal_code(code)
        now = self.clock()
        with self.engine.begin() as conn:
            self._authorise(conn, code, key)
            conn.execute(
                rounds.update()
                .where(rounds.c.code == code, rounds.c.state == "open")
                .values(state="closed")
            )
            rid = conn.execute(
                rounds.insert().values(
                    code=code, qid=str(spec["id"]), spec=json.dumps(spec), state="open", opened=now
                )
            ).inserted_primary_key[0]
            self._bump(conn, code)
        return int(rid)

    def reveal(self, code: str, key: str) -> None:
        """Reveal the open question: no more answers; everyone sees the truth."""
        code = normal_code(code)
        with self.engine.begin() as conn:
            self._authorise(conn, code, key)
            conn.execute(
                rounds.update()
                .where(rounds.c.code == code, rounds.c.state == "open")
                .values(state="revealed", revealed=self.clock())
            )
            self._bump(conn, code)

    def close(self, code: str, key: str) -> None:
        """Take the question off every screen (its answers stay until the session ends)."""
        code = normal_code(code)
        with self.engine.begin() as conn:
            self._authorise(conn, code, key)
            conn.execute(
                rounds.update()
                .where(rounds.c.code == code, rounds.c.state != "closed")
                .values(state="closed")
            )
            self._bump(conn, code)

    def results(self, code: str, key: str, round_id: int) -> list:
        """Every answer to a round, for the key holder, whatever its state."""
        code = normal_code(code)
        with self.engine.connect() as conn:
            self._authorise(conn, code, key)
            owner = conn.execute(sa.select(rounds.c.code).where(rounds.c.id == round_id)).scalar()
        if owner != code:
            raise Refused("That question is not from this session.")
        return self.answers(round_id, revealed_only=False)

    def bring_here(self, code: str, key: str, page: str, query: dict[str, str]) -> None:
        """Send every joined student to ``page`` with ``query`` (no class key in it)."""
        code = normal_code(code)
        query = {str(k): str(v) for k, v in query.items() if k not in {"key", "class"}}
        with self.engine.begin() as conn:
            self._authorise(conn, code, key)
            conn.execute(
                sessions.update()
                .where(sessions.c.code == code)
                .values(
                    here_page=str(page)[:200],
                    here_query=json.dumps(query),
                    here_version=sessions.c.here_version + 1,
                    version=sessions.c.version + 1,
                    last_active=self.clock(),
                )
            )

    def end(self, code: str, key: str) -> None:
        """End the session now and delete its rounds and answers."""
        code = normal_code(code)
        with self.engine.begin() as conn:
            self._authorise(conn, code, key)
            self._delete(conn, code)


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")  # readers do not wait for the writer
    cur.execute("PRAGMA busy_timeout=30000")  # a writer waits for another process's write
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


_stores: dict[str, ClassStore] = {}
_stores_lock = threading.Lock()


def get_store(url: str | None = None) -> ClassStore:
    """One store (engine and pool) per database URL and process."""
    url = url or default_url()
    with _stores_lock:
        if url not in _stores:
            _stores[url] = ClassStore(url)
        return _stores[url]
