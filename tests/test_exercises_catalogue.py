"""Tests for klrl_app.exercises, the catalogue behind the exercises page (issue 11, point 2).

Every expected answer below is worked out by hand in this file, with math and fractions only
(no project code), and every typical mistake is the number a reader gets by skipping one step.
"""

import math
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from klrl_app import exercises as ex
from klrl_core import user_model as um


# --------------------------------------------------------------------------- hand computations


def _book_model():
    """The stated model: r = i/29, pi0 proportional to exp(-(r - 0.3)^2 / (2 * 0.17^2))."""
    r = [i / 29 for i in range(30)]
    w = [math.exp(-((x - 0.3) ** 2) / (2 * 0.17**2)) for x in r]
    s = sum(w)
    return [x / s for x in w], r


def _hand_12_1():
    w = [0.7, 0.2 * math.e, 0.1 * math.e**2]
    z = sum(w)
    pi = [x / z for x in w]
    e = pi[1] + 2 * pi[2]
    kl = sum(p * math.log(p / q) for p, q in zip(pi, [0.7, 0.2, 0.1]))
    reverse = sum(q * math.log(q / p) for p, q in zip(pi, [0.7, 0.2, 0.1]))
    return w, z, pi, e, kl, reverse


def _hand_12_3():
    pi0, r = _book_model()
    mu = sum(p * x for p, x in zip(pi0, r))
    v = sum(p * (x - mu) ** 2 for p, x in zip(pi0, r))
    w = [p * math.exp(x) for p, x in zip(pi0, r)]  # kappa = 1
    z = sum(w)
    pi = [x / z for x in w]
    gain = sum(p * x for p, x in zip(pi, r)) - mu
    kl = sum(p * math.log(p / q) for p, q in zip(pi, pi0))
    return mu, v, gain, kl


def _hand_pass(p, k):
    return 1 - (1 - p) ** k


def _hand_crossover():
    k = 1
    while (_hand_pass(0.3, k) + _hand_pass(0.05, k)) / 2 <= (_hand_pass(0.9, k) + 0) / 2:
        k += 1
    return k


W, Z, PI, E, KL, REVERSE_KL = _hand_12_1()
MU, V, GAIN, KL_BOOK = _hand_12_3()
ALL_SAME = 1 + math.e + math.e**2  # Z without the reference's weights

