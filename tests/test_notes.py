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

FIGURE_PAGES = [p for p in nav.PAGES if p.url_path != "exercises"]
FILES = {p.url_path: Path(p.file).name for p in nav.PAGES}
LINKS = sorted({(m.page, m.link): m for s in notes.pages()
                for m in notes.notes_for(s).misconceptions}.values(), key=lambda m: m.link)
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
    assert notices(at) == [], m.link           # no unknown value, none out of range


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
    at.session_state["klrl-groups-lecturer"] = True   # the expander's key: opened
    at.run()
    text = "\n".join(str(m.value) for m in at.markdown)
    assert "(groups?p=0.1&k=8)" in text and "`k`: the group size k" in text
    assert "`p`: the prompt's solve rate p (the slider: 0.01 to 0.99)" in text
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
        "overoptimization", "overoptimization?kappa=10000")


def test_rarity_numbers_by_hand():
    def two(p0, delta, beta):
        odds = p0 / (1 - p0) * math.exp(delta / beta)
        return odds / (1 + odds)
    text = _refutation("rarity", "rarity?p0=1e-9&delta=1&beta=0.04")
    assert f"gets {two(1e-9, 1, 0.04):.3f} of π*" in text
    assert f"β = {1 / math.log((1 - 1e-9) / 1e-9):.4f}" in text     # 0.0483
    text = _refutation("rarity", "rarity?p0=0.01&delta=0.5&beta=0.2")
    assert f"only {two(0.01, 0.5, 0.2):.3f} of π*" in text


def test_groups_numbers_are_the_chapters():
    # Section 12.7.1: p = 0.1, k = 8: signal 0.57; one right of eight: sqrt(7) and -1/sqrt(7).
    text = _refutation("groups", "groups?p=0.1&k=8", "Every")
    assert "probability 0.57" in text and "43%" in text
    text = _refutation("groups", "groups?p=0.1&k=8", "A lucky")
    assert f"{math.sqrt(7):.2f}" in text and f"−{1 / math.sqrt(7):.2f}" in text
    hard = lambda k: 1 - 0.99 ** k - 0.01 ** k  # noqa: E731
    text = _refutation("groups", "groups?p=0.01&k=64")
    assert f"{hard(8):.3f}" in text and f"{hard(64):.3f}" in text


# ----------------------------------------------------------- the questions, when merged
def test_questions_from_the_bank_are_listed_with_their_truths(monkeypatch):
    q = SimpleNamespace(id="tilt-1", prompt="What KL does the optimum spend?",
                        setting={"kappa": "20"}, unit="nats", truth=lambda: 4.757216)
    bank = SimpleNamespace(for_page=lambda page: [q] if page == "tilt" else [])
    monkeypatch.setattr(notes, "_questions", bank)
    text = notes.markdown("tilt")
    assert "What KL does the optimum spend? At [tilt?kappa=20](tilt?kappa=20)." in text
    assert "Answer: **4.76 nats**" in text
    assert "Prediction questions" not in notes.markdown("groups")


def test_bandit_numbers_are_the_chapters():
    # Section 12.1.3: over 4,000 runs, 0.73 and 23 percent below one half without a baseline,
    # 0.86 and 7 percent with one. At the uniform start the baseline E[r] = mean of the arm
    # means = 1.12 leaves the mean gradient pi_a (mu_a - 1.12) = 0.2 * 0.38 = 0.076.
    text = _refutation("bandit", "bandit?baseline=off")
    assert "averages 0.73" in text and "23% of runs" in text
    text = _refutation("bandit", "bandit?baseline=on", "With")
    assert "rises to 0.86" in text and "7% of runs" in text
    text = _refutation("bandit", "bandit?lr=0.15")
    assert "(1.12)" in text and "at 0.076, as without one (0.076)" in text


def test_ppo_slopes_by_hand():
    # Equation (12.2) with A = -1: min(-w, -clip(w)) is -w above 1 + eps (slope -1) and the
    # constant -(1 - eps) below 1 - eps (slope 0).
    text = _refutation("ppo-clip", "ppo-clip?eps=0.2&sign=neg")
    assert "slope in ω is −1.0 at ω = 1.5" in text and "0.0 only below 1 − ε" in text


def test_kl_penalty_numbers_are_the_chapters():
    # Chapter 28's table: k1 as a loss 0.863 reward; pi* 0.729 and KL 0.136; k1 12.1 percent
    # negative, std 0.114 (k3's 0.067 sampled, 0.0675 exactly); k3 as a loss 0.034 from pi*.
    text = _refutation("kl-penalty", "kl-penalty?beta=0.5", "Adding")
    assert "reward 0.863" in text and "has 0.729 and 0.136 nats" in text
    text = _refutation("kl-penalty", "kl-penalty?beta=0.5", "k1 is")
    assert "12.1%" in text and "deviation 0.114" in text
    assert "ends 0.034 from π*" in _refutation("kl-penalty", "kl-penalty?beta=0.5", "k3")


