"""Notes for the lecturer (klrl_app/notes.py, issue 34 item 3): on every figure page, closed,
absent from the presentation view and a student's screen; links that a page reads without a
notice; numbers checked against the chapters' printed values and hand computations."""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from klrl_app import nav, notes
from tests.conftest import ROOT, assert_clean, notices, run_page

FIGURE_PAGES = nav.FIGURE_PAGES
FILES = {p.url_path: Path(p.file).name for p in nav.PAGES}
LINKS = sorted(
    {
        (m.page, m.link): m for s in notes.pages() for m in notes.notes_for(s).misconceptions
    }.values(),
    key=lambda m: m.link,
)
# Names a page's link may carry besides its own: κ's second name (controls.Controls.kappa,
# rarity's inverse_alias) and the presentation view.
ALIASES = {"kappa": "beta", "beta": "kappa"}


def _lecturer_boxes(at) -> list:
    return [e for e in at.expander if e.label == notes.TITLE]


def test_every_figure_page_has_notes():
    assert sorted(notes.pages()) == sorted(p.url_path for p in FIGURE_PAGES)
    for slug in notes.pages():
        n = notes.notes_for(slug)
        assert n.point and n.point.endswith(".")
        assert 2 <= len(n.misconceptions) <= 3, slug
        for m in n.misconceptions:
            assert m.claim and m.refutation and re.search(r"\d", m.refutation), m
        assert set(notes.PARAMS[slug]), slug


def _allowed(slug: str) -> set[str]:
    names = set(notes.PARAMS[slug])
    return names | {ALIASES[n] for n in names if n in ALIASES} | set(notes.COMMON_PARAMS)


@pytest.mark.parametrize("m", LINKS, ids=lambda m: m.link)
def test_each_misconceptions_link_is_read_without_a_notice(m):
    assert set(m.setting) <= _allowed(m.page), m.link
    at = run_page(FILES[m.page], timeout=180, **m.setting)
    assert_clean(at)
    assert notices(at) == [], m.link  # no unknown value, none out of range


@pytest.mark.parametrize("page", FIGURE_PAGES, ids=lambda p: p.url_path)
def test_declared_parameters_are_the_pages_own(page):
    """Every name a page writes to its link is declared, and every declared name is one the
    page (or the tilt pages' shared model control) reads."""
    at = run_page(FILES[page.url_path], timeout=180)
    declared = set(notes.PARAMS[page.url_path])
    written = set(at.query_params)
    assert written <= declared | set(notes.COMMON_PARAMS)
    # names written only when set (the model's lists, an optional count) are read by name
    source = (ROOT / page.file).read_text() + (ROOT / "klrl_app" / "tilt_figures.py").read_text()
    for name in declared - written:
        assert f'"{name}"' in source, (page.url_path, name)
    # the section is there, closed, on an ordinary screen
    boxes = _lecturer_boxes(at)
    assert len(boxes) == 1 and not boxes[0].proto.expanded


@pytest.mark.parametrize("file", ["tilt.py", "groups.py"])
def test_absent_from_the_presentation_view(file):
    at = run_page(file, present="1")
    assert_clean(at)
    assert _lecturer_boxes(at) == []


def test_absent_from_a_students_screen():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "tilt.py"), default_timeout=60)
    at.session_state[notes.STUDENT_KEY] = True
    at.run()
    assert_clean(at)
    assert _lecturer_boxes(at) == []


def test_open_notes_render_the_links_and_parameters():
    at = run_page("groups.py")
    box = _lecturer_boxes(at)[0]
    at.session_state["klrl-groups-lecturer"] = True  # the expander's key: opened
    at.run()
    text = "\n".join(str(m.value) for m in at.markdown)
    assert "(groups?p=0.1&k=8)" in text and "`k`: the group size k" in text
    assert "`p`: the prompt's solve rate p; the slider runs from 0.01 to 0.99" in text
    assert box.label == notes.TITLE


# ------------------------------------------------------- the numbers, independently
def _refutation(slug: str, link: str, claim_start: str = "") -> str:
    for m in notes.notes_for(slug).misconceptions:
        if m.link == link and m.claim.startswith(claim_start):
            return m.refutation
    raise KeyError(link)


def test_tilt_numbers_are_the_chapters():
    # Section 12.3.3: beta = 1 spends 0.01 nats and raises 0.31 to 0.34; beta = 0.1: 1.39
    # nats and 0.59; beta = 0.05: 4.76 nats and 0.82; Sec. 12.5.3: the optimum gives the best
    # response 8 percent at beta = 0.05.
    text = _refutation("tilt", "tilt?kappa=1")
    assert "0.013 nats" in text and "from 0.31 to 0.34" in text
    text = _refutation("tilt", "tilt?kappa=20", "Reward")
    assert "from 1.39 to 4.76 nats" in text and "from 0.59 to 0.82" in text
    assert "β = 0.05 per nat" in text
    assert "gets 0.079 of π*" in _refutation("tilt", "tilt?kappa=20", "The optimum")


