"""The class sessions' question bank (issue 32, item 2): every truth pinned independently of
klrl_core (the chapters' printed numbers, hand computation, enumeration, a slow second
implementation), every setting a valid link to its page, answers read and judged, "this
number" on real readouts, and the results figure's text alternative."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from klrl_app import nav
from klrl_app.classroom import questions as Q
from tests.conftest import BAD_TEXT, assert_clean, metrics, notices, run_page

FIGURE_PAGES = [p.url_path for p in nav.FIGURE_PAGES]
AT_LEAST_TWO = ("bandit", "tilt", "best-of-n", "groups", "overoptimization")
SPEC_FIVE = {  # SPEC.md, "Class sessions and presets": id -> setting
    "groups/signal": {"p": "0.1", "k": "8"},
    "overoptimization/peak": {"kappa": "20"},
    "bandit/below-half": {"lr": "0.15", "baseline": "off"},
    "best-of-n/n": {"kappa": "20"},
    "tilt/reward": {"kappa": "20"},
}


# ----------------------------------------------------------------------------- the model, again
def book_by_hand():
    """SPEC.md's model written out again: 30 rewards, Gaussian-shaped π₀, the bent true reward."""
    r = np.linspace(0.0, 1.0, 30)
    w = np.exp(-((r - 0.3) ** 2) / (2 * 0.17**2))
    return w / w.sum(), r, r - 2.4 * np.maximum(r - 0.5, 0.0) ** 2


def tilt_by_hand(kappa):
    pi0, r, _ = book_by_hand()
    logits = np.log(pi0) + kappa * (r - r.max())
    pi = np.exp(logits - logits.max())
    pi /= pi.sum()
    return pi, float(pi @ np.log(pi / pi0))


def peak_kl_by_grid():
    """Figure 12.5's peak by brute force: E[r*] on a dense κ grid, no bisection."""
    _, _, rt = book_by_hand()
    best = max((float(tilt_by_hand(k)[0] @ rt), k) for k in np.linspace(10, 25, 30001))
    return tilt_by_hand(best[1])[1]


def grpo_weight_by_enumeration(p, k):
    """E[A_1 | r_1 = 1] − E[A_1 | r_1 = 0] with A = (r − mean)/std over all 2^k groups."""
    right = wrong = pr = pw = 0.0
    for grades in itertools.product((0, 1), repeat=k):
        g = np.array(grades, float)
        prob = p ** g.sum() * (1 - p) ** (k - g.sum())
        a = 0.0 if g.std() == 0 else (g[0] - g.mean()) / g.std()
        if g[0] == 1:
            right, pr = right + prob * a, pr + prob
        else:
            wrong, pw = wrong + prob * a, pw + prob
    return right / pr - wrong / pw


def entropy_by_hand(probs, adv, eta):
    z = np.log(probs) + eta * np.asarray(adv, float)
    p = np.exp(z - z.max())
    p /= p.sum()
    return float(-(p * np.log(p)).sum())


def ppo_epochs_by_hand(method):
    """Ten full-batch steps on the default batch, one sample at a time: KL to π_old at the end."""
    from klrl_core import ppo_clip as pc

    batch = pc.draw_batch(pc.DEFAULT_P_OLD, pc.DEFAULT_REWARDS, 64, 0)
    p_old = np.exp(batch.log_p_old)
    z = batch.log_p_old.copy()
    for _ in range(10):
        pi = np.exp(z - z.max())
        pi /= pi.sum()
        step = np.zeros_like(z)
        for a, adv in zip(batch.actions, batch.advantages):
            w = pi[a] / p_old[a]
            off = method == "ppo" and ((adv > 0 and w > 1.2) or (adv < 0 and w < 0.8))
            if not off:
                step += w * adv * (np.eye(z.size)[a] - pi)
        z = z + 2.0 * step / len(batch.actions)
    pi = np.exp(z - z.max())
    pi /= pi.sum()
    return float(pi @ np.log(pi / p_old))


def pass_at_k_by_hand(shared, k):
    """pass@k of the loop's default run before and after, from its exact solve rates."""
    from klrl_core import loop

    s = loop.run(shared=shared).success  # (runs, steps + 1, problems)
    return [float(np.mean(1 - (1 - s[:, t]) ** k)) for t in (0, -1)]