# label -> (hand answer, a typical mistake, a fragment the mistake's hint must contain or None)
HAND = {
    "12.1 · normalising constant Z at β = 1": (Z, ALL_SAME, "weighted"),
    "12.1 · π*(y₁), the reward-0 response": (PI[0], W[0], "divide by Z"),
    "12.1 · π*(y₂), the reward-1 response": (PI[1], W[1], "divide by Z"),
    "12.1 · π*(y₃), the reward-2 response": (PI[2], W[2], "divide by Z"),
    "12.1 · expected reward under π*": (E, 0.2 + 0.2, "reference policy"),
    "12.1 · KL(π* ‖ π₀) in nats": (KL, REVERSE_KL, "KL(π₀ ‖ π*)"),
    "12.1 · log Z, for Equation 12.6": (math.log(Z), math.log10(Z), "base 10"),
    "12.1 · expected reward as β → ∞": (0.7 * 0 + 0.2 * 1 + 0.1 * 2, 1.0, None),
    "12.1 · expected reward as β → 0": (2.0, E, None),
    "12.1 · KL(π* ‖ π₀) as β → 0, in nats": (math.log(10), 1.0, "natural logarithm"),
    "12.2 · probability that best-of-2 keeps the reward-1 response": (0.75, 0.5, "twice"),
    "12.2 · exact KL(π₂ ‖ π₀) in nats": (
        0.25 * math.log(0.5) + 0.75 * math.log(1.5),
        math.log(2) - 0.5,
        "formula",
    ),
    "12.2 · the formula log n − (n − 1)/n at n = 2": (
        math.log(2) - 0.5,
        0.25 * math.log(0.5) + 0.75 * math.log(1.5),
        "exact KL",
    ),
    "12.2 · exact KL at n = 10, in nats": (
        2**-10 * math.log(2**-9) + (1 - 2**-10) * math.log(2 * (1 - 2**-10)),
        math.log(10) - 0.9,
        "formula",
    ),
    "12.2 · the formula at n = 10": (math.log(10) - 0.9, math.log(10), None),
    "12.2 · the formula at n = 100": (math.log(100) - 0.99, 2 - 0.99, "base 10"),
    "12.2 · limit of the exact KL as n → ∞, in nats": (math.log(2), 1.0, "bits"),
    "12.3 · v, the reward variance under π₀ (book's model)": (V, V + MU**2, "E[r²]"),
    "12.3 · predicted gain κv at β = 1": (V, V / 2, None),
    "12.3 · predicted KL ½κ²v at β = 1": (V / 2, V, "½"),
    "12.3 · exact gain E_π*[r] − μ at β = 1": (GAIN, V, "prediction"),
    "12.3 · exact KL(π* ‖ π₀) at β = 1, in nats": (KL_BOOK, V / 2, "prediction"),
    "12.3 · √(2v·KL) at the exact KL": (math.sqrt(2 * V * KL_BOOK), math.sqrt(V * KL_BOOK), "2"),
    "12.4 · advantage of a correct answer": (
        0.625 / math.sqrt(0.375 * 0.625),
        0.625 / math.sqrt((3 * 0.625**2 + 5 * 0.375**2) / 7),
        "not 7",
    ),  # divisor 7
    "12.4 · advantage of an incorrect answer": (
        -0.375 / math.sqrt(0.375 * 0.625),
        0.375 / math.sqrt(0.375 * 0.625),
        "sign",
    ),
    "12.4 · P(no signal) with p = 0.05 and groups of 8": (
        0.95**8 + 0.05**8,
        1 - 0.95**8 - 0.05**8,
        "opposite",
    ),
    "12.4 · P(no signal) with p = 0.05 and groups of 64": (0.95**64 + 0.05**64, 0.95**8, None),
    "28.1 · π*(y₂) as β → 0 (reward 1, π_ref = 0.3)": (0.3 / 0.5, 0.5, "odds"),
    "28.1 · π*(y₃) as β → 0 (reward 1, π_ref = 0.2)": (0.2 / 0.5, 0.2, "Renormalise"),
    "28.1 · π*(y₁) as β → ∞ (reward 0)": (0.5, 1 / 3, "uniform"),
    "28.1 · optimal value β ln Z as β → ∞": (0.5 * 0 + 0.3 * 1 + 0.2 * 1, 0.0, "ln Z / κ"),
    "28.1 · optimal value β ln Z as β → 0": (1.0, 0.5, "other limit"),
    "28.4 · leave-one-out baseline b₁ of the first response": (
        (0.2 + 0.4 + 0.1) / 3,
        (0.9 + 0.2 + 0.4 + 0.1) / 4,
        "leave the first",
    ),
    "28.4 · r₁ − r̄, the reward minus the group mean": (
        0.9 - (0.9 + 0.2 + 0.4 + 0.1) / 4,
        0.9 - (0.2 + 0.4 + 0.1) / 3,
        "whole group",
    ),
    "28.4 · the ratio (r₁ − r̄)/(r₁ − b₁)": ((4 - 1) / 4, 4 / 3, "upside down"),
    "28.4 · weight 1/√(p(1 − p)) of a prompt with p = 0.02": (
        1 / math.sqrt(0.02 * 0.98),
        math.sqrt(0.02 * 0.98),
        "divided",
    ),
    "28.4 · weight 1/√(p(1 − p)) of a prompt with p = 0.5": (
        1 / math.sqrt(0.5 * 0.5),
        math.sqrt(0.5 * 0.5),
        "divided",
    ),
    "28.4 · how many times more the p = 0.02 prompt counts than the p = 0.5 one": (
        math.sqrt(0.25 / (0.02 * 0.98)),
        math.sqrt(0.02 * 0.98 / 0.25),
        "upside down",
    ),
    # 28.5: s = 0 so q = 1/2; L1 = 2, L2 = 10; advantages +sqrt(3) and -1/sqrt(3).
    "28.5 · expected push on s for the correct answer (A = √3)": (
        math.sqrt(3) * 0.25 * (1 / 2 - 1 / 10),
        math.sqrt(3) * (1 / 2 - 1 / 10),
        "q(1 − q)",
    ),
    "28.5 · expected push on s for a wrong answer (A = −1/√3)": (
        -0.25 * (1 / 2 - 1 / 10) / math.sqrt(3),
        -(1 / 2 - 1 / 10) / math.sqrt(3),
        "q(1 − q)",
    ),
    "28.5 · expected push on s for the correct answer with a constant weight": (
        0.0,
        math.sqrt(3) * 0.25 * (1 / 2 - 1 / 10),
        None,
    ),
    # 28.6: pi = (0.6, 0.3, 0.1).
    "28.6 · entropy H(π) in nats": (
        -sum(p * math.log(p) for p in (0.6, 0.3, 0.1)),
        -sum(p * math.log2(p) for p in (0.6, 0.3, 0.1)),
        "bits",
    ),
    "28.6 · Cov_π(log π, A) when the likely action is rewarded": (
        0.6 * math.log(0.6)
        - 0.1 * math.log(0.1)
        - (0.6 * math.log(0.6) + 0.3 * math.log(0.3) + 0.1 * math.log(0.1)) * 0.5,
        (math.log(0.6) - math.log(0.1)) / 3,
        "Weight",
    ),  # unweighted; mean of A is 0
    "28.6 · dH/dη at η = 0 when the likely action is rewarded": (
        -(
            0.6 * math.log(0.6)
            - 0.1 * math.log(0.1)
            - (0.6 * math.log(0.6) + 0.3 * math.log(0.3) + 0.1 * math.log(0.1)) * 0.5
        ),
        0.1,
        None,
    ),
    "28.6 · dH/dη at η = 0 when the rare action is rewarded": (
        (
            0.6 * math.log(0.6)
            - 0.1 * math.log(0.1)
            - (0.6 * math.log(0.6) + 0.3 * math.log(0.3) + 0.1 * math.log(0.1)) * 0.5
        ),
        0.1,
        None,
    ),
    "28.7 · pass@1 of the base model": ((0.3 + 0.05) / 2, 0.3 + 0.05, None),
    "28.7 · pass@1 after RL": ((0.9 + 0.0) / 2, 0.9, "Problem B"),
    "28.7 · pass@32 of the base model": (
        (_hand_pass(0.3, 32) + _hand_pass(0.05, 32)) / 2,
        _hand_pass(0.175, 32),
        "not the solve",
    ),
    "28.7 · pass@32 after RL": ((_hand_pass(0.9, 32) + 0) / 2, _hand_pass(0.9, 32), "Problem B"),
    "28.7 · smallest k at which the base model's pass@k is higher": (_hand_crossover(), 32, None),
    "28.7 · unbiased estimate of pass@10 from 3 correct in 20": (
        1 - math.comb(17, 10) / math.comb(20, 10),
        1 - (1 - 3 / 20) ** 10,
        "biased",
    ),
}

