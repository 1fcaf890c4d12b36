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
    at.number_input(key="class-answer").set_value(0.9)       # a change replaces it
    at.button(key="class-submit").click().run()
    assert db.count(rid) == 1 and db.results(code, key, rid) == [0.9]
    db.reveal(code, key)
    at.run()
    shown = texts(at)
    assert "True value" in shown and "0.57" in shown            # 1 − 0.9⁸ − 0.1⁸ = 0.5695…
    assert "Your answer: **0.9**" in shown


def test_a_choice_question():
    db = cs.get_store()
    code, key = db.start()
    spec = questions.to_spec(questions.bank()["entropy/confident-wrong"])
    rid = db.open_question(code, key, spec)
    at = run_page(PAGE, **{"class": code})
    radio = at.radio(key="class-answer")
    assert list(radio.options) == list(spec["choices"]) and radio.value is None
    at.button(key="class-submit").click().run()               # nothing chosen: nothing stored
    assert db.count(rid) == 0 and at.warning
    at.radio(key="class-answer").set_value(spec["choices"][1])
    at.button(key="class-submit").click().run()
    assert db.results(code, key, rid) == [spec["choices"][1]]
    db.reveal(code, key)
    at.run()
    assert str(spec["truth"]) in texts(at)