# id -> (expected, tolerance) for numbers, expected string for choices. Tolerances follow the
# printed precision (half a unit in the last printed digit) or Monte Carlo error.
PINS = {
    # Figure 12.1: "0.73 without a baseline, and 23 percent ... below one half ... 7 percent"
    "bandit/below-half": (23.0, 1.5),
    "bandit/mean": (0.73, 0.006),
    "bandit/baseline-below-half": (7.0, 1.0),
    # Figure 12.2 and Section 12.3: "at β = 0.05 ... 4.76 nats and reaches 0.82"; κ = 5: 0.34
    "tilt/reward": (0.82, 0.005),
    "tilt/kl": (0.34, 0.005),
    # the limit log(1/π₀(top)), π₀(top) printed as 1.74 × 10⁻⁵
    "tilt/kl-limit": (-math.log(1.74e-5), 0.005),
    # Figure 12.3: best-of-324, 0.79, the formula 4.78 against 4.76
    "best-of-n/n": (324, 0),
    "best-of-n/reward": (0.79, 0.005),
    "best-of-n/formula": "overstates it",
    # Figure 12.4 and Exercise 12.4
    "groups/signal": (1 - 0.9**8 - 0.1**8, 1e-12),
    "groups/lone-correct": (math.sqrt(7), 1e-12),
    "groups/no-signal": (0.95**8 + 0.05**8, 1e-12),
    # Figure 12.5: "peaks at 0.55 when the divergence is 3.2 nats"; κ = 20: true 0.54
    "overoptimization/peak": (3.2, 0.05),
    "overoptimization/true": (0.54, 0.005),
    # the top response's true reward 1 − 2.4·0.5² = 0.4 against π₀'s (computed below)
    "overoptimization/limit": "above π₀'s",
    "ppo-clip/flat-above": (1.2, 1e-12),
    "ppo-clip/epochs": "the plain surrogate",
    # Section 12.3.3: one in a billion "dominates once β falls below Δ/20.7"
    "rarity/threshold": (1 / 20.7, 1.5e-4),
    # Azar et al.: deterministic preferences leave only the never-beaten top response
    "dpo/deterministic": (1, 0),
    "dpo/bt-reward": (0.82, 0.005),
    # chapter 28's printed table: k1 negative 12.1%; only the penalty in the reward reaches π*
    "kl-penalty/negative": (12.1, 0.05),
    "kl-penalty/rule": "k1 in the reward",
    # chapter 28's second experiment: GRPO at step 1000, incorrect length 12.1
    "length-bias/incorrect": (12.1, 0.05),
    "normalization/centring": (7 / 8, 1e-12),
    "token-credit/last": "the third",
    # SPEC.md, "The training loop": with the defaults pass@256 falls, the rare ones go to ~0
    "loop/pass256": "falls",
    "loop/rare": (0.0, 0.01),
    # Exercise 28.7's optimum p* = p e^(1/β) / (p e^(1/β) + 1 − p) at p = 0.05, β = 0.5
    "pass-at-k/p-star": (0.05 * math.e**2 / (0.05 * math.e**2 + 0.95), 1e-12),
    # Exercise 28.8's hard label: 1 − (1 − 0.6⁵)⁸
    "step-labels/hard-first": (1 - (1 - 0.6**5) ** 8, 1e-12),
}


def hand_pins():
    """Pins that need a little computation of their own (no klrl_core)."""
    pi0, r, rt = book_by_hand()
    right = "above π₀'s" if pi0 @ rt < 1 - 2.4 * 0.5**2 else "below π₀'s"
    w = grpo_weight_by_enumeration(0.1, 8) / grpo_weight_by_enumeration(0.5, 8)
    cw = np.array([0.04, 0.70, 0.12, 0.08, 0.06])
    a = [1, 0, 0, 0, 0]
    return {
        "overoptimization/limit": right,
        "normalization/over-half": (w, 1e-9),
        "entropy/confident-wrong": "rises"
        if round(entropy_by_hand(cw, a, 0.5), 3) > round(entropy_by_hand(cw, a, 0), 3)
        else "falls",
        "entropy/uniform": "falls"
        if round(entropy_by_hand(np.full(5, 0.2), a, 0.5), 3) < round(math.log(5), 3)
        else "rises",
    }