# The chapters' printed values, at the digits they print (Exercises 12.1-12.4, 28.7 data).
PRINTED = {
    "12.1 · normalising constant Z at β = 1": "1.983",  # 1.9826
    "12.1 · π*(y₁), the reward-0 response": "0.353",
    "12.1 · π*(y₂), the reward-1 response": "0.274",
    "12.1 · π*(y₃), the reward-2 response": "0.373",
    "12.1 · expected reward under π*": "1.020",
    "12.1 · KL(π* ‖ π₀) in nats": "0.335",
    "12.1 · log Z, for Equation 12.6": "0.684",
    "12.1 · KL(π* ‖ π₀) as β → 0, in nats": "2.303",
    "12.2 · exact KL(π₂ ‖ π₀) in nats": "0.131",
    "12.2 · the formula log n − (n − 1)/n at n = 2": "0.193",
    "12.2 · exact KL at n = 10, in nats": "0.685",
    "12.2 · the formula at n = 10": "1.403",
    "12.2 · the formula at n = 100": "3.615",
    "12.3 · v, the reward variance under π₀ (book's model)": "0.0249",
    "12.3 · predicted gain κv at β = 1": "0.0249",
    "12.3 · predicted KL ½κ²v at β = 1": "0.0124",
    "12.3 · exact gain E_π*[r] − μ at β = 1": "0.0253",
    "12.3 · exact KL(π* ‖ π₀) at β = 1, in nats": "0.0128",
    "12.4 · advantage of a correct answer": "1.29",
    "12.4 · advantage of an incorrect answer": "-0.77",
    "12.4 · P(no signal) with p = 0.05 and groups of 8": "0.663",
    "12.4 · P(no signal) with p = 0.05 and groups of 64": "0.038",
    "28.7 · pass@1 of the base model": "0.175",
    "28.7 · pass@1 after RL": "0.450",
    "28.7 · pass@32 of the base model": "0.903",
    "28.7 · pass@32 after RL": "0.500",
}

