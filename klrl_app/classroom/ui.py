"""The class session's screens: the lecturer's console, a student's view, the bar on every figure
page. pages/class.py wires them; the store (store.py) holds the class, questions.py the bank.

Who is who lives in this browser session's state (ROLE_KEY): the join code, and for the lecturer
the key from the address. Every lecturer action passes that key to the store, which refuses it
unless it is the session's: a hidden button is no protection, the key check is.
"""

from __future__ import annotations

import html
import json
import math
import secrets
from urllib.parse import urlencode

import segno
import streamlit as st

from klrl_app import fmt, lru, notes, plots
from klrl_app.classroom import live, questions, store as cs
from klrl_app.classroom.questions import shown
from klrl_app.nav import PAGES
from klrl_app.serve import STUDENT_COOKIE

ROLE_KEY = "klrl-class"
SID_KEY = "klrl-class-sid"
ROUND_SEEN = "klrl-class-round"
NOT_CARRIED = {"class", "key", "present"}  # never sent to the students with a view


CSS = """
.st-key-class-code {container-type: inline-size;}   /* the code fills its column's width */
.klrl-class-code {font-family: ui-monospace, monospace !important; font-weight: 700 !important;
  font-size: min(4.4rem, 21cqi) !important; line-height: 1.05 !important;
  letter-spacing: 0.08em; margin: 0 !important; white-space: nowrap;}
.klrl-class-count {font-size: 2.6rem !important; font-weight: 700; line-height: 1.1 !important;
  margin: 0 !important; font-variant-numeric: tabular-nums;}
.klrl-class-label {margin: 0 !important; font-size: 1rem; font-weight: 600;}
.klrl-class-prompt {font-size: 1.25rem !important; font-weight: 600; line-height: 1.4; margin: 0.2rem 0 0 0;}
.klrl-class-qr {max-width: 100%; height: auto; display: block;}
.klrl-class-id {font-size: 0.85rem; font-weight: 400; opacity: 0.92; white-space: nowrap;}
.klrl-class-link {word-break: break-all; font-size: 0.95rem; margin: 0.3rem 0 0 0;}
.klrl-class-truth-line {font-size: 1.1rem; margin: 0.3rem 0;}
.klrl-class-early {padding: 0.6rem 0.9rem; border-radius: 0.5rem; border: 2px solid #3b82f6;}
.klrl-class-early p {margin: 0;}
"""


# ----------------------------------------------------------------------------- roles
def store() -> cs.ClassStore | None:
    """The class store, or None when its database cannot be reached (the pages go on)."""
    try:
        return cs.get_store()
    except Exception:
        import logging

        logging.getLogger(__name__).exception("class store unavailable")
        return None


def joined() -> dict | None:
    """{"code", "key" (lecturer only), "role", "here"} for this browser session, or None."""
    return st.session_state.get(ROLE_KEY)


def remember(code: str, key: str | None, session: cs.Session) -> None:
    role = "lecturer" if key else "student"
    old = joined()
    if old and old["code"] == code and old["role"] == role and old.get("key") == key:
        return
    # "bring everyone here" moves a student once per press made after they joined
    st.session_state[ROLE_KEY] = {
        "code": code,
        "key": key,
        "role": role,
        "here": session.here_version,
    }
    st.session_state[notes.STUDENT_KEY] = role == "student"  # no lecturer's notes on a phone


def forget() -> None:
    st.session_state.pop(ROLE_KEY, None)
    st.session_state.pop(notes.STUDENT_KEY, None)


def student_id() -> str:
    """The student's cookie (serve.StudentCookie): the same in every tab and after a reload.
    Without it (cookies refused), this browser session's own random id."""
    try:
        sid = st.context.cookies.get(STUDENT_COOKIE)
    except Exception:
        sid = None
    if not sid:
        sid = st.session_state.setdefault(SID_KEY, "s-" + secrets.token_urlsafe(16))
    return str(sid)