def test_the_bank_covers_every_figure_page():
    bank = Q.bank()
    assert set(FIGURE_PAGES) == {q.page for q in bank.values()}
    for page in FIGURE_PAGES:
        assert len(Q.for_page(page)) >= (2 if page in AT_LEAST_TWO else 1), page
    for qid, q in bank.items():
        assert qid == q.id and qid.startswith(q.page + "/") and qid.count("/") == 1
        assert q.kind in (Q.NUMBER, Q.CHOICE) and q.unit in ("", "%", "nats")
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in q.setting.items())
    assert "handout" not in {q.page for q in bank.values()}


def test_specs_five_questions_exist_at_their_settings():
    bank = Q.bank()
    for qid, setting in SPEC_FIVE.items():
        assert bank[qid].setting == setting, qid


def test_every_question_is_pinned():
    assert set(PINS) | set(hand_pins()) == set(Q.bank())


@pytest.mark.parametrize("qid", sorted(Q.bank()))
def test_truth_against_an_independent_computation(qid):
    spec = Q.to_spec(Q.bank()[qid])
    pin = {**PINS, **hand_pins()}[qid]
    if isinstance(pin, str):
        assert spec["kind"] == Q.CHOICE and spec["truth"] == pin
        assert pin in spec["choices"]
    else:
        expected, tol = pin
        assert spec["kind"] == Q.NUMBER
        assert abs(spec["truth"] - expected) <= tol, (spec["truth"], expected)
        assert spec["lo"] <= spec["truth"] <= spec["hi"]
        assert Q.is_right(spec, spec["truth"])


def test_slow_checks_of_what_the_chapters_do_not_print():
    bank = Q.bank()
    truth = {qid: Q.to_spec(q)["truth"] for qid, q in bank.items()}
    assert abs(truth["overoptimization/peak"] - peak_kl_by_grid()) < 2e-3
    assert abs(truth["tilt/kl-limit"] - (-math.log(book_by_hand()[0][-1]))) < 1e-3
    pi, _ = tilt_by_hand(20.0)
    assert abs(truth["dpo/bt-reward"] - pi @ book_by_hand()[1]) < 1e-6
    plain, ppo = ppo_epochs_by_hand("plain"), ppo_epochs_by_hand("ppo")
    assert plain > 2 * ppo  # so "the plain surrogate" is no rounding call
    before, after = pass_at_k_by_hand(True, 256)
    assert after < before - 0.1  # pass@256 falls with shared parameters
    before, after = pass_at_k_by_hand(True, 1)
    assert after > before + 0.1  # while pass@1 rises, as loop/pass256 says
    # token-credit, rule "last", κ = 2: depth-1 and depth-2 values are all β ln(0.8 + 0.2 e²),
    # so the first two tokens' credits are 0 and the third's is 1 − that value
    v = 0.5 * math.log(0.8 + 0.2 * math.e**2)
    assert 1 - v > 0.5 and abs(v - 0.412) < 5e-4  # the page prints V*(x) = 0.412


def test_specs_are_json_and_explanations_are_written():
    for q in Q.bank().values():
        spec = Q.to_spec(q)
        assert json.loads(json.dumps(spec)) == spec
        assert set(spec) >= {
            "id",
            "page",
            "setting",
            "prompt",
            "kind",
            "lo",
            "hi",
            "step",
            "unit",
            "choices",
            "tolerance",
            "truth",
            "explain",
        }
        for text in (spec["prompt"], spec["explain"]):
            assert text.strip() and not BAD_TEXT.search(text), text
        if q.kind == Q.CHOICE:
            assert spec["truth"] in spec["choices"] and len(spec["choices"]) >= 2
        else:
            assert spec["lo"] < spec["hi"] and spec["step"] > 0 and spec["tolerance"] >= 0


# ----------------------------------------------------------------------------- settings as links
SETTINGS = sorted({(q.page, tuple(sorted(q.setting.items()))) for q in Q.bank().values()})
_RUNS: dict = {}


def page_run(page, setting):
    key = (page, setting)
    if key not in _RUNS:
        _RUNS[key] = run_page(page + ".py", **dict(setting))
    return _RUNS[key]


def _same(a: str, b: str) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-9)
    except ValueError:
        return a.strip().lower() == b.strip().lower()


