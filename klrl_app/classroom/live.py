"""Live class updates without a page run per student per second.

The server holds each browser's request on ``GET /klrl-class/<code>/pulse?since=V[&count=C]``
(a Starlette route beside Streamlit's, app.py) for up to HOLD_S seconds and answers as soon as the
session's version differs from V (or its answer count from C, for the lecturer's console). One
task per class and server process reads the database every POLL_S seconds while anyone waits,
whatever the number of waiters; every waiter of the class wakes on the same event. In the
browser a tiny component (live.js) keeps one such request open and sets a trigger when news
comes, which reruns only the fragment it sits in.

A reveal's news carries the truth, as the student's screen writes it: live.js shows it at once,
and the fragment's run (the student's own verdict, the class's chart) follows. A class of 300 is
300 runs, seconds of one process's time; the truth reaches every phone with the news.
"""

from __future__ import annotations

import asyncio

import streamlit as st
from starlette.responses import JSONResponse
from starlette.routing import Route

from klrl_app.classroom import questions, store as cs

HOLD_S = 25.0  # a request is answered after this long even with no news
POLL_S = 0.25  # one database read per class and process this often, while anyone waits
LINGER_S = 5.0  # a class's task stops this long after its last waiter leaves
PATH = "/klrl-class/{code}/pulse"


class _Watch:
    def __init__(self, code: str):
        self.code = code
        self.state: tuple[int, int] | None = None
        self.reveal: dict | None = None  # the revealed round's truth (``_reveal``)
        self.loaded = asyncio.Event()
        self.changed = asyncio.Event()  # any change: the lecturer's console (its count)
        self.moved = asyncio.Event()  # the version changed: everyone else
        self.waiters = 0
        self.wake = asyncio.Event()  # nudge: read now, not at the next tick
        self.loop = asyncio.get_running_loop()


_watches: dict[str, _Watch] = {}


def nudge(code: str) -> None:
    """After a change made by this process (a script run's thread): its waiters hear of it at
    once instead of at the next tick. Other processes see it at their next tick."""
    watch = _watches.get(code)
    if watch is not None:
        try:
            watch.loop.call_soon_threadsafe(watch.wake.set)
        except RuntimeError:  # its loop has closed
            pass


async def _watch_loop(watch: _Watch) -> None:
    try:
        store = await asyncio.to_thread(cs.get_store)
        idle = 0.0
        while True:
            state = await asyncio.to_thread(store.pulse, watch.code)
            if not watch.loaded.is_set() or state != watch.state:
                # a new answer changes the count alone: it wakes the console's waiter, not
                # every student's (300 answers would wake 300 students 300 times)
                moved = state is None or watch.state is None or state[0] != watch.state[0]
                if moved:  # read before the waiters wake: the news carries it
                    watch.reveal = (
                        None
                        if state is None
                        else await asyncio.to_thread(_reveal, store, watch.code)
                    )
                watch.state = state
                watch.loaded.set()
                fired, watch.changed = watch.changed, asyncio.Event()
                fired.set()
                if moved:
                    fired, watch.moved = watch.moved, asyncio.Event()
                    fired.set()
            idle = idle + POLL_S if watch.waiters == 0 else 0.0
            if idle >= LINGER_S:
                return
            try:
                await asyncio.wait_for(watch.wake.wait(), POLL_S)
            except TimeoutError:
                pass
            watch.wake.clear()
    finally:
        _watches.pop(watch.code, None)
        watch.loaded.set()  # a waiter that came as it stopped is not left hanging
        watch.changed.set()
        watch.moved.set()


def _reveal(store, code: str) -> dict | None:
    """The revealed round's id and its truth as the student's screen writes it, or None."""
    rnd = store.revealed(code)
    if rnd is None:
        return None
    return {"round": rnd.id, "truth": questions.shown(rnd.spec, rnd.spec["truth"], truth=True)}


def _watch(code: str) -> _Watch:
    watch = _watches.get(code)
    if watch is None:
        watch = _watches[code] = _Watch(code)
        asyncio.get_running_loop().create_task(_watch_loop(watch))
    return watch


def known_version(code: str) -> int | None:
    """The session's version as this process's watch read it last, or None (no watch: nobody
    waits here, or the session is gone)."""
    watch = _watches.get(code)
    state = watch.state if watch is not None and watch.loaded.is_set() else None
    return state[0] if state is not None else None


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _reply(state, gone=False, reveal: dict | None = None) -> JSONResponse:
    body = {"gone": True} if gone or state is None else {"version": state[0], "count": state[1]}
    if reveal is not None and "gone" not in body:
        body["reveal"] = reveal
    return JSONResponse(body, headers={"Cache-Control": "no-store"})


async def pulse(request) -> JSONResponse:
    code = cs.normal_code(request.path_params.get("code", ""))
    if len(code) != cs.CODE_LENGTH or set(code) - set(cs.ALPHABET):
        return _reply(None, gone=True)
    since = _int(request.query_params.get("since"))
    count = _int(request.query_params.get("count"))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HOLD_S
    watch = _watch(code)
    watch.waiters += 1
    try:
        while True:
            if not watch.loaded.is_set():
                await asyncio.wait_for(watch.loaded.wait(), HOLD_S)
            state = watch.state
            if state is None:
                return _reply(None, gone=True)
            if state[0] != since or (count is not None and state[1] != count):
                return _reply(state, reveal=watch.reveal)
            left = deadline - loop.time()
            if left <= 0:
                return _reply(state, reveal=watch.reveal)
            event = watch.changed if count is not None else watch.moved
            try:
                await asyncio.wait_for(event.wait(), left)
            except TimeoutError:
                pass
            if watch.code not in _watches:  # its task stopped: follow a new one
                watch.waiters -= 1
                watch = _watch(code)
                watch.waiters += 1
    finally:
        watch.waiters -= 1


ROUTES = [Route(PATH, pulse, methods=["GET"])]

_poller = None


def _component():
    """Declared at the first use, in a script run (app.py imports this module for its route)."""
    global _poller
    if _poller is None:
        from klrl_app import plots

        _poller = st.components.v2.component(
            "klrl_class_live",
            js=plots.module_script("class_live"),
            isolate_styles=False,
        )
    return _poller


def follow(
    code: str,
    version: int,
    count: int | None = None,
    key: str = "klrl-class-live",
    open_round: int | None = None,
) -> None:
    """Rerun the surrounding fragment when the session's version (or, given ``count``, its
    answer count: at most one run a second) changes on the server. ``open_round``: the open
    question on this screen, whose truth live.js shows as soon as the news of its reveal comes."""
    base = "/".join(p for p in (st.get_option("server.baseUrlPath") or "").split("/") if p)
    url = ("/" + base if base else "") + PATH.format(code=code)
    _component()(
        key=key,
        data={
            "url": url,
            "version": version,
            "count": count,
            "min_gap_ms": 1000 if count is not None else 0,
            "round": open_round,
        },
        on_changed_change=lambda: None,
    )