# ----------------------------------------------------------------------------- words
def places(spec: dict) -> int:
    step = float(spec.get("step") or 1)
    return 0 if step >= 1 else min(6, max(0, -math.floor(math.log10(step) + 1e-9)))


def join_link(code: str) -> str:
    url = (st.context.url or "").split("?")[0]
    base = url.rsplit("/", 1)[0] if url else ""
    return f"{base}/class?{urlencode({'class': code})}"


# An <img> with a text alternative (st.image gives none, st.html and st.markdown drop data URIs)
_QR_JS = """
export default function ({ parentElement, data }) {
  let img = parentElement.querySelector("img.klrl-class-qr");
  if (!img) {
    img = document.createElement("img");
    img.className = "klrl-class-qr";
    parentElement.appendChild(img);
  }
  img.width = img.height = data.size;
  if (img.getAttribute("src") !== data.src) img.setAttribute("src", data.src);
  img.setAttribute("alt", data.alt);
}
"""
_qr_view = None


def qr_code(link: str, size: int = 300) -> None:
    """The join link as a QR code (segno), black on white with its quiet zone, drawn 300 px
    wide: about 40% of a 1280×720 projector's height, for the back of a hall."""
    global _qr_view
    if _qr_view is None:
        _qr_view = st.components.v2.component("klrl_class_qr", js=_QR_JS, isolate_styles=False)
    src = segno.make(link, error="m").svg_data_uri(scale=10, border=4, dark="#000", light="#fff")
    _qr_view(
        key="klrl-class-qr",
        data={"src": src, "size": size, "alt": f"QR code of the join link {link}"},
    )


class _Figure:
    """A ready plotly figure in plots.show's shape (its ``figure()``)."""

    def __init__(self, fig):
        self._fig = fig.to_dict() if hasattr(fig, "to_dict") else dict(fig)

    def figure(self) -> dict:
        return self._fig


# What every student's run would otherwise read or make again (a class of 300 reruns at once
# after each change): one byte-bounded cache (klrl_app/lru.py), as every cache of the app.
_READS = lru.ByteLRU(8 * lru.MB)


def _results_figure(round_id: int, spec: dict, answers: list) -> tuple[_Figure, str]:
    """The revealed round's figure, made once per process: after the reveal its answers are
    fixed, and every phone shows the same figure at the same moment (25-110 ms each to make:
    a class of 80 would queue seconds of work)."""
    key = ("figure", round_id, json.dumps(spec, sort_keys=True), tuple(sorted(map(repr, answers))))
    made = _READS.get(key)
    if made is not None:
        return made
    fig, alt = questions.results_figure(spec, answers)
    # the line above the chart states the truth and the share: its title would repeat them
    fig.update_layout(
        title=None,
        height=440,
        margin={"t": 64},
        legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom"},
    )
    made = (_Figure(fig), alt)
    _READS.put(key, made, size=lru.nbytes(made[0].figure()) + len(alt))
    return made


def _session(db: cs.ClassStore, code: str) -> cs.Session | None:
    """The session as the store holds it, read once per version and process: after a change
    every student's screen reruns at once, and each would read the same rows (a class of 300:
    300 reads in the same second). The version is the one this process's live watch read
    last (live.py, every POLL_S); a newer one reaches the students as a new pulse, whose rerun
    reads again."""
    key = ("session", id(db), code)
    kept = _READS.get(key)
    if kept is not None and kept.version == live.known_version(code):
        return kept
    s = db.session(code)
    if s is not None:
        _READS.put(key, s)
    return s


def _revealed_answers(db: cs.ClassStore, code: str, round_id: int) -> list:
    """A revealed round's answers, read once per process: after the reveal no answer can
    change (store.submit takes answers to the open round only). Known by the session's code
    too: a database made before round ids were never reused (store.rounds) may reuse one."""
    key = ("answers", id(db), code, round_id)
    kept = _READS.get(key)
    if kept is None:
        kept = db.answers(round_id)
        if kept:
            _READS.put(key, kept)
    return kept