def test_best_of_n_numbers():
    # Exercise 12.2 by hand: best-of-2 on a fair coin returns heads with 3/4.
    kl = 0.75 * math.log(1.5) + 0.25 * math.log(0.5)
    bound = math.log(2) - 0.5
    text = _refutation("best-of-n", "best-of-n?pi0=0.5,0.5&r=0,1&n=2")
    assert f"spends {kl:.3f} nats" in text and f"says {bound:.3f}" in text
    # Section 12.5.3: best-of-324 earns 0.79 at the optimum's 4.76 nats (0.82); 22 percent on
    # one response below the top.
    text = _refutation("best-of-n", "best-of-n?kappa=20", "At the same")
    assert "best-of-324" in text and "earns 0.82" in text and "earns 0.79" in text
    assert "puts 0.220 on one" in _refutation("best-of-n", "best-of-n?kappa=20", "With n")


def test_overoptimization_numbers_are_the_chapters():
    # Section 12.8.1: peak 0.55 at 3.2 nats; at beta = 0.03 proxy 0.94, true 0.46; reference 0.31.
    text = _refutation("overoptimization", "overoptimization?beta=0.03")
    assert "proxy reward is 0.94" in text and "true reward is 0.46" in text
    assert "peak of 0.55 at 3.2 nats" in text
    assert "against 0.31 for the reference" in _refutation(
        "overoptimization", "overoptimization?kappa=10000"
    )


def test_rarity_numbers_by_hand():
    def two(p0, delta, beta):
        odds = p0 / (1 - p0) * math.exp(delta / beta)
        return odds / (1 + odds)

    text = _refutation("rarity", "rarity?p0=1e-9&delta=1&beta=0.04")
    assert f"gets {two(1e-9, 1, 0.04):.3f} of π*" in text
    assert f"β = {1 / math.log((1 - 1e-9) / 1e-9):.4f}" in text  # 0.0483
    text = _refutation("rarity", "rarity?p0=0.01&delta=0.5&beta=0.2")
    assert f"only {two(0.01, 0.5, 0.2):.3f} of π*" in text


def test_groups_numbers_are_the_chapters():
    # Section 12.7.1: p = 0.1, k = 8: signal 0.57; one right of eight: sqrt(7) and -1/sqrt(7).
    text = _refutation("groups", "groups?p=0.1&k=8", "Every")
    assert "probability 0.57" in text and "43%" in text
    text = _refutation("groups", "groups?p=0.1&k=8", "A lucky")
    assert f"{math.sqrt(7):.2f}" in text and f"−{1 / math.sqrt(7):.2f}" in text
    hard = lambda k: 1 - 0.99**k - 0.01**k  # noqa: E731
    text = _refutation("groups", "groups?p=0.01&k=64")
    assert f"{hard(8):.3f}" in text and f"{hard(64):.3f}" in text


# ----------------------------------------------------------- the questions, when merged
def test_questions_from_the_bank_are_listed_with_their_truths(monkeypatch):
    def spec(q):
        truth = q.truth()
        return {"truth": truth, "unit": q.unit, "explain": f"Explained: {truth}."}

    tilt_q = SimpleNamespace(
        id="tilt/kl",
        prompt="What KL does the optimum spend?",
        setting={"kappa": "20"},
        unit="nats",
        truth=lambda: 4.757216,
    )
    share = SimpleNamespace(
        id="groups/flat",
        prompt="What share of groups is flat?",
        setting={"p": "0.1", "k": "8"},
        unit="%",
        truth=lambda: 43.06,
    )
    pick = SimpleNamespace(
        id="groups/which",
        prompt="Which prompt teaches more?",
        setting={},
        unit="",
        truth=lambda: "the harder one",
    )
    bank = SimpleNamespace(
        for_page=lambda page: {"tilt": [tilt_q], "groups": [share, pick]}.get(page, []),
        to_spec=spec,
    )
    monkeypatch.setattr(notes, "_questions", bank)
    text = notes.markdown("tilt")
    assert "What KL does the optimum spend? At [tilt?kappa=20](tilt?kappa=20)." in text
    assert "Answer: **4.76 nats** (Explained: 4.757216.)" in text
    text = notes.markdown("groups")
    assert "At [groups?p=0.1&k=8](groups?p=0.1&k=8). Answer: **43.1%**" in text
    assert "Which prompt teaches more? Answer: **the harder one**" in text
    assert "Prediction questions" not in notes.markdown("rarity")


@pytest.mark.parametrize("slug", notes.pages())
def test_every_pages_notes_render_with_the_installed_bank(slug):
    """Whatever bank is installed (none, or klrl_app/classroom/questions.py once merged)."""
    text = notes.markdown(slug)
    assert text.count("- “") == len(notes.notes_for(slug).misconceptions)
    assert "**This page's link parameters**" in text and not re.search(r"\bnan\b|\binf\b", text)


def test_stars_and_dollars_are_shown_as_written():
    # π* twice on a line would otherwise be read as emphasis, and $…$ as mathematics
    text = notes.markdown("tilt")
    assert "of π\\* (π₀" in text and "π* " not in text
    assert notes._md("costs $5 and $6") == "costs \\$5 and \\$6"
