"""The class page (pages/class.py) through AppTest, on a SQLite store of its own: start, the
console's elements by their SPEC.md keys, a wrong key, a wrong code, a student's answer and the
truth after the reveal. The browser test (tests/e2e/test_class_browser.py) runs a whole class."""

from __future__ import annotations

import pytest

from klrl_app.classroom import questions, store as cs
from tests.conftest import run_page

PAGE = "class.py"


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("KLRL_CLASS_DB_URL", raising=False)
    monkeypatch.setenv("KLRL_DATA_DIR", str(tmp_path))
    yield tmp_path


def texts(at) -> str:
    return "\n".join(str(m.value) for m in at.markdown)


def test_start_a_session():
    at = run_page(PAGE)
    assert at.button(key="class-start") is not None
    assert at.text_input(key="class-typed-code") is not None
    at.button(key="class-start").click().run()
    code, key = at.query_params["class"], at.query_params["key"]
    code = code[0] if isinstance(code, list) else code
    key = key[0] if isinstance(key, list) else key
    db = cs.get_store()
    assert db.is_lecturer(code, key)
    shown = texts(at)
    assert code in shown and key not in shown
    for k in ("class-open", "class-here", "class-end"):
        assert at.button(key=k) is not None
    assert at.selectbox(key="class-question").options[0].split(" · ")[0] in questions.bank()


def test_a_wrong_key_shows_no_lecturer_control():
    code, _ = cs.get_store().start()
    at = run_page(PAGE, **{"class": code, "key": "not-the-key"})
    assert "does not open class" in " ".join(e.value for e in at.error)
    for k in ("class-open", "class-reveal", "class-here", "class-end"):
        with pytest.raises(KeyError):
            at.button(key=k)
    assert at.text_input(key="class-typed-code") is not None


def test_a_wrong_code_says_so():
    at = run_page(PAGE, **{"class": "ZZZZZZ"})
    assert "No running class has the code ZZZZZZ" in " ".join(e.value for e in at.error)
    assert at.text_input(key="class-typed-code") is not None


def test_a_student_answers_and_sees_the_truth():
    db = cs.get_store()
    code, key = db.start()
    spec = questions.to_spec(questions.bank()["groups/signal"])
    rid = db.open_question(code, key, spec)
    at = run_page(PAGE, **{"class": code})
    with pytest.raises(KeyError):
        at.button(key="class-open")
    at.number_input(key="class-answer").set_value(0.6)
    at.button(key="class-submit").click().run()
    assert db.count(rid) == 1
    assert "Your answer: 0.6" in " ".join(s.value for s in at.success)
    at.number_input(key="class-answer").set_value(0.9)  # a change replaces it
    at.button(key="class-submit").click().run()
    assert db.count(rid) == 1 and db.results(code, key, rid) == [0.9]
    db.reveal(code, key)
    at.run()
    shown = texts(at)
    assert "True value" in shown and "0.57" in shown  # 1 − 0.9⁸ − 0.1⁸ = 0.5695…
    assert "Your answer: **0.9**" in shown


def test_a_choice_question():
    db = cs.get_store()
    code, key = db.start()
    spec = questions.to_spec(questions.bank()["entropy/confident-wrong"])
    rid = db.open_question(code, key, spec)
    at = run_page(PAGE, **{"class": code})
    radio = at.radio(key="class-answer")
    assert list(radio.options) == list(spec["choices"]) and radio.value is None
    at.button(key="class-submit").click().run()  # nothing chosen: nothing stored
    assert db.count(rid) == 0 and at.warning
    at.radio(key="class-answer").set_value(spec["choices"][1])
    at.button(key="class-submit").click().run()
    assert db.results(code, key, rid) == [spec["choices"][1]]
    db.reveal(code, key)
    at.run()
    assert str(spec["truth"]) in texts(at)


def test_joining_as_a_student_hides_the_lecturers_notes():
    """notes.show leaves out "For the lecturer" where notes.STUDENT_KEY is set: joining as a
    student sets it, the lecturer's console does not (tests/test_notes.py checks the page)."""
    from klrl_app import notes

    db = cs.get_store()
    code, key = db.start()
    student = run_page(PAGE, **{"class": code})
    assert student.session_state[notes.STUDENT_KEY] is True
    lecturer = run_page(PAGE, **{"class": code, "key": key})
    assert lecturer.session_state[notes.STUDENT_KEY] is False


def test_the_builder_brings_everyone_to_a_preset_with_its_locks():
    """ "Prepare a link" on a figure page, for a lecturer holding a class: "Bring everyone to
    this preset" sends the students to the view with the ticked lock and hide (issue 34,
    item 2); a student or a reader without a class gets no such button."""
    from streamlit.testing.v1 import AppTest

    from klrl_app.classroom import ui
    from tests.conftest import ROOT

    db = cs.get_store()
    code, key = db.start()

    def tilt(role: str | None):
        at = AppTest.from_file(str(ROOT / "pages" / "tilt.py"), default_timeout=60)
        if role:
            at.session_state[ui.ROLE_KEY] = {
                "code": code,
                "key": key if role == "lecturer" else None,
                "role": role,
                "here": 0,
            }
        at.session_state["klrl-tilt-prepare"] = True  # the builder, opened
        at.session_state["prepare.tilt.lock.kappa"] = True
        at.session_state["prepare.tilt.hide.axis"] = True
        return at.run()

    for role in (None, "student"):
        with pytest.raises(KeyError):
            tilt(role).button(key="klrl-tilt-bring-preset")
    at = tilt("lecturer")
    at.button(key="klrl-tilt-bring-preset").click().run()
    s = db.session(code)
    assert s.here_page == "tilt" and s.here_query["lock"] == "kappa"
    assert s.here_query["hide"] == "axis" and s.here_query["kappa"] == "5"
    assert "key" not in s.here_query and "class" not in s.here_query


def test_a_readout_question_says_its_page_and_setting():
    """ "Ask this number" may reach a phone after the projector has moved on: the prompt names
    the page and the view's settings."""
    spec = questions.readout_question(
        "overoptimization", {"kappa": "20", "axis": "kl"}, "KL(π* ‖ π₀)", "4.76 nats"
    )
    assert "Overoptimizing a proxy" in spec["prompt"] and "kappa = 20" in spec["prompt"]


def test_the_console_select_follows_the_question_on_screen():
    db = cs.get_store()
    code, key = db.start()
    db.open_question(code, key, questions.to_spec(questions.bank()["groups/signal"]))
    at = run_page(PAGE, **{"class": code, "key": key})  # a reload of the console
    assert at.selectbox(key="class-question").value == "groups/signal"


def test_an_empty_number_box_says_the_range():
    db = cs.get_store()
    code, key = db.start()
    rid = db.open_question(code, key, questions.to_spec(questions.bank()["groups/signal"]))
    at = run_page(PAGE, **{"class": code})
    at.button(key="class-submit").click().run()  # an out-of-range entry leaves it empty
    assert db.count(rid) == 0
    assert "from 0 to 1" in " ".join(w.value for w in at.warning)