def results(spec: dict, answers: list, key: str, round_id: int, truth_line: bool = True) -> None:
    """The class's answers against the truth: the figure (questions.results_figure, with its
    text alternative) and the share within the question's tolerance."""
    n = len(answers)
    right = sum(bool(questions.is_right(spec, a)) for a in answers)
    within = (
        "the right choice"
        if spec["kind"] == "choice"
        else f"within ±{shown(spec, spec['tolerance'])} of the true value"
    )
    share = f"{right:,} of {n:,} answers ({fmt.pct(right / n, 0)})" if n else "no answers"
    first = (
        f"True value <b>{html.escape(shown(spec, spec['truth'], truth=True))}</b> · "
        if truth_line
        else "The class: "
    )
    st.markdown(
        f"<div role='status' aria-live='polite' class='klrl-class-truth-line'>{first}"
        f"{html.escape(share)} {html.escape(within)}</div>",
        unsafe_allow_html=True,
    )
    if n:
        fig, alt = _results_figure(round_id, spec, answers)
        plots.show(fig, key=key, alt=alt)
    if spec.get("explain"):
        st.markdown(spec["explain"])


def figure_link(spec: dict, label: str = "Open the figure at this setting") -> None:
    page = next((p for p in PAGES if p.url_path == spec["page"]), None)
    if page is not None:
        st.page_link(
            page.file,
            label=label,
            icon=":material/open_in_new:",
            query_params=dict(spec.get("setting") or {}),
        )


# ----------------------------------------------------------------------------- start, join
def start_or_join(db: cs.ClassStore, message: str | None = None) -> None:
    if message:
        st.error(message, icon=":material/error:")
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown(
            "**A lecturer** starts a session: the page then shows a join code and a QR "
            "code for the class, and keeps your key in this page's address."
        )
        if st.button(
            "Start a class session", key="class-start", type="primary", icon=":material/co_present:"
        ):
            code, key = db.start()
            st.query_params.from_dict({"class": code, "key": key})
            st.rerun()
    with right, st.form("class-join-form", border=False):
        typed = st.text_input(
            "**A student** types the join code shown by the lecturer",
            key="class-typed-code",
            max_chars=12,
            placeholder="e.g. KX4T7P",
        )
        if st.form_submit_button("Join", icon=":material/login:"):
            st.query_params.from_dict({"class": cs.normal_code(typed)})
            st.rerun()


# ----------------------------------------------------------------------------- lecturer
def console(db: cs.ClassStore, code: str, key: str) -> None:
    _console(code, key)


def _refusals(body):
    """A lecturer action the store refuses (the session ended or expired meanwhile, in another
    tab say) is said in words, and the lecturer's controls go."""
    import functools

    @functools.wraps(body)
    def run(*args, **kwargs):
        try:
            return body(*args, **kwargs)
        except cs.Refused as err:
            forget()
            st.error(f"{err} Start a new session on the class page.", icon=":material/error:")

    return run


@st.fragment
@_refusals
def _console(code: str, key: str) -> None:
    """The console, rerun as one fragment when the class changes (live.follow). After a reveal
    the QR code shrinks: the class has joined, and the results need the projector's height."""
    db = cs.get_store()
    s = db.session(code)
    if s is None:
        st.error("This class session has ended.")
        return
    rnd = s.round
    revealed = rnd is not None and rnd.state == "revealed"
    count = db.count(rnd.id) if rnd is not None and rnd.state != "closed" else 0
    live.follow(code, s.version, count, key="klrl-class-live-console")
    left, right = st.columns([1, 3] if revealed else [2, 3], gap="large")
    with left:
        with st.container(key="class-code"):
            st.markdown(
                f"<p class='klrl-class-label'>Join code</p><p class='klrl-class-code'>"
                f"{html.escape(code)}</p>",
                unsafe_allow_html=True,
            )
        with st.container(key="class-join"):
            link = join_link(code)
            qr_code(link, 150 if revealed else 300)
            st.markdown(
                f"<p class='klrl-class-link'>{html.escape(link)}</p>", unsafe_allow_html=True
            )
        _session_buttons(db, code, key)
    with right:
        _console_round(db, code, key, rnd, count)