PARTS = {p.label: (e, p) for e, p in ex.all_parts()}

SPEC_PAGES = {
    "tilt",
    "best-of-n",
    "groups",
    "overoptimization",
    "bandit",
    "kl-penalty",
    "length-bias",
    "pass-at-k",
    "rarity",
    "ppo-clip",
    "normalization",
    "entropy",
    "dpo",
    "token-credit",
    "step-labels",
    "loop",
}


# ----- hand computations for 28.2, 28.3 and 28.8 (plain Python, not klrl_core)
def _hand_282():
    ref = {"a": 0.5, "b": 0.3, "c": 0.2}
    beta = 0.5

    def r(y):
        return (y[1] == "b") + 0.2 * (y[2] == "c")

    def v(prefix):
        if len(prefix) == 3:
            return r(prefix)
        return beta * math.log(sum(q * math.exp(v(prefix + t) / beta) for t, q in ref.items()))

    return v(""), r("abc") - v(""), r("abc") - r("aba")


def _hand_283():
    ref, th = [0.5, 0.3, 0.2], [0.0, 0.5, -0.5]
    w = [math.exp(t) for t in th]
    p = [x / sum(w) for x in w]
    k1 = [math.log(a / b) for a, b in zip(p, ref)]
    k3 = [b / a - 1 - math.log(b / a) for a, b in zip(p, ref)]
    score0 = [(1.0 if y == 0 else 0.0) - p[0] for y in range(3)]  # d ln pi(y) / d theta_0
    e_k1 = sum(a * k for a, k in zip(p, k1))
    e_k3 = sum(a * k for a, k in zip(p, k3))
    g1 = sum(a * s for a, s in zip(p, score0))
    g3 = sum(a * (1 - b / a) * s for a, b, s in zip(p, ref, score0))
    gs = sum(a * k * s for a, k, s in zip(p, k1, score0))
    kl_fwd = sum(b * math.log(b / a) for a, b in zip(p, ref))
    return e_k1, e_k3, g1, g3, gs, kl_fwd


