"""The printable handout (issue 34, item 4): its content, downloads and page (AppTest). The
print to PDF is checked in a real browser in tests/e2e/test_handout_print.py."""

from __future__ import annotations

import csv
import html
import io
import re

from klrl_app import nav
from klrl_app.classroom import handout
from klrl_app.classroom import questions as Q
from tests.conftest import assert_clean, run_page

BASE = "https://lecture.example/app"


def test_every_question_once_in_the_apps_page_order():
    order = [p.url_path for p in nav.PAGES]
    got = [(page.url_path, e.spec["id"]) for page, entries in handout.sections() for e in entries]
    assert sorted(qid for _, qid in got) == sorted(Q.bank())
    assert [p for p, _ in got] == sorted((p for p, _ in got), key=order.index)
    numbers = [e.number for _, entries in handout.sections() for e in entries]
    assert numbers == list(range(1, len(Q.bank()) + 1))


def test_links_reproduce_the_settings():
    spec = Q.to_spec(Q.bank()["overoptimization/peak"])
    assert handout.link(spec) == "overoptimization?kappa=20"
    assert handout.link(spec, BASE + "/") == BASE + "/overoptimization?kappa=20"
    spec = Q.to_spec(Q.bank()["rarity/threshold"])
    assert handout.link(spec) == "rarity?p0=1e-09&delta=1&beta=0.05"
    assert handout.base_of(BASE + "/handout?x=1") == BASE
    assert handout.base_of("http://localhost:8501/handout") == "http://localhost:8501"
    assert handout.base_of("") == "" and handout.base_of(None) == ""
    assert handout.base_of("http://localhost:8501/tilt") == ""


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def test_questions_come_first_and_the_answers_after_a_page_break():
    body = handout.standalone_html(BASE)
    assert "break-before: page" in body and "@media print" in body
    questions, answers = body.split("<h2>Answers</h2>")
    assert "klrl-answers" in questions[-60:]  # the answers' section opens the break
    q_text, a_text = _text(questions), _text(answers)
    for _, entries in handout.sections():
        for e in entries:
            s = e.spec
            assert s["prompt"] in q_text and handout.link(s, BASE) in q_text
            assert f"Q{e.number}. {Q.truth_text(s)}" in a_text and s["explain"] in a_text
            assert s["explain"] not in q_text  # no answer on the sheet
            if s["kind"] == Q.NUMBER:
                assert Q.input_text(s) in q_text
            else:
                assert all(f"☐ {c}" in q_text for c in s["choices"])


def test_markdown_and_csv_carry_the_same():
    md = handout.markdown(BASE)
    questions, answers = md.split("## Answers")
    rows = list(csv.DictReader(io.StringIO(handout.csv_text(BASE))))
    assert len(rows) == len(Q.bank())
    for row, (_, e) in zip(rows, [(p, e) for p, es in handout.sections() for e in es]):
        s = e.spec
        assert row["id"] == s["id"] and row["number"] == str(e.number)
        assert row["answer"] == Q.truth_text(s) and row["explanation"] == s["explain"]
        assert row["link"] == handout.link(s, BASE)
        full = row["truth (full precision)"]
        assert (full == s["truth"]) if s["kind"] == Q.CHOICE else float(full) == s["truth"]
        assert s["prompt"] in questions and s["explain"] not in questions
        assert f"**Q{e.number}. {Q.truth_text(s)}**" in answers and s["explain"] in answers


def test_the_page_shows_the_handout_and_its_downloads():
    at = run_page("handout.py", timeout=180)
    assert_clean(at)
    shown = _text(" ".join(str(h.proto.body) for h in at.get("html")))
    assert handout.TITLE in shown and "Answers" in shown
    for q in Q.bank().values():
        assert q.prompt in shown
    keys = {b.proto.id for b in at.get("download_button")}
    assert len(keys) == 3