def test_length_bias_numbers_are_the_chapters():
    # Chapter 28's table (mean of 20 runs): GRPO at 1,000 steps 2.1 correct, 12.1 incorrect,
    # from 9.3; Dr. GRPO 9.2 and 9.3; at 300 steps GRPO 2.2 and 11.5.
    text = _refutation("length-bias", "length-bias?steps=1000")
    assert "average 12.1 tokens (from 9.3) and right ones 2.1" in text
    assert "ends at 9.3 and 9.2" in text
    assert "11.5 tokens against 2.2" in _refutation("length-bias", "length-bias?steps=300")


def test_normalization_numbers_by_hand():
    # Exercise 28.4(b): one success in eight, centred 7/8 and -1/8, leave-one-out 1 and -1/7.
    text = _refutation("normalization", "normalization?k=8")
    assert "(0.875, −0.125)" in text and f"(1.000, −{1 / 7:.3f})" in text
    text = _refutation("normalization", "normalization?k=8&p=0.01")
    assert f"gives {0.875 / math.sqrt(0.01 * 0.99):.2f}" in text and "2.65" in text


def test_entropy_numbers_by_hand():
    def h(z):
        p = [math.exp(v) for v in z]
        s = sum(p)
        return -sum(q / s * math.log(q / s) for q in p)
    text = _refutation("entropy", "entropy?preset=uniform&eta=2")
    assert f"from {math.log(5):.3f} to {h([2, 0, 0, 0, 0]):.3f}" in text
    # confident on the rewarded action, eta = 2: logits log(0.7, ...) + 2 on the first
    right = [math.log(0.7) + 2, math.log(0.12), math.log(0.08), math.log(0.06), math.log(0.04)]
    assert f"is {h(right):.3f}" in _refutation(
        "entropy", "entropy?preset=confident_right&eta=2")


def test_pass_at_k_numbers_by_hand():
    odds = 0.001 / 0.999 * math.exp(1 / 5)
    p_star = odds / (1 + odds)
    text = _refutation("pass-at-k", "pass-at-k?p=0.001&beta=5&k=1024")
    assert f"is {p_star:.3g}" in text
    assert f"from {1 - 0.999 ** 1024:.3f} to {1 - (1 - p_star) ** 1024:.3f}" in text
    text = _refutation("pass-at-k", "pass-at-k?k=32")
    assert "from 0.175 to 0.450" in text
    assert f"from {1 - (0.7 ** 32 + 0.95 ** 32) / 2:.3f} to 0.500" in text
    # Exercise 28.7(a): the plug-in estimate's mean, by enumerating c ~ Binomial(20, 0.05)
    plug = sum(math.comb(20, c) * 0.05 ** c * 0.95 ** (20 - c) * (1 - (1 - c / 20) ** 20)
               for c in range(21))
    text = _refutation("pass-at-k", "pass-at-k?p=0.05&k=20&samples=20")
    assert f"pass@20 is {1 - 0.95 ** 20:.3f}" in text and f"averages {plug:.3f}" in text


def test_loop_base_numbers_by_hand():
    # 20 common problems solved with 0.3 and 4 rare ones with 0.05 by the base model.
    text = _refutation("loop", "loop?step=300", "Training")
    assert f"from {(20 * 0.3 + 4 * 0.05) / 24:.3f}" in text
    assert "(base 0.050)" in text


def test_token_credit_difference_is_the_reward_difference():
    # Exercise 28.2(b): the implicit rewards of abc and aba differ by r(abc) - r(aba) = 0.2.
    text = _refutation("token-credit", "token-credit?kappa=2&reward=middle&y=abc&y2=aba")
    assert "rewards, 0.200, sits" in text


def test_step_labels_numbers_by_hand():
    text = _refutation("step-labels", "step-labels?skill=0.4&error=3")
    assert f"is {0.4 ** 5:.3f}" in text and "third step's 0.050" in text
    assert f"below {0.05 ** (1 / 5):.3f}" in text
    text = _refutation("step-labels", "step-labels?n=1024&error=3")
    assert f"averages {1 - (1 - 0.6 ** 5) ** 8:.3f}" in text and f"{1 - 0.95 ** 8:.3f}" in text


def test_dpo_deterministic_limit_leaves_only_the_best():
    # Azar et al. (Section 12.6.2): a response that always wins drives every other to zero.
    text = _refutation("dpo", "dpo?kappa=20&pairs=all&labels=deterministic")
    assert "best response 1.000 and 29 of the 30" in text and "gives the best response 0.079" in text