_V282, _IMP282, _DIFF282 = _hand_282()
_EK1, _EK3, _G1, _G3, _GS, _KLF = _hand_283()
_Q, _G, _N = 0.3, 0.05, 8
HAND.update(
    {
        "28.2 · the root's value V*(x)": (_V282, 1.2, "best reward"),
        "28.2 · implicit reward of abc": (_IMP282, 1.2, "reward itself"),
        "28.2 · implicit reward of abc minus that of aba": (_DIFF282, -_DIFF282, "upside down"),
        "28.3 · E[k1] under π_θ": (_EK1, _KLF, None),
        "28.3 · E[k3] under π_θ": (_EK3, _KLF, "other direction"),
        "28.3 · first component of the expected gradient of k1 as a loss": (_G1, _GS, "score"),
        "28.3 · first component of the expected gradient of k3 as a loss": (_G3, _GS, None),
        "28.3 · first component of E[k1·∇ln π_θ]": (_GS, _G3, "reverse-direction"),
        "28.8 · expected soft label of a correct first step": (_Q**5, _Q**6, "Six factors"),
        "28.8 · expected hard label of a correct first step": (1 - (1 - _Q**5) ** _N, _Q**5, None),
        "28.8 · expected soft label of a wrong first step": (_G, 1 - (1 - _G) ** _N, None),
        "28.8 · expected hard label of a wrong first step": (1 - (1 - _G) ** _N, _G, "soft label"),
        "28.8 · which ranks higher: 1 for the correct step, 2 for the wrong one": (
            2.0 if _G > _Q**5 else 1.0,
            1.0,
            None,
        ),
    }
)
PRINTED.update(
    {
        "28.2 · the root's value V*(x)": "0.582",
        "28.2 · implicit reward of abc": "0.618",
        "28.2 · implicit reward of abc minus that of aba": "0.200",
        "28.8 · expected soft label of a correct first step": "0.0024",
        "28.8 · expected hard label of a correct first step": "0.019",
        "28.8 · expected soft label of a wrong first step": "0.0500",
        "28.8 · expected hard label of a wrong first step": "0.337",
    }
)


# --------------------------------------------------------------------------- the catalogue


def test_every_part_has_a_hand_computation_and_every_exercise_is_there():
    assert set(PARTS) <= set(HAND), set(PARTS) - set(HAND)
    ids = [e.id for e in ex.EXERCISES]
    assert ids[:4] == ["12.1", "12.2", "12.3", "12.4"]
    assert {"28.1", "28.7"} <= set(ids)
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("label", sorted(PARTS))
def test_answer_equals_the_hand_computation(label):
    _, part = PARTS[label]
    hand = HAND[label][0]
    assert abs(part.answer() - hand) <= part.tolerance / 5, (part.answer(), hand)


@pytest.mark.parametrize("label", sorted(PRINTED))
def test_answer_shows_the_printed_number(label):
    _, part = PARTS[label]
    assert part.shown().replace("−", "-") == PRINTED[label]


@pytest.mark.parametrize("label", sorted(PARTS))
def test_right_answers_are_correct_and_typical_mistakes_are_not(label):
    e, part = PARTS[label]
    hand, mistake, fragment = HAND[label]
    assert ex.check(part, hand) == (ex.CORRECT, "")
    assert ex.check(part, float(part.shown().replace("−", "-"))) == (ex.CORRECT, "")
    verdict, hint = ex.check(part, mistake)
    assert verdict == ex.NOT_YET
    assert hint
    if fragment is not None:
        assert fragment in hint, hint


@pytest.mark.parametrize("label", sorted(PARTS))
def test_tolerance_fits_the_digits_asked_for(label):
    _, part = PARTS[label]
    unit = 10.0**-part.digits
    assert 0.5 * unit <= part.tolerance <= unit
    a = part.answer()
    assert ex.check(part, a + 0.99 * part.tolerance)[0] == ex.CORRECT
    assert ex.check(part, a - 0.99 * part.tolerance)[0] == ex.CORRECT
    assert ex.check(part, a + 1.01 * part.tolerance)[0] == ex.NOT_YET
    assert ex.check(part, a - 1.01 * part.tolerance)[0] == ex.NOT_YET
    # A reader who rounds to one digit fewer than asked is not yet there (unless the
    # answer happens to round the same way).
    coarse = round(a, part.digits - 1) if part.digits > 0 else round(a, -1)
    if abs(coarse - a) > part.tolerance:
        assert ex.check(part, coarse)[0] == ex.NOT_YET


