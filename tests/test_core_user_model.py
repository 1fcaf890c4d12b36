"""Tests for klrl_core.user_model: a reader's own pi0 and rewards (issue 11, point 1).

Expected values are the chapter's printed numbers (Exercise 12.1, Example 12.1, Exercise 12.2)
at the digits it prints, or are computed here by hand: plain loops with math.exp and math.log,
and, for best-of-n, enumeration of every ordered tuple of n draws. Nothing expected comes from
the code under test.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from klrl_core import best_of_n as bon
from klrl_core import tilt
from klrl_core import user_model as um

FEW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- hand references


def hand_tilt(pi0, r, kappa):
    """pi* = pi0 e^{kappa r} / Z by loops (rewards measured from their top to avoid overflow).

    Returns (pi, expected reward, KL as a sum, log Z)."""
    top = max(r)
    w = [p * math.exp(kappa * (x - top)) for p, x in zip(pi0, r)]
    z = sum(w)
    pi = [x / z for x in w]
    expected = sum(p * x for p, x in zip(pi, r))
    kl = sum(p * math.log(p / q) for p, q in zip(pi, pi0) if p > 0)
    return pi, expected, kl, math.log(z) + kappa * top


def enumerate_best_of_n(pi0, r, n):
    """Best-of-n by listing all ordered n-tuples of draws; among tied best draws each is
    returned with equal chance (the same law as sharing a level in proportion to pi0)."""
    out = [0.0] * len(pi0)
    for draws in itertools.product(range(len(pi0)), repeat=n):
        p = math.prod(pi0[y] for y in draws)
        if p == 0.0:
            continue
        top = max(r[y] for y in draws)
        winners = [y for y in draws if r[y] == top]
        for y in winners:
            out[y] += p / len(winners)
    return out


def folklore(n):
    return math.log(n) - (n - 1) / n


def kl_sum(p, q):
    return sum(a * math.log(a / b) for a, b in zip(p, q) if a > 0)


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0.7,0.2,0.1", [0.7, 0.2, 0.1]),
        (" 0.7 , 0.2 ; 0.1 ", [0.7, 0.2, 0.1]),
        ("0.7 0.2 0.1", [0.7, 0.2, 0.1]),
        ("1/2, 1/2", [0.5, 0.5]),
        ("-1, +2.5, 3e-2, .5", [-1.0, 2.5, 0.03, 0.5]),
        ("0.5,0.5,", [0.5, 0.5]),
        ("7", [7.0]),
        ("\u22120.5, 1", [-0.5, 1.0]),
    ],
)
def test_parse_values_reads_lists(text, expected):
    out = um.parse_values(text, "π₀")
    assert out.dtype == float
    assert out.tolist() == expected


@pytest.mark.parametrize(
    "text, words",
    [
        ("", "empty"),
        (" , ; ", "empty"),
        ("0.7,,0.3", "entry 2 is empty"),
        ("0.7, abc", "'abc' is not a number"),
        ("nan, 1", "'nan' is not a number"),
        ("inf", "'inf' is not a number"),
        ("1e999, 1", "'1e999' is not a finite number"),
        ("1/0", "not a finite number"),
        ("0x10", "not a number"),
    ],
)
def test_parse_values_refuses_with_a_readers_message(text, words):
    with pytest.raises(ValueError, match=r"^rewards: ") as err:
        um.parse_values(text, "rewards")
    assert words in str(err.value)


def test_parse_values_caps_the_length_and_quotes_junk_briefly():
    um.parse_values(",".join(["1"] * um.MAX_RESPONSES), "r")  # 200 is allowed
    with pytest.raises(ValueError, match="201 values; a model takes at most 200"):
        um.parse_values(",".join(["1"] * (um.MAX_RESPONSES + 1)), "r")
    with pytest.raises(ValueError) as err:
        um.parse_values("x" * 500, "r")
    assert len(str(err.value)) < 80


@pytest.mark.parametrize(
    "x, text",
    [
        (0.7, "0.7"),
        (0.1 + 0.2, "0.30000000000000004"),
        (2.0, "2"),
        (-3.0, "-3"),
        (0.0, "0"),
        (-0.0, "0"),
        (1e20, "1e20"),
        (123456.0, "123456"),
        (1e300, "1e300"),
        (2.5e-12, "2.5e-12"),
        (1 / 3, "0.3333333333333333"),
    ],
)
def test_short_text_is_the_shortest_exact_text(x, text):
    assert um.short_text(x) == text


@FEW
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=20))
def test_text_reads_back_to_the_same_numbers(values):
    text = um.to_text(values)
    assert "+" not in text and " " not in text
    assert um.parse_values(text, "r").tolist() == [v + 0.0 for v in values]


# --------------------------------------------------------------------------- the model


def test_make_model_keeps_a_normalised_pi0_as_given():
    m = um.make_model([0.7, 0.2, 0.1], [0, 1, 2])
    assert m.pi0.tolist() == [0.7, 0.2, 0.1]  # 0.9999999999999999 is rounding
    assert m.notes == ()
    assert m.r_true is None
    np.testing.assert_allclose(
        m.log_pi0, [math.log(0.7), math.log(0.2), math.log(0.1)], rtol=0, atol=1e-15
    )
    assert um.model_text(m) == {"pi0": "0.7,0.2,0.1", "r": "0,1,2"}


def test_make_model_normalises_and_says_so():
    m = um.make_model([0.6, 0.4, 0.2], [0, 1, 2])
    assert m.notes == ("π₀ summed to 1.2; divided by 1.2.",)
    np.testing.assert_allclose(m.pi0, [0.5, 1 / 3, 1 / 6], rtol=1e-15)
    np.testing.assert_allclose(np.exp(m.log_pi0), [0.5, 1 / 3, 1 / 6], rtol=1e-14)
    m = um.make_model([7, 2, 1], [0, 1, 2])
    assert m.notes == ("π₀ summed to 10; divided by 10.",)
    np.testing.assert_allclose(m.pi0, [0.7, 0.2, 0.1], rtol=1e-15)
    m = um.make_model([0.333, 0.333, 0.333], [0, 0, 1])
    assert m.notes == ("π₀ summed to 0.999; divided by 0.999.",)


def test_make_model_survives_tiny_and_huge_weights():
    m = um.make_model([1e-310, 3e-310], [0, 1])  # subnormal weights
    np.testing.assert_allclose(m.pi0, [0.25, 0.75], rtol=1e-4)
    m = um.make_model([1e308, 1e308, 1e308], [0, 1, 2])  # the sum overflows
    np.testing.assert_allclose(m.pi0, [1 / 3] * 3, rtol=1e-15)
    assert m.notes == ("π₀ did not sum to 1; divided by its sum.",)
    assert np.all(np.isfinite(m.log_pi0))


def test_make_model_keeps_zero_probabilities_as_minus_infinity():
    m = um.make_model([0.5, 0.0, 0.5], [0, 2, 1])
    assert m.pi0.tolist() == [0.5, 0.0, 0.5]
    assert m.log_pi0[1] == -np.inf
    assert m.notes == ()


def test_make_model_reads_a_true_reward():
    m = um.make_model([0.5, 0.5], [0, 1], [0.2, -1])
    assert m.r_true.tolist() == [0.2, -1.0]
    assert um.model_text(m) == {"pi0": "0.5,0.5", "r": "0,1", "rtrue": "0.2,-1"}


@pytest.mark.parametrize(
    "pi0, r, rt, words",
    [
        ([0.5, 0.5], [0, 1, 2], None, "π₀ has 2 entries but r has 3"),
        ([0.5, 0.5], [0, 1], [1], "π₀ has 2 entries but the true reward has 1"),
        ([0.5, -0.1, 0.6], [0, 1, 2], None, "cannot be negative (entry 2 is -0.1)"),
        ([0, 0, 0], [0, 1, 2], None, "all probabilities are zero"),
        ([], [], None, "empty"),
        ([0.5, float("nan")], [0, 1], None, "finite"),
        ([0.5, 0.5], [0, float("inf")], None, "finite"),
        ([0.5, 0.5], [0, 1], [0, float("-inf")], "finite"),
        ([0.5, 0.5], [0, 2e6], None, "between"),
        ([0.5, 0.5], [-2e6, 0], None, "between"),
        ([1.0] * 201, [0.0] * 201, None, "at most 200"),
    ],
)
def test_make_model_refuses_bad_models_clearly(pi0, r, rt, words):
    with pytest.raises(ValueError) as err:
        um.make_model(pi0, r, rt)
    assert words in str(err.value)


def test_read_model_refuses_text_that_is_not_a_list():
    with pytest.raises(ValueError, match="π₀: 'a' is not a number"):
        um.read_model("a,b", "0,1")
    with pytest.raises(ValueError, match="π₀ has 2 entries but r has 3"):
        um.read_model("1,1", "0,1,2")
    assert um.read_model("1, 3", "0; 1", "0 0").notes == ("π₀ summed to 4; divided by 4.",)


@FEW
@given(
    st.lists(st.integers(0, 9), min_size=1, max_size=12).filter(any),
    st.lists(st.floats(-5, 5, allow_nan=False), min_size=12, max_size=12),
)
def test_a_model_and_its_text_read_back_to_the_same_model(weights, rewards):
    m = um.make_model([w / 7 for w in weights], rewards[: len(weights)])
    again = um.read_model(**dict(zip(("pi0_text", "r_text"), um.model_text(m).values())))
    assert again.pi0.tolist() == m.pi0.tolist()
    assert again.r.tolist() == m.r.tolist()
    assert again.notes == ()  # already normalised: no second note


# --------------------------------------------------------------------------- presets


def test_presets_are_in_order_and_well_formed():
    assert list(um.PRESETS) == [
        "The book's model (30 responses)",
        "Exercise 12.1",
        "Example 12.1",
        "Exercise 12.2: the coin",
    ]
    for name, p in um.PRESETS.items():
        assert len(p.pi0) == len(p.r) == len(p.labels)
        assert len(set(p.labels)) == len(p.labels)
        m = um.preset_model(name)
        assert m.notes == ()  # every preset is already normalised
    assert um.PRESETS["Example 12.1"].labels == ("formal", "casual", "unhelpful")
    assert um.PRESETS["Example 12.1"].beta == 0.5
    assert um.PRESETS["Exercise 12.1"].beta == 1.0
    assert um.PRESETS["Exercise 12.2: the coin"].n == 2
    assert um.model_text(um.preset_model("Exercise 12.1")) == {"pi0": "0.7,0.2,0.1", "r": "0,1,2"}
    assert um.model_text(um.preset_model("Example 12.1")) == {"pi0": "0.2,0.1,0.7", "r": "1,1,0"}
    assert um.model_text(um.preset_model("Exercise 12.2: the coin")) == {
        "pi0": "0.5,0.5",
        "r": "0,1",
    }
    with pytest.raises(KeyError, match=r"Exercise 12\.1"):
        um.preset_model("nope")


def test_the_book_preset_is_the_stated_model():
    m = um.preset_model(um.BOOK)
    r = np.linspace(0, 1, 30)
    g = np.exp(-((r - 0.3) ** 2) / (2 * 0.17**2))
    np.testing.assert_allclose(m.r, r, rtol=0, atol=1e-15)
    np.testing.assert_allclose(m.pi0, g / g.sum(), rtol=1e-12)
    np.testing.assert_allclose(m.r_true, r - 2.4 * np.maximum(r - 0.5, 0) ** 2, atol=1e-15)
    assert um.is_small(um.preset_model("Exercise 12.1")) and not um.is_small(m)
    assert um.is_small(um.make_model([1] * 12, [0] * 12))
    assert not um.is_small(um.make_model([1] * 13, [0] * 13))


# --------------------------------------------------------------------------- the chapter's numbers


def test_exercise_12_1_at_beta_1():
    m = um.preset_model("Exercise 12.1")
    t = tilt.tilt(m.log_pi0, m.r, 1.0)
    assert [f"{p:.3f}" for p in t.pi] == ["0.353", "0.274", "0.373"]  # printed
    assert f"{float(t.expected):.3f}" == "1.020"
    assert f"{float(t.kl):.3f}" == "0.335"
    assert f"{float(t.log_z):.3f}" == "0.684" and f"{math.exp(t.log_z):.4f}" == "1.9826"
    # Equation (12.6), KL = kappa E[r] - log Z, gives the same number, and so do loops.
    assert f"{float(t.expected - t.log_z):.3f}" == "0.335"
    pi, e, kl, log_z = hand_tilt([0.7, 0.2, 0.1], [0, 1, 2], 1.0)
    np.testing.assert_allclose(t.pi, pi, rtol=1e-13)
    assert float(t.expected) == pytest.approx(e, rel=1e-13)
    assert float(t.kl) == pytest.approx(kl, rel=1e-12)
    assert float(t.log_z) == pytest.approx(
        math.log(0.7 + 0.2 * math.e + 0.1 * math.e**2), rel=1e-14
    )
    # The limits: beta -> infinity gives pi0 (reward 0.4, KL 0); beta -> 0 the third response.
    lim = tilt.tilt(m.log_pi0, m.r, np.array([0.0, 1e4]))
    assert lim.expected[0] == pytest.approx(0.4, abs=1e-15) and lim.kl[0] == 0.0
    assert lim.expected[1] == pytest.approx(2.0, abs=1e-12)
    assert lim.kl[1] == pytest.approx(math.log(10.0), rel=1e-12)


def test_example_12_1_styles():
    m = um.preset_model("Example 12.1")
    half, tenth = tilt.tilt(m.log_pi0, m.r, np.array([2.0, 10.0])).pi
    assert [f"{p:.2f}" for p in half] == ["0.51", "0.25", "0.24"]
    assert [f"{p:.3f}" for p in tenth[:2]] == ["0.667", "0.333"] and f"{tenth[2]:.4f}" == "0.0001"
    for pi in (half, tenth):
        assert pi[0] / pi[1] == pytest.approx(2.0, rel=1e-13)  # the prior's odds survive
    z = 0.3 * math.exp(2) + 0.7
    np.testing.assert_allclose(
        half, [0.2 * math.exp(2) / z, 0.1 * math.exp(2) / z, 0.7 / z], rtol=1e-13
    )


def test_the_coin_of_exercise_12_2():
    m = um.preset_model("Exercise 12.2: the coin")
    b = bon.best_of_n(m.log_pi0, m.r, np.array([2.0, 10.0, 100.0]))
    np.testing.assert_allclose(b.pi[0], [0.25, 0.75], rtol=1e-15)
    assert f"{b.kl[0]:.3f}" == "0.131" and f"{b.bound[0]:.3f}" == "0.193"
    assert f"{b.kl[1]:.3f}" == "0.685" and f"{b.bound[1]:.3f}" == "1.403"
    assert f"{b.bound[2]:.3f}" == "3.615" and b.kl[2] <= math.log(2)
    # At n = 100 the gap to log 2 is below double precision; at n = 30 it still shows.
    assert float(bon.best_of_n(m.log_pi0, m.r, 30.0).kl) < math.log(2) - 1e-9
    # By hand: pi_n = (2^-n, 1 - 2^-n).
    for i, n in enumerate((2, 10, 100)):
        q = 2.0**-n
        assert b.kl[i] == pytest.approx(kl_sum([q, 1 - q], [0.5, 0.5]), rel=1e-12)
        assert b.bound[i] == pytest.approx(folklore(n), rel=1e-14)


def test_zero_probabilities_change_nothing_else():
    """A response pi0 gives nothing gets nothing from the tilt or best-of-n, and the rest is
    the model without it; even when it carries the highest reward."""
    full = um.make_model([0.5, 0.0, 0.3, 0.2], [0.0, 9.0, 1.0, 1.0])
    less = um.make_model([0.5, 0.3, 0.2], [0.0, 1.0, 1.0])
    kappas = np.array([0.0, 0.7, 30.0, 1e4])
    a, b = tilt.tilt(full.log_pi0, full.r, kappas), tilt.tilt(less.log_pi0, less.r, kappas)
    assert np.all(a.pi[:, 1] == 0.0)
    # tilt measures rewards from the largest one, here the unreachable 9: at kappa = 10^4 the
    # logits are near -8e4, whose rounding (1.5e-11) is all that separates the two.
    np.testing.assert_allclose(a.pi[:, [0, 2, 3]], b.pi, rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(a.kl, b.kl, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(a.expected, b.expected, rtol=1e-10)
    ns = np.array([1.0, 3.0, 1e7])
    a, b = bon.best_of_n(full.log_pi0, full.r, ns), bon.best_of_n(less.log_pi0, less.r, ns)
    assert np.all(a.pi[:, 1] == 0.0)
    np.testing.assert_allclose(a.pi[:, [0, 2, 3]], b.pi, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(a.kl, b.kl, rtol=1e-12, atol=1e-15)
    # Best-of-3 by hand on the tied top level {0.3, 0.2}: 1 - 0.5^3, shared 3:2.
    np.testing.assert_allclose(a.pi[1], [0.125, 0.0, 0.875 * 0.6, 0.875 * 0.4], rtol=1e-14)
    # The limit of the tilt is the top response pi0 can produce, not the zero-probability one.
    assert a.expected[-1] == pytest.approx(1.0)
    assert float(tilt.tilt(full.log_pi0, full.r, 1e4).kl) == pytest.approx(math.log(2.0), rel=1e-10)


def test_all_mass_on_one_response():
    m = um.make_model([0.0, 1.0, 0.0], [5.0, 1.0, -2.0])
    t = tilt.tilt(m.log_pi0, m.r, np.array([0.0, 1.0, 1e4]))
    b = bon.best_of_n(m.log_pi0, m.r, np.array([1.0, 1e7]))
    for pi in (*t.pi, *b.pi):
        assert pi.tolist() == [0.0, 1.0, 0.0]
    assert np.all(t.kl == 0.0) and np.all(b.kl == 0.0)
    assert np.all(np.isfinite(t.log_z))


def test_extreme_rewards_and_kappa_stay_finite():
    m = um.make_model([0.25, 0.25, 0.5], [-1e6, 1e6, 1e6])
    t = tilt.tilt(m.log_pi0, m.r, np.array([0.0, 1e-4, 1e4]))
    assert np.all(np.isfinite(t.log_z)) and np.all(np.isfinite(t.kl))
    np.testing.assert_allclose(t.pi[-1], [0.0, 1 / 3, 2 / 3], rtol=1e-12)


# --------------------------------------------------------------------------- properties


@st.composite
def small_models(draw, max_size=8):
    """2-8 responses; integer weights with zeros likely; rewards from a few values, so ties."""
    k = draw(st.integers(2, max_size))
    weights = draw(st.lists(st.integers(0, 4), min_size=k, max_size=k).filter(any))
    rewards = draw(st.lists(st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0]), min_size=k, max_size=k))
    total = sum(weights)
    return [w / total for w in weights], rewards


@FEW
@given(small_models(), st.floats(0.0, 40.0))
def test_tilt_sums_to_one_and_matches_loops(mod, kappa):
    pi0, r = mod
    m = um.make_model(pi0, r)
    t = tilt.tilt(m.log_pi0, m.r, kappa)
    assert float(np.sum(t.pi)) == pytest.approx(1.0, abs=1e-13)
    pi, e, kl, log_z = hand_tilt(pi0, r, kappa)
    np.testing.assert_allclose(t.pi, pi, rtol=1e-11, atol=1e-15)
    assert float(t.kl) == pytest.approx(kl, rel=1e-9, abs=1e-12)
    assert float(t.log_z) == pytest.approx(log_z, rel=1e-12, abs=1e-12)


@FEW
@given(small_models(), st.floats(0.0, 40.0))
def test_equation_12_6_holds(mod, kappa):
    """KL(pi* || pi0) = kappa E[r] - log Z, with KL computed as a sum by hand."""
    pi0, r = mod
    m = um.make_model(pi0, r)
    t = tilt.tilt(m.log_pi0, m.r, kappa)
    _, _, kl, _ = hand_tilt(pi0, r, kappa)
    scale = 1e-11 * (1.0 + kappa * max(abs(x) for x in r))
    assert float(kappa * t.expected - t.log_z) == pytest.approx(kl, abs=scale)


@FEW
@given(small_models(max_size=6), st.integers(1, 4))
def test_best_of_n_with_ties_and_zeros_equals_enumeration(mod, n):
    pi0, r = mod
    m = um.make_model(pi0, r)
    b = bon.best_of_n(m.log_pi0, m.r, n)
    expected = enumerate_best_of_n(pi0, r, n)
    np.testing.assert_allclose(b.pi, expected, rtol=1e-10, atol=1e-14)
    assert float(b.kl) == pytest.approx(kl_sum(expected, pi0), rel=1e-8, abs=1e-12)
    assert float(b.kl) <= folklore(n) + 1e-12


@FEW
@given(small_models(), st.floats(0.0, 7.0))
def test_exact_best_of_n_kl_never_exceeds_the_formula(mod, log10_n):
    pi0, r = mod
    n = float(round(10.0**log10_n))
    m = um.make_model(pi0, r)
    b = bon.best_of_n(m.log_pi0, m.r, n)
    assert np.isfinite(b.kl)
    assert float(b.kl) <= folklore(n) + 1e-12
    assert float(np.sum(b.pi)) == pytest.approx(1.0, abs=1e-12)
    # The exact KL can never exceed log(1 / pi0 of the top level that has mass).
    top = max(x for x, p in zip(r, pi0) if p > 0)
    top_mass = sum(p for x, p in zip(r, pi0) if x == top)
    assert float(b.kl) <= math.log(1.0 / top_mass) + 1e-12