def _session_buttons(db: cs.ClassStore, code: str, key: str) -> None:
    with st.container(horizontal=True):
        if st.button(
            "Bring everyone here",
            key="class-here",
            icon=":material/group_add:",
            help="Sends every student's screen to this class page.",
        ):
            db.bring_here(code, key, "class", {})
            live.nudge(code)
            st.markdown(
                "<span role='status'>Sent everyone to the class page.</span>",
                unsafe_allow_html=True,
                width="content",
            )
        if st.button(
            "End the session",
            key="class-end",
            icon=":material/delete:",
            help="Ends the class now and deletes every answer.",
        ):
            db.end(code, key)
            live.nudge(code)
            forget()
            st.query_params.clear()
            st.rerun(scope="app")


def _console_round(
    db: cs.ClassStore, code: str, key: str, rnd: cs.Round | None, count: int
) -> None:
    bank = questions.bank()
    ids = list(bank)
    if (
        rnd is not None
        and rnd.qid in bank
        and st.session_state.get("klrl-class-shown") != (code, rnd.id)
    ):
        # the select follows the question on screen (after a reload, or a number asked from a
        # page), so Open never opens another question than the one shown
        st.session_state["klrl-class-shown"] = (code, rnd.id)
        st.session_state["class-question"] = rnd.qid
    with st.container(horizontal=True, vertical_alignment="bottom"):
        qid = st.selectbox(
            "Question",
            ids,
            key="class-question",
            width="stretch",
            format_func=lambda i: f"{i} · {bank[i].prompt}",
        )
        if st.button("Open", key="class-open", type="primary", icon=":material/play_arrow:"):
            db.open_question(code, key, questions.to_spec(bank[qid]))
            live.nudge(code)
            st.rerun(scope="fragment")
    if rnd is None or rnd.state == "closed":
        st.markdown(
            "No question is open. Choose one and open it: the students' screens show "
            "it, and this screen shows how many have answered."
        )
    else:
        spec = rnd.spec
        st.markdown(
            f"<p class='klrl-class-prompt'>{html.escape(spec['prompt'])} "
            f"<span class='klrl-class-id'>{html.escape(rnd.qid)}</span></p>",
            unsafe_allow_html=True,
        )
        with st.container(horizontal=True, vertical_alignment="center"):
            st.markdown(
                "<p class='klrl-class-label'>Answers</p>", unsafe_allow_html=True, width="content"
            )
            with st.container(key="class-count", width="content"):
                st.markdown(f"<p class='klrl-class-count'>{count}</p>", unsafe_allow_html=True)
            if rnd.state == "open" and st.button(
                "Reveal", key="class-reveal", type="primary", icon=":material/visibility:"
            ):
                db.reveal(code, key)
                live.nudge(code)
                st.rerun(scope="fragment")
            if st.button("Close the question", key="class-close", icon=":material/close:"):
                db.close(code, key)
                live.nudge(code)
                st.rerun(scope="fragment")
        if rnd.state == "revealed":
            with st.container(key="class-results"):
                results(spec, db.results(code, key, rnd.id), "class-results-chart", rnd.id)