def _answer_texts(part):
    """The ways an answer could be written: to the digits asked, and trimmed (0.500 -> 0.5)."""
    a = part.answer()
    texts = {f"{a:.{part.digits}f}", f"{abs(a):.{part.digits}f}"}
    for t in list(texts):
        if "." in t:
            texts.add(t.rstrip("0").rstrip("."))
    # Bare 0 and 1 are too common in any sentence to be a give-away.
    return {t for t in texts if t not in {"0", "1", "0.0", "1.0"}}


@pytest.mark.parametrize("label", sorted(PARTS))
def test_no_hint_gives_the_answer_away(label):
    _, part = PARTS[label]
    hints = [part.hint] + [t.hint for t in part.traps]
    for hint in hints:
        for text in _answer_texts(part):
            assert not re.search(rf"(?<![\d.]){re.escape(text)}(?![\d])", hint), (text, hint)


def test_labels_start_with_the_exercise_number():
    for e, part in ex.all_parts():
        assert part.label.startswith(f"{e.id} · "), part.label


def test_a_trap_is_never_the_answer():
    for _, part in ex.all_parts():
        for trap in part.traps:
            assert abs(trap.value() - part.answer()) > part.tolerance, part.label


def test_check_refuses_what_is_not_a_number():
    part = ex.all_parts()[0][1]
    for value in (None, "abc", float("nan"), float("inf")):
        verdict, hint = ex.check(part, value)
        assert verdict == ex.NOT_YET and hint
    assert ex.check(part, str(part.shown()))[0] == ex.CORRECT


def test_a_wrong_sign_gets_the_sign_hint():
    _, part = PARTS["12.4 · advantage of an incorrect answer"]
    assert ex.check(part, -part.answer()) == (ex.NOT_YET, "The size is right; check the sign.")
    # ...but not for an answer within the tolerance band of zero, where the sign says nothing.
    part = ex.Part("12.0 · tiny", lambda: 0.0006, 3, "own hint")
    assert ex.check(part, -0.0006) == (ex.NOT_YET, "own hint")


def test_an_unrecognised_mistake_gets_the_parts_own_hint():
    _, part = PARTS["12.1 · KL(π* ‖ π₀) in nats"]
    assert ex.check(part, 0.9) == (ex.NOT_YET, part.hint)


# --------------------------------------------------------------------------- solutions and links


def test_solutions_carry_the_chapters_numbers():
    sol = {e.id: e.solution() for e in ex.EXERCISES}
    for text in (
        "1.9826",
        "(0.353, 0.274, 0.373)",
        "1.020",
        "0.335",
        "0.684",
        "2.303",
        "−0.242",
        "0.087",
        "0.490",
    ):
        assert text in sol["12.1"], text
    for text in ("(0.25, 0.75)", "0.131", "0.193", "0.685", "1.403", "3.615", "0.693"):
        assert text in sol["12.2"], text
    for text in ("0.0249", "0.0124", "0.0253", "0.0128"):
        assert text in sol["12.3"], text
    for text in ("1.29", "−0.77", "0.663", "0.038", "0.484"):
        assert text in sol["12.4"], text
    for text in ("(0.0, 0.6, 0.4)", "(0.5, 0.3, 0.2)", "0.500", "1.000"):
        assert text in sol["28.1"], text
    for text in ("(0.233, 0.467, 0.400, 0.500)", "0.667", "0.400", "0.750", "G = 4"):
        assert text in ex.by_id("28.4").solution(), text
    for text in ("7.14", "2.00", "3.57"):
        assert text in sol["28.4"], text
    for text in ("0.173", "−0.058", "1.732", "−0.577"):
        assert text in sol["28.5"], text
    for text in ("0.898", "−0.373", "0.373"):
        assert text in sol["28.6"], text
    for text in ("0.175", "0.450", "0.903", "0.500", "k = 5", "0.895", "0.803"):
        assert text in sol["28.7"], text
    for text in sol.values():
        assert "nan" not in text and "-0.000" not in text and "−0.000" not in text