@pytest.mark.parametrize("page, setting", SETTINGS, ids=[f"{p}?{dict(s)}" for p, s in SETTINGS])
def test_every_setting_is_a_link_the_page_takes(page, setting):
    at = page_run(page, setting)
    assert_clean(at)
    assert notices(at) == []
    for name, value in setting:
        # the page keeps every parameter it knows in the address; an unknown one is dropped
        assert name in at.query_params, name
        assert _same(at.query_params[name], value), (name, at.query_params[name], value)


# ----------------------------------------------------------------------------- answers
NUM = {
    "id": "t/n",
    "kind": "number",
    "lo": 0.0,
    "hi": 1.0,
    "step": 0.01,
    "unit": "",
    "choices": [],
    "tolerance": 0.05,
    "truth": 0.57,
}
PCT = {**NUM, "lo": 0.0, "hi": 100.0, "step": 1.0, "unit": "%", "tolerance": 5.0, "truth": 23.0}
BIG = {**NUM, "lo": 1.0, "hi": 1e7, "step": 1.0, "tolerance": 50.0, "truth": 324.0}
NEG = {**NUM, "lo": -10.0, "hi": 10.0}
CHO = {**NUM, "kind": "choice", "choices": ["rises", "falls", "stays the same"], "truth": "falls"}


@pytest.mark.parametrize(
    "spec, raw, value",
    [
        (NUM, "0.5", 0.5),
        (NUM, " 0,5 ", 0.5),
        (NUM, ".5", 0.5),
        (NUM, "0", 0.0),
        (NUM, "1", 1.0),
        (NUM, 1, 1.0),
        (NUM, 0.25, 0.25),
        (NUM, "57%", 0.57),
        (NUM, "5e-1", 0.5),
        (PCT, "23", 23.0),
        (PCT, "23%", 23.0),
        (PCT, " 23 % ", 23.0),
        (PCT, "0", 0.0),
        (PCT, "100", 100.0),
        (PCT, "22,5", 22.5),
        (BIG, "4,000", 4000.0),
        (BIG, "1,500,000", 1.5e6),
        (BIG, "324", 324.0),
        (BIG, "10000000", 1e7),
        (NEG, "−0.38", -0.38),
        (NEG, "-10", -10.0),
        (NEG, "+2.65", 2.65),
        (NUM, "6.67 × 10⁻⁴", 6.67e-4),
        (NUM, "5x10^-1", 0.5),
        (CHO, "falls", "falls"),
        (CHO, "  Falls ", "falls"),
        (CHO, "STAYS  THE SAME", "stays the same"),
    ],
)
def test_parse_answer_accepts(spec, raw, value):
    assert (
        Q.parse_answer(spec, raw) == pytest.approx(value)
        if spec["kind"] == "number"
        else Q.parse_answer(spec, raw) == value
    )


@pytest.mark.parametrize(
    "spec, raw, says",
    [
        (NUM, "", "answer"),
        (NUM, "   ", "answer"),
        (NUM, None, "answer"),
        (NUM, "abc", "not a number"),
        (NUM, "0.5.1", "not a number"),
        (NUM, "1/2", "not a number"),
        (NUM, "--1", "not a number"),
        (NUM, "0,5,1", "not a number"),
        (NUM, True, "number"),
        (NUM, "nan", "finite"),
        (NUM, "NaN", "finite"),
        (NUM, "inf", "finite"),
        (NUM, "-Infinity", "finite"),
        (NUM, "1e400", "finite"),
        (NUM, float("nan"), "finite"),
        (NUM, float("inf"), "finite"),
        (NUM, "1×10^400", "finite"),
        (NUM, "1 × 10⁴⁰⁰", "finite"),
        (NUM, "1.01", "from 0 to 1"),
        (NUM, "-0.01", "from 0 to 1"),
        (NUM, "101%", "from 0 to 1"),
        (PCT, "101", "from 0% to 100%"),
        (PCT, "-1%", "from 0% to 100%"),
        (BIG, "0", "from 1 to"),
        (BIG, "10000001", "from 1 to"),
        (CHO, "fall", "pick one of"),
        (CHO, "", "answer"),
        (CHO, "rises, falls", "pick one of"),
    ],
)
def test_parse_answer_refuses_with_a_message(spec, raw, says):
    with pytest.raises(ValueError) as why:
        Q.parse_answer(spec, raw)
    assert says in str(why.value)