# ----------------------------------------------------------------------------- student
@st.fragment
def student(code: str) -> None:
    db = cs.get_store()
    s = _session(db, code)
    if s is None:
        st.error("This class session has ended. Thank you for taking part.")
        forget()
        return
    shown_open = s.round.id if s.round is not None and s.round.state == "open" else None
    live.follow(code, s.version, key="klrl-class-live-student", open_round=shown_open)
    if _brought(s):
        return
    rnd = s.round
    st.markdown(
        f"<p class='klrl-ref'>Class {html.escape(code)} · anonymous: no name is asked or kept</p>",
        unsafe_allow_html=True,
    )
    if rnd is None or rnd.state == "closed":
        st.info(
            "Waiting for the lecturer's next question. This screen changes by itself.",
            icon=":material/hourglass_top:",
        )
        return
    spec, sid = rnd.spec, student_id()
    if joined() is not None:
        joined()["asked"] = rnd.id  # seen here: the banner elsewhere does not pull back
    if st.session_state.get(ROUND_SEEN) != (code, rnd.id):  # a new question: an empty input
        st.session_state[ROUND_SEEN] = (code, rnd.id)
        st.session_state.pop("class-answer", None)
    mine = db.answer_of(rnd.id, sid)
    st.markdown(
        f"<p class='klrl-class-prompt'>{html.escape(spec['prompt'])}</p>", unsafe_allow_html=True
    )
    if rnd.state == "open":
        _answer_box(db, code, spec, mine)
        return
    with st.container(key="class-truth"):
        st.markdown(
            f"<div role='status' aria-live='polite'><p class='klrl-class-label'>"
            f"True value</p><p class='klrl-class-count'>"
            f"{html.escape(shown(spec, spec['truth'], truth=True))}</p></div>",
            unsafe_allow_html=True,
        )
    if mine is None:
        st.markdown("You did not answer this one.")
    else:
        verdict = "right" if questions.is_right(spec, mine) else "not within the tolerance"
        st.markdown(f"Your answer: **{html.escape(shown(spec, mine))}** ({verdict}).")
    results(
        spec, _revealed_answers(db, code, rnd.id), "class-student-chart", rnd.id, truth_line=False
    )
    figure_link(spec)


def _answer_box(db: cs.ClassStore, code: str, spec: dict, mine) -> None:
    # hidden while the truth from a reveal's news shows (explorer.py): the question is over
    with st.container(key="class-answer-box"):
        _answer_form(db, code, spec, mine)


def _answer_form(db: cs.ClassStore, code: str, spec: dict, mine) -> None:
    if spec["kind"] == "choice":
        raw = st.radio("Your answer", spec["choices"], index=None, key="class-answer")
    else:
        raw = st.number_input(
            f"Your answer, from {shown(spec, spec['lo'])} to {shown(spec, spec['hi'])}",
            min_value=float(spec["lo"]),
            max_value=float(spec["hi"]),
            step=float(spec["step"]),
            value=None,
            format=f"%.{places(spec)}f",
            key="class-answer",
            placeholder="type a number",
        )
    note = st.empty()
    if st.button("Submit", key="class-submit", type="primary", icon=":material/send:"):
        if raw is None:  # nothing chosen, or a number the box refused (out of range)
            note.warning(
                "Choose an answer first."
                if spec["kind"] == "choice"
                else f"Type a number from {shown(spec, spec['lo'])} to "
                f"{shown(spec, spec['hi'])}: the box keeps only such a number."
            )
            return
        try:
            mine = db.submit(code, student_id(), raw)
            live.nudge(code)
        except (ValueError, cs.NotOpen, cs.TooFast) as err:
            note.error(str(err))
            return
    if mine is not None:
        note.success(
            f"Your answer: {shown(spec, mine)}. You can change it until the reveal.",
            icon=":material/check:",
        )


def _brought(s: cs.Session) -> bool:
    """Go once to the page and view the lecturer sent everyone to."""
    me = joined()
    if me is None or s.here_version <= me.get("here", 0) or not s.here_page:
        return False
    me["here"] = s.here_version
    go(s.here_page, s.here_query, s.code)
    return True