def test_solutions_are_computed_not_typed(monkeypatch):
    """Change what klrl_core returns and the worked solution changes with it."""
    from klrl_core import groups

    before = ex.by_id("12.4").solution()
    monkeypatch.setattr(groups, "no_signal_probability", lambda p, k: 0.123456)
    after = ex.by_id("12.4").solution()
    assert "0.663" in before and "0.663" not in after and "0.123" in after
    before = ex.by_id("12.1").solution()
    monkeypatch.setattr(um, "preset_model", lambda name: um.make_model([0.6, 0.3, 0.1], [0, 1, 2]))
    after = ex.by_id("12.1").solution()
    assert "0.353" in before and "0.353" not in after


def test_links_open_the_live_page_at_the_exercise():
    for e in ex.EXERCISES:
        url = urlsplit(e.link)
        assert url.path in SPEC_PAGES, e.link
        assert not url.path.startswith("/")
    q = parse_qs(urlsplit(ex.by_id("12.1").link).query)
    m = um.read_model(q["pi0"][0], q["r"][0])
    assert m.pi0.tolist() == [0.7, 0.2, 0.1] and m.r.tolist() == [0, 1, 2] and m.notes == ()
    assert q["beta"] == ["1"]
    q = parse_qs(urlsplit(ex.by_id("12.2").link).query)
    assert um.read_model(q["pi0"][0], q["r"][0]).pi0.tolist() == [0.5, 0.5] and q["n"] == ["2"]
    q = parse_qs(urlsplit(ex.by_id("28.1").link).query)
    m = um.read_model(q["pi0"][0], q["r"][0])
    assert m.pi0.tolist() == list(ex.PI_REF_281) and m.r.tolist() == list(ex.R_281)
    assert urlsplit(ex.by_id("12.4").link).query == "p=0.05&k=8"


def test_chapter_28_instances_say_what_they_illustrate():
    for e in ex.EXERCISES:
        assert e.statement and e.title
        if e.id.startswith("28."):
            assert len(e.illustrates) > 40
            assert "Chapter 28" in e.source
        else:
            assert "AI Alignment" in e.source


SEEDS = Path("/work/shared/seeds")


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the chapters' text is not on this machine")
def test_no_sentence_is_copied_from_the_chapters():
    """No run of eight words of a statement, hint or solution occurs in either chapter."""

    def words(text):
        return re.findall(r"[a-z]+", text.lower())

    chapters = " ".join(" ".join(words(p.read_text())) for p in SEEDS.glob("*.txt"))
    for e in ex.EXERCISES:
        texts = [e.statement, e.illustrates, e.title] + [e.solution()]
        texts += [p.hint for p in e.parts] + [t.hint for p in e.parts for t in p.traps]
        for text in texts:
            w = words(text)
            for i in range(len(w) - 7):
                run = " ".join(w[i : i + 8])
                assert run not in chapters, (e.id, run)


# ----- Exercises 28.2, 28.3, 28.8 against hand computations written here
def _tree_values(beta=0.5):
    """V*(x) of the token tree by plain recursion over prefixes (SPEC.md's middle rule)."""
    import math

    ref = {"a": 0.5, "b": 0.3, "c": 0.2}

    def r(y):
        return (y[1] == "b") + 0.2 * (y[2] == "c")

    def v(prefix):
        if len(prefix) == 3:
            return r(prefix)
        return beta * math.log(sum(p * math.exp(v(prefix + t) / beta) for t, p in ref.items()))

    return v, r


def test_28_2_by_recursion_and_the_printed_numbers():
    v, r = _tree_values()
    e = ex.by_id("28.2")
    vx, imp, diff = (p.answer() for p in e.parts)
    assert vx == pytest.approx(v(""), abs=1e-12) and round(vx, 3) == 0.582
    assert imp == pytest.approx(r("abc") - v(""), abs=1e-12) and round(imp, 3) == 0.618
    assert diff == pytest.approx(r("abc") - r("aba"), abs=1e-12) and round(diff, 3) == 0.200
    for p in e.parts:
        assert ex.check(p, p.shown())[0] == ex.CORRECT
        for trap in p.traps:
            assert abs(trap.value() - p.answer()) > p.tolerance
            assert ex.check(p, trap.value()) == (ex.NOT_YET, trap.hint)