def test_is_right_at_the_tolerance_edges():
    # truth 0.57, tolerance 0.05: 0.52 and 0.62 count (despite binary rounding), a hair more not
    assert Q.is_right(NUM, 0.52) and Q.is_right(NUM, 0.62) and Q.is_right(NUM, 0.57)
    assert not Q.is_right(NUM, 0.5199) and not Q.is_right(NUM, 0.6201)
    assert Q.is_right(PCT, 18.0) and Q.is_right(PCT, 28.0)
    assert not Q.is_right(PCT, 17.9) and not Q.is_right(PCT, 28.1)
    exact = {**BIG, "tolerance": 0.0}
    assert Q.is_right(exact, 324.0) and not Q.is_right(exact, 325.0)
    assert Q.is_right(CHO, "falls") and not Q.is_right(CHO, "rises")
    assert not Q.is_right(NUM, None) and not Q.is_right(NUM, "0.57")
    # what parse_answer returns is what is_right judges
    assert Q.is_right(NUM, Q.parse_answer(NUM, "0,62")) and Q.is_right(
        PCT, Q.parse_answer(PCT, "28%")
    )


# ----------------------------------------------------------------------------- "this number"
@pytest.mark.parametrize(
    "text, truth, lo, hi, step, unit",
    [
        ("0.34 nats", 0.34, 0.0, 1.0, 0.01, "nats"),
        ("4.76 nats", 4.76, 0.0, 10.0, 0.01, "nats"),
        ("57%", 57.0, 0.0, 100.0, 1.0, "%"),
        ("12.1%", 12.1, 0.0, 100.0, 0.1, "%"),
        ("−17%", -17.0, -100.0, 100.0, 1.0, "%"),
        ("0.999", 0.999, 0.0, 1.0, 0.001, ""),
        ("6.67 × 10⁻⁴", 6.67e-4, 0.0, 0.01, 1e-6, ""),
        ("4.85 × 10⁸", 4.85e8, 0.0, 1e9, 1e6, ""),
        ("+2.65", 2.65, -10.0, 10.0, 0.01, ""),
        ("−0.38", -0.38, -1.0, 1.0, 0.01, ""),
        ("324", 324.0, 0.0, 1000.0, 1.0, ""),
        ("4,000", 4000.0, 0.0, 10000.0, 1.0, ""),
        ("1.25×", 1.25, 0.0, 10.0, 0.01, ""),
        ("5 of 20", 5.0, 0.0, 20.0, 1.0, ""),
    ],
)
def test_readout_question_reads_the_number_and_its_precision(text, truth, lo, hi, step, unit):
    spec = Q.readout_question("tilt", {"kappa": "5"}, "KL(π* ‖ π₀)", text)
    assert spec["truth"] == pytest.approx(truth, rel=1e-12)
    assert (spec["lo"], spec["hi"], spec["unit"]) == (lo, hi, unit)
    assert spec["step"] == pytest.approx(step, rel=1e-9)
    assert spec["lo"] <= spec["truth"] <= spec["hi"] and spec["tolerance"] >= spec["step"]
    assert spec["kind"] == "number" and spec["setting"] == {"kappa": "5"}
    assert spec["page"] == "tilt" and spec["id"].startswith("tilt/")
    assert "KL(π* ‖ π₀)" in spec["prompt"] and text in spec["explain"]
    assert json.loads(json.dumps(spec)) == spec
    assert Q.is_right(spec, Q.parse_answer(spec, str(truth)))


@pytest.mark.parametrize(
    "text",
    [
        "0.55 at 3.2 nats",
        "ω > 1.20",
        "≥ 0.327",
        "–",
        "none",
        "2.1 / 12.1",
        "0.258 → 0.831",
        "exp(20) = 4.85 × 10⁸",
        "7/8 = 0.875",
        "10 epochs",
        "",
        "nan",
        "∞",
    ],
)
def test_readout_question_refuses_what_is_not_one_number(text):
    with pytest.raises(ValueError):
        Q.readout_question("x", {}, "label", text)


def test_readout_question_on_the_pages_own_readouts():
    """Every readout item the questions' pages show either becomes a question whose truth
    prints back as the page printed it, or is refused as not a single number."""
    asked = refused = 0
    for page, setting in SETTINGS:
        for label, text in metrics(page_run(page, setting)).items():
            try:
                spec = Q.readout_question(page, dict(setting), label, text)
            except ValueError:
                refused += 1
                continue
            asked += 1
            assert spec["lo"] <= spec["truth"] <= spec["hi"]
            if "×" in text or " of " in text:
                continue
            places = max(0, -round(math.log10(spec["step"])))
            assert f"{abs(spec['truth']):,.{places}f}" in text, (label, text, spec["truth"])
    assert asked >= 40 and refused >= 10