def go(page: str, query: dict, code: str) -> None:
    if page == "class":
        st.switch_page("pages/class.py", query_params={"class": code})
    target = next((p for p in PAGES if p.url_path == page), None)
    if target is None:
        return
    # That page's controls read the link again (they read it only on a page's first run).
    for k in [k for k in st.session_state if str(k).startswith(f"{page}.")]:
        del st.session_state[k]
    st.switch_page(target.file, query_params=query)


# ----------------------------------------------------------------------------- every page
def page_bar(slug: str, items) -> None:
    """On a figure page: the lecturer's bar, or a joined student's banner (layout.Page)."""
    me = joined()
    if me is None:
        return
    if me["role"] == "lecturer":
        _lecturer_bar(slug, [(str(a), str(b)) for a, b in items or []])
    else:
        _student_banner()


@st.fragment
@_refusals
def _lecturer_bar(slug: str, items: list[tuple[str, str]]) -> None:
    me = joined()
    if me is None or me["role"] != "lecturer":
        return
    db = cs.get_store()
    code, key = me["code"], me["key"]
    query = {k: v for k, v in st.query_params.to_dict().items() if k not in NOT_CARRIED}
    with st.container(horizontal=True, vertical_alignment="bottom", key="klrl-class-bar"):
        # a button, not a link: a link's address (with the key) shows on the projector on hover
        if st.button(
            f"Class {code}: console",
            key="klrl-class-console",
            icon=":material/co_present:",
            type="tertiary",
        ):
            st.switch_page("pages/class.py", query_params={"class": code, "key": key})
        bring_button(slug, query)
        askable = {}
        for label, value in items:  # the readout's single numbers ("1 of 8 correct" is not)
            try:
                askable[label] = questions.readout_question(slug, query, label, value)
            except ValueError:
                pass
        if askable:
            label = st.selectbox(
                "A number of this view",
                list(askable),
                key="klrl-class-number",
                width=220,
                label_visibility="collapsed",
            )
            if st.button(
                "Ask this number",
                key="klrl-class-ask",
                icon=":material/quiz:",
                help="Opens a question whose answer is this number at this view; "
                "the console shows it (not the figure).",
            ):
                db.open_question(code, key, askable[label])
                live.nudge(code)
                st.switch_page("pages/class.py", query_params={"class": code, "key": key})


def bring_button(
    slug: str, query: dict[str, str], label: str = "Bring everyone here", key: str = "class-here"
) -> None:
    """For a lecturer holding a class: send every joined student to ``slug`` with ``query``
    (the view's controls, and the preset's lock and hide when the builder asks), once."""
    me = joined()
    if me is None or me["role"] != "lecturer":
        return
    if st.button(
        label,
        key=key,
        icon=":material/group_add:",
        help="Sends every student of your class session to this page, at this view.",
    ):
        cs.get_store().bring_here(
            me["code"], me["key"], slug, {k: v for k, v in query.items() if k not in NOT_CARRIED}
        )
        live.nudge(me["code"])
        st.markdown("<span role='status'>Sent.</span>", unsafe_allow_html=True, width="content")


@st.fragment
def _student_banner() -> None:
    me = joined()
    if me is None:
        return
    s = cs.get_store().session(me["code"])
    if s is None:
        forget()
        return
    live.follow(s.code, s.version, key="klrl-class-live-banner")
    if _brought(s):
        return
    open_ = s.round is not None and s.round.state == "open"
    if open_ and me.get("asked") != s.round.id:
        # a new question: to the class page, where the question is and the figure is not
        me["asked"] = s.round.id
        go("class", {}, s.code)
    with st.container(horizontal=True, vertical_alignment="center", key="klrl-class-banner"):
        st.markdown(
            f"You are in class **{html.escape(s.code)}**"
            + (" · a question is open" if open_ else ""),
            width="content",
        )
        st.page_link(
            "pages/class.py",
            label="Answer it" if open_ else "Class page",
            icon=":material/co_present:",
            query_params={"class": s.code},
        )