def test_28_3_by_enumeration_and_finite_differences():
    import math

    theta, ref = [0.0, 0.5, -0.5], [0.5, 0.3, 0.2]

    def pi(th):
        w = [math.exp(t) for t in th]
        return [x / sum(w) for x in w]

    def kl_rev(th):
        p = pi(th)
        return sum(pp * math.log(pp / q) for pp, q in zip(p, ref))

    def kl_fwd(th):
        p = pi(th)
        return sum(q * math.log(q / pp) for pp, q in zip(p, ref))

    def grad(f, th, h=1e-6):
        return [
            (
                f([t + h * (i == j) for j, t in enumerate(th)])
                - f([t - h * (i == j) for j, t in enumerate(th)])
            )
            / (2 * h)
            for i in range(3)
        ]

    p = pi(theta)
    k1 = [math.log(pp / q) for pp, q in zip(p, ref)]
    k3 = [q / pp - 1 - math.log(q / pp) for pp, q in zip(p, ref)]
    e = ex.by_id("28.3")
    mk1, mk3, g1, g3, gs = (part.answer() for part in e.parts)
    assert mk1 == pytest.approx(sum(a * b for a, b in zip(p, k1)), abs=1e-12)
    assert mk3 == pytest.approx(sum(a * b for a, b in zip(p, k3)), abs=1e-12)
    assert mk1 == pytest.approx(kl_rev(theta), abs=1e-12) and mk3 == pytest.approx(mk1)
    assert g1 == pytest.approx(0.0, abs=1e-12)
    assert g3 == pytest.approx(grad(kl_fwd, theta)[0], abs=1e-7)  # k3: reverse KL
    assert g3 == pytest.approx(p[0] - ref[0], abs=1e-12)
    assert gs == pytest.approx(grad(kl_rev, theta)[0], abs=1e-7)  # score term: KL
    for part in e.parts:
        assert ex.check(part, part.shown())[0] == ex.CORRECT


def test_28_8_by_hand():
    q, g, n, T = 0.3, 0.05, 8, 6
    e = ex.by_id("28.8")
    soft_r, hard_r, soft_w, hard_w, higher = (p.answer() for p in e.parts)
    assert soft_r == pytest.approx(q ** (T - 1), rel=1e-12) and round(soft_r, 4) == 0.0024
    assert hard_r == pytest.approx(1 - (1 - q ** (T - 1)) ** n, rel=1e-12)
    assert round(hard_r, 3) == 0.019
    assert soft_w == pytest.approx(g, rel=1e-12)
    assert hard_w == pytest.approx(1 - (1 - g) ** n, rel=1e-12) and round(hard_w, 3) == 0.337
    assert higher == 2.0
    for p in e.parts:
        assert ex.check(p, p.shown())[0] == ex.CORRECT


def test_exercise_28_8_states_the_model_its_key_uses():
    """Review item 3: read literally, "once a step is wrong, a completion still reaches the right
    answer with probability g" covers the completer's own slips too, giving v = q⁵ + (1 − q⁵)g
    = 0.0523 > g and the other order; the key uses v = q⁵ on a correct prefix, so the statement
    must say a completion of a correct prefix needs every remaining step right."""
    e = next(x for x in ex.EXERCISES if x.id == "28.8")
    literal = _Q**5 + (1 - _Q**5) * _G
    assert literal > _G > _Q**5  # the two readings rank the steps apart
    assert "once a step is wrong" not in e.statement
    assert "succeeds only if all its remaining steps are right" in e.statement
    assert "once the partial solution being labelled contains a wrong step" in e.statement