# ----------------------------------------------------------------------------- results
def test_results_figure_on_the_exact_curve_for_the_peak():
    spec = Q.to_spec(Q.bank()["overoptimization/peak"])
    fig, alt = Q.results_figure(spec, ["3.2", "2", "5", 3.0, "junk", "nan"])
    assert "The truth is 3.2 nats." in alt and "2 of 4 answers (50%)" in alt
    assert "Truth: 3.2 nats" in fig.layout.title.text and "2 of 4" in fig.layout.title.text
    curve = fig.data[0]
    assert len(curve.x) > 100 and max(curve.y) == pytest.approx(0.55, abs=0.005)  # printed
    marks = fig.data[1]
    assert sorted(marks.x) == pytest.approx([2.0, 3.0, 3.2, 5.0])
    # the marks sit on the curve: E[r*] there, read off the exact curve
    assert all(abs(y - np.interp(x, curve.x, curve.y)) < 1e-9 for x, y in zip(marks.x, marks.y))


@pytest.mark.parametrize("qid", ["groups/signal", "tilt/reward", "best-of-n/n"])
def test_results_figure_on_the_pages_figure(qid):
    spec = Q.to_spec(Q.bank()[qid])
    fig, alt = Q.results_figure(spec, [spec["truth"], spec["hi"], spec["lo"]])
    assert "1 of 3 answers (33%)" in alt and "page's exact figure" in alt
    assert len(fig.data) >= 3 and fig.layout.height >= 500


def test_results_figure_histogram_and_choices():
    spec = Q.to_spec(Q.bank()["bandit/below-half"])
    fig, alt = Q.results_figure(spec, ["23", "25%", 40, 10])
    assert (
        "Histogram" in alt
        and "The truth is 23%." in alt
        and "2 of 4 answers (50%) within 5 percentage points" in alt
    )
    assert fig.data[0].type == "bar" and sum(fig.data[0].y) == 4
    spec = Q.to_spec(Q.bank()["loop/pass256"])
    fig, alt = Q.results_figure(spec, ["falls", "rises", "Falls", "x"])
    assert "The truth is falls" in alt and "2 of 3 answers (67%) chose it" in alt
    assert list(fig.data[0].y) == [1, 2, 0]
    fig, alt = Q.results_figure(spec, [])
    assert "No answers yet" in alt


def test_directions_and_comparisons_are_judged_at_the_printed_precision():
    assert Q._direction(1.0, 1.0004, 3) == "stays the same"
    assert Q._direction(1.0, 1.0006, 3) == "rises" and Q._direction(1.0, 0.9994, 3) == "falls"
    assert Q._compare(4.784, 4.764, 2) == "overstates it"
    assert Q._compare(4.761, 4.759, 2) == "matches it"
    assert Q._compare(0.1, 0.2, 2) == "understates it"


@pytest.mark.parametrize(
    "qid, truth, tol, says",
    [
        ("bandit/below-half", "23%", "within 5 percentage points", "a number from 0% to 100%"),
        ("tilt/reward", "0.82", "within ±0.05", "a number from 0 to 1"),
        (
            "overoptimization/peak",
            "3.2 nats",
            "within ±0.4 nats",
            "a number from 0 nats to 12 nats",
        ),
        ("best-of-n/n", "324", "within ±50", "a number from 1 to "),
        ("dpo/deterministic", "1", "exactly", "a number from 1 to 30"),
        ("loop/pass256", "falls", "the choice itself", "one of: rises; falls; stays the same"),
    ],
)
def test_texts_of_a_question(qid, truth, tol, says):
    spec = Q.to_spec(Q.bank()[qid])
    assert Q.truth_text(spec) == truth and Q.tolerance_text(spec) == tol
    assert Q.input_text(spec).startswith(says)


def test_a_tolerance_of_one_nat_is_singular():
    spec = {"kind": "number", "tolerance": 1.0, "unit": "nats"}
    assert Q.tolerance_text(spec) == "within ±1 nat"
    assert Q.tolerance_text(dict(spec, tolerance=0.5)) == "within ±0.5 nats"
