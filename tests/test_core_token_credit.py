"""klrl_core.token_credit against independent computations: the SPEC's defaults by hand, plain
loops over the 27 responses (enumeration, dicts keyed by prefix), the telescoping and prefix
identities of Exercise 28.2, DPO's optimum, and Hypothesis properties over beta, rule, pi_ref."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from klrl_core import token_credit as tc

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
REF = {"a": 0.5, "b": 0.3, "c": 0.2}
ALL = ["".join(t) for t in itertools.product("abc", repeat=3)]


def r_by_hand(y: str, rule: str) -> float:
    """The SPEC's rules, written from their text."""
    if rule == "middle":
        return (1.0 if y[1] == "b" else 0.0) + (0.2 if y[2] == "c" else 0.0)
    if rule == "last":
        return 1.0 if y[2] == "c" else 0.0
    if rule == "first":
        return 1.0 if y[0] == "c" else 0.0
    return y.count("c") / 3


def enumerate_tilt(beta: float, rule: str, ref=REF):
    """pi*(y) = pi_ref(y) e^{r/beta} / Z by plain loops (moderate beta), and its prefixes' mass."""
    w = {y: ref[y[0]] * ref[y[1]] * ref[y[2]] * math.exp(r_by_hand(y, rule) / beta) for y in ALL}
    z = sum(w.values())
    pi = {y: w[y] / z for y in ALL}
    mass = {}
    for y, p in pi.items():
        for t in range(4):
            mass[y[:t]] = mass.get(y[:t], 0.0) + p
    return pi, z, mass


def soft_value_by_recursion(prefix: str, beta: float, rule: str, ref=REF) -> float:
    """V*(s) by a recursive function (a second, differently written implementation)."""
    if len(prefix) == 3:
        return r_by_hand(prefix, rule)
    return beta * math.log(
        sum(
            ref[a] * math.exp(soft_value_by_recursion(prefix + a, beta, rule, ref) / beta)
            for a in "abc"
        )
    )


# --- the SPEC's defaults, by hand ----------------------------------------------------------


def test_defaults_printed_in_the_issue():
    tree = tc.soft_tree(0.5, "middle")
    assert round(float(tree.values[0][0]), 3) == 0.582
    assert np.round(tc.token_credits(tree, "abc"), 3).tolist() == [0.0, 0.465, 0.153]
    assert round(tc.implicit_reward(tree, "abc"), 3) == 0.618
    s = tc.sequence_tilt(0.5, "middle")
    assert round(s.expected, 3) == 0.814
    assert round(s.kl, 3) == 0.464
    assert np.round(tc.bandit_share(0.5, "middle", "abc"), 3).tolist() == [0.386] * 3
    assert tc.implicit_reward_difference(tree, "abc", "aba") == pytest.approx(0.2, abs=1e-12)


def test_middle_rule_closed_form():
    # r = [y2 = b] + 0.2 [y3 = c] factorises: Z = (0.7 + 0.3 e^2)(0.8 + 0.2 e^0.4) at beta 0.5.
    z2, z3 = 0.7 + 0.3 * math.exp(2.0), 0.8 + 0.2 * math.exp(0.4)
    tree = tc.soft_tree(0.5)
    assert tree.values[0][0] == pytest.approx(0.5 * math.log(z2 * z3), rel=1e-13)
    c = tc.token_credits(tree, "abc")
    assert c[0] == pytest.approx(0.0, abs=1e-14)  # y1 cannot change the reward
    assert c[1] == pytest.approx(1.0 - 0.5 * math.log(z2), rel=1e-12)
    assert c[2] == pytest.approx(0.2 - 0.5 * math.log(z3), rel=1e-12)
    assert tc.sequence_tilt(0.5).log_z == pytest.approx(math.log(z2 * z3), rel=1e-13)


def test_rewards_and_indexing():
    for rule in tc.RULES:
        assert tc.rewards(rule).tolist() == [r_by_hand(y, rule) for y in ALL]
    assert tc.responses() == ALL
    assert [tc.response_index(y) for y in ALL] == list(range(27))
    assert tc.prefixes(2)[5] == "bc" and tc.prefixes(0) == [""]
    assert tc.response_text((2, 0, 1)) == "cab"
    assert tc.shared_prefix("abc", "aba") == 2 and tc.shared_prefix("abc", "cbc") == 0
    assert tc.shared_prefix("abc", "abc") == 3


# --- enumeration of the 27 responses -----------------------------------------------------


@pytest.mark.parametrize("rule", tc.RULES)
@pytest.mark.parametrize("beta", [0.1, 0.5, 2.0, 7.0])
def test_tree_matches_enumeration_and_recursion(rule, beta):
    tree = tc.soft_tree(beta, rule)
    pi, z, mass = enumerate_tilt(beta, rule)
    s = tc.sequence_tilt(beta, rule)
    assert s.log_z == pytest.approx(math.log(z), rel=1e-12)
    assert s.value == pytest.approx(beta * math.log(z), rel=1e-12)
    assert tree.values[0][0] == pytest.approx(beta * math.log(z), rel=1e-12)
    assert s.pi == pytest.approx([pi[y] for y in ALL], rel=1e-11)
    # the product of the tree's token probabilities is the sequence-level tilt (factorisation)
    assert np.exp(tc.policy_sequence(tree)) == pytest.approx([pi[y] for y in ALL], rel=1e-11)
    assert s.expected == pytest.approx(sum(pi[y] * r_by_hand(y, rule) for y in ALL), rel=1e-12)
    kl = sum(p * math.log(p / (REF[y[0]] * REF[y[1]] * REF[y[2]])) for y, p in pi.items())
    assert s.kl == pytest.approx(kl, rel=1e-10, abs=1e-14)
    for depth in range(3):
        for n, prefix in enumerate(tc.prefixes(depth)):
            assert tree.values[depth][n] == pytest.approx(
                soft_value_by_recursion(prefix, beta, rule), rel=1e-12, abs=1e-14
            )
            for a_i, a in enumerate("abc"):
                cond = mass[prefix + a] / mass[prefix]  # pi*(a | s) by marginals
                assert math.exp(tree.log_pi[depth][n, a_i]) == pytest.approx(cond, rel=1e-11)
                # credit = beta ln pi*/pi_ref = Q* - V*
                assert tree.credit[depth][n, a_i] == pytest.approx(
                    beta * math.log(cond / REF[a]), rel=1e-9, abs=1e-12
                )
                assert tree.q[depth][n, a_i] == pytest.approx(
                    soft_value_by_recursion(prefix + a, beta, rule), rel=1e-12, abs=1e-14
                )
    cond = tc.token_conditionals(s.log_pi)
    for t in range(3):
        assert cond[t] == pytest.approx(tree.log_pi[t], rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("rule", tc.RULES)
def test_telescoping_and_prefix_identity_on_every_pair(rule):
    beta = 0.7
    tree = tc.soft_tree(beta, rule)
    v0 = soft_value_by_recursion("", beta, rule)
    for y in ALL:
        # Ex. 28.2(a): the credits sum to r(y) - V*(x)
        assert tc.implicit_reward(tree, y) == pytest.approx(r_by_hand(y, rule) - v0, abs=1e-12)
        values = tc.node_values(tree, y)
        assert values[0] == pytest.approx(v0, abs=1e-12) and values[3] == r_by_hand(y, rule)
        assert tc.token_credits(tree, y) == pytest.approx(np.diff(values), abs=1e-12)
    for y, y2 in itertools.product(ALL, ALL):
        k = sum(1 for _ in itertools.takewhile(lambda p: p[0] == p[1], zip(y, y2)))
        # Ex. 28.2(b): shared tokens have identical credits; the difference is r(y) - r(y')
        assert np.array_equal(tc.token_credits(tree, y)[:k], tc.token_credits(tree, y2)[:k])
        diff = tc.implicit_reward_difference(tree, y, y2)
        assert diff == pytest.approx(r_by_hand(y, rule) - r_by_hand(y2, rule), abs=1e-12)
        assert diff == pytest.approx(
            tc.implicit_reward(tree, y) - tc.implicit_reward(tree, y2), abs=1e-12
        )


def test_token_log_pi_and_mass():
    tree = tc.soft_tree(0.5)
    pi, _, mass = enumerate_tilt(0.5, "middle")
    lp = tc.token_log_pi(tree, "abc")
    assert math.exp(lp.sum()) == pytest.approx(pi["abc"], rel=1e-12)
    levels = tc.node_mass(tc.policy_sequence(tree))
    for t in range(4):
        assert levels[t] == pytest.approx([mass[p] for p in tc.prefixes(t)], rel=1e-11)
    ref_levels = tc.token_conditionals(tc.log_pi_ref_sequence())
    for t in range(3):
        assert np.exp(ref_levels[t]) == pytest.approx(np.tile([0.5, 0.3, 0.2], (3**t, 1)))


# --- DPO on the tree ---------------------------------------------------------------------


@pytest.mark.parametrize("rule", tc.RULES)
@pytest.mark.parametrize("beta", [0.2, 0.5, 3.0])
def test_dpo_optimum_has_the_soft_credits(rule, beta):
    tree = tc.soft_tree(beta, rule)
    d = tc.dpo_on_tree(beta, rule)
    assert d.optimum.exists
    pi, _, _ = enumerate_tilt(beta, rule)
    assert np.exp(d.log_pi) == pytest.approx([pi[y] for y in ALL], rel=1e-7)
    for t in range(3):
        assert d.credit[t] == pytest.approx(tree.credit[t], abs=1e-8)
        assert d.log_pi_tokens[t] == pytest.approx(tree.log_pi[t], abs=1e-8)


def test_dpo_refuses_infinite_beta():
    with pytest.raises(ValueError, match="finite beta"):
        tc.dpo_on_tree(math.inf)


# --- extreme beta ----------------------------------------------------------------------------


@pytest.mark.parametrize("rule", tc.RULES)
@pytest.mark.parametrize("beta", [1e-4, 1e-3, 1e3, 1e4, math.inf])
def test_extreme_beta_stays_finite_and_near_its_limit(rule, beta):
    tree = tc.soft_tree(beta, rule)
    s = tc.sequence_tilt(beta, rule)
    r = np.array([r_by_hand(y, rule) for y in ALL])
    ref_pi = np.array([REF[y[0]] * REF[y[1]] * REF[y[2]] for y in ALL])
    for arr in (*tree.values, *tree.credit, *tree.log_pi):
        assert np.all(np.isfinite(arr))
    assert all(np.isfinite(x) for x in (s.value, s.expected, s.kl, s.log_z))
    assert tree.values[0][0] == pytest.approx(s.value, abs=1e-9)
    for y in ALL:
        assert tc.implicit_reward(tree, y) == pytest.approx(r_by_hand(y, rule) - s.value, abs=1e-9)
    if beta <= 1e-3:
        # beta -> 0: V*(x) -> max r (minus beta ln of the best responses' reference mass)
        best = r == r.max()
        assert s.value == pytest.approx(r.max() + beta * math.log(ref_pi[best].sum()), abs=1e-9)
        assert s.expected == pytest.approx(r.max(), abs=1e-6)
    else:
        # beta -> inf: no tilt, V*(x) -> E_pi_ref[r], credit -> the reference's advantage
        assert s.value == pytest.approx(ref_pi @ r, abs=1e-3)
        assert s.kl == pytest.approx(0.0, abs=1e-6)
    if beta == math.inf:
        assert s.value == pytest.approx(ref_pi @ r, abs=1e-14)
        assert s.kl == 0.0
        # credit of token 1 under the middle rule and beta = inf: E[r | y1] - E[r] = 0
        assert np.allclose(np.exp(tree.log_pi[2]), [0.5, 0.3, 0.2])


def test_credit_converges_to_the_infinite_beta_limit():
    far = tc.soft_tree(1e6, "count")
    limit = tc.soft_tree(math.inf, "count")
    for t in range(3):
        assert far.credit[t] == pytest.approx(limit.credit[t], abs=1e-5)
    # with no tilt the credit of a c is the reference's advantage (1/3)(1 - 0.2) per c
    assert tc.token_credits(limit, "ccc") == pytest.approx([0.8 / 3] * 3)


# --- properties --------------------------------------------------------------------------------

betas = st.floats(min_value=-3, max_value=3).map(lambda e: 10.0**e)
refs = st.lists(st.floats(min_value=0.05, max_value=1.0), min_size=3, max_size=3)


@SETTINGS
@given(
    beta=betas,
    rule=st.sampled_from(tc.RULES),
    ref=refs,
    y=st.sampled_from(ALL),
    y2=st.sampled_from(ALL),
)
def test_properties(beta, rule, ref, y, y2):
    p = np.array(ref) / sum(ref)
    tree = tc.soft_tree(beta, rule, p)
    s = tc.sequence_tilt(beta, rule, p)
    r = np.array([r_by_hand(z, rule) for z in ALL])
    ref_seq = np.array(
        [
            p[tc.TOKENS.index(z[0])] * p[tc.TOKENS.index(z[1])] * p[tc.TOKENS.index(z[2])]
            for z in ALL
        ]
    )
    # soft max between the reference's mean and the max (Jensen)
    assert ref_seq @ r - 1e-9 <= s.value <= r.max() + 1e-12
    # Exercise 28.1: the optimal value beta ln Z = E_pi*[r] - beta KL(pi* || pi_ref)
    assert s.value == pytest.approx(s.expected - beta * s.kl, abs=1e-9 * max(1.0, beta))
    assert tree.values[0][0] == pytest.approx(s.value, abs=1e-10)
    assert tc.implicit_reward(tree, y) == pytest.approx(r_by_hand(y, rule) - s.value, abs=1e-9)
    assert tc.implicit_reward_difference(tree, y, y2) == pytest.approx(
        r_by_hand(y, rule) - r_by_hand(y2, rule), abs=1e-9
    )
    for t in range(3):
        assert np.exp(tree.log_pi[t]).sum(axis=1) == pytest.approx(np.ones(3**t))
    # the bandit share is one number on every token, whose pi*-average over responses is 0
    assert np.ptp(tc.bandit_share(beta, rule, y, p)) == 0
    assert s.pi @ (r - s.expected) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("bad", ["ab", "abcd", "abd", "", 5, (0, 1, 3), (0, 1)])
def test_bad_responses_are_refused(bad):
    with pytest.raises(ValueError):
        tc.parse_response(bad)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="reward rule"):
        tc.soft_tree(0.5, "longest")
    for beta in (0, -1, float("nan"), "x"):
        with pytest.raises(ValueError, match="beta"):
            tc.soft_tree(beta)
        with pytest.raises(ValueError, match="beta"):
            tc.sequence_tilt(beta)
    with pytest.raises(ValueError, match="pi_ref"):
        tc.soft_tree(0.5, "middle", (0.5, 0.5))
    with pytest.raises(ValueError, match="pi_ref"):
        tc.soft_tree(0.5, "middle", (0.5, 0.5, 0.0))
    with pytest.raises(ValueError, match="log_pi_seq"):
        tc.token_conditionals(np.zeros(9))
    assert tc.parse_response(" ABC ") == (0, 1, 2)


def value_by_loops(prefix: str, beta: float, r: dict, ref=REF) -> float:
    if len(prefix) == 3:
        return r[prefix]
    return beta * math.log(
        sum(ref[a] * math.exp(value_by_loops(prefix + a, beta, r, ref) / beta) for a in "abc")
    )


@SETTINGS
@given(
    r=st.lists(st.floats(-2, 2), min_size=27, max_size=27),
    beta=st.floats(min_value=-1, max_value=1).map(lambda e: 10.0**e),
    y=st.sampled_from(ALL),
)
def test_any_reward_on_the_tree_against_loops(r, beta, y):
    """A reward that does not split over tokens: every node's value and credit differ."""
    table = dict(zip(ALL, r))
    tree = tc.soft_tree(beta, np.array(r))
    assert tc.reward(y, np.array(r)) == table[y]
    values = [value_by_loops(y[:t], beta, table) for t in range(4)]
    assert tc.node_values(tree, y) == pytest.approx(values, abs=1e-9)
    assert tc.token_credits(tree, y) == pytest.approx(np.diff(values), abs=1e-9)
    mass = {
        p: sum(
            REF[z[0]] * REF[z[1]] * REF[z[2]] * math.exp(table[z] / beta)
            for z in ALL
            if z.startswith(p)
        )
        for p in (y[:1], y[:2], y)
    }
    total = sum(REF[z[0]] * REF[z[1]] * REF[z[2]] * math.exp(table[z] / beta) for z in ALL)
    conds = [mass[y[:1]] / total, mass[y[:2]] / mass[y[:1]], mass[y] / mass[y[:2]]]
    assert np.exp(tc.token_log_pi(tree, y)) == pytest.approx(conds, rel=1e-9)
    assert tc.implicit_reward(tree, y) == pytest.approx(table[y] - values[0], abs=1e-9)


def test_reference_weights_are_normalised():
    a = tc.soft_tree(0.5, "count", (5.0, 3.0, 2.0))
    b = tc.soft_tree(0.5, "count")
    for t in range(3):
        assert a.credit[t] == pytest.approx(b.credit[t], abs=1e-14)
    assert tc.sequence_tilt(0.5, "count", (5, 3, 2)).value == pytest.approx(
        tc.sequence_tilt(0.5, "count").value, abs=1e-14
    )
    with pytest.raises(ValueError, match="27 finite rewards"):
        tc.soft_tree(0.5, np.zeros(26))


# --- V*(x) = E_π*[r] − β·KL: the soft value is the optimum's expected reward less its price --


@pytest.mark.parametrize("beta", [0.05, 0.25, 0.5, 2.0, 30.0])
@pytest.mark.parametrize("rule", ["middle", "last", "first", "count"])
def test_soft_value_is_expected_reward_less_beta_kl_by_enumeration(beta, rule):
    """Issue 31: the page connects y's credit sum r(y) − V*(x) with the bandit share
    r(y) − E_π*[r] through V*(x) = E_π*[r] − β·KL(π* ‖ π_ref). Both sides by plain loops over
    the 27 responses (the left by the recursive soft value), then the core against them."""
    pi, _, _ = enumerate_tilt(beta, rule)
    expected = sum(pi[y] * r_by_hand(y, rule) for y in ALL)
    kl = sum(pi[y] * math.log(pi[y] / (REF[y[0]] * REF[y[1]] * REF[y[2]])) for y in ALL)
    v0 = soft_value_by_recursion("", beta, rule)
    assert v0 == pytest.approx(expected - beta * kl, abs=1e-12)
    tree, seq = tc.soft_tree(beta, rule), tc.sequence_tilt(beta, rule)
    assert float(tree.values[0][0]) == pytest.approx(seq.expected - beta * seq.kl, abs=1e-12)
    for y in ("abc", "cbc", "aaa"):
        gap = float(tc.token_credits(tree, y).sum()) - (r_by_hand(y, rule) - expected)
        assert gap == pytest.approx(beta * kl, abs=1e-12)  # the same for every response


@pytest.mark.parametrize(
    "rule, by_hand", [("middle", 0.3 * 0.2), ("last", 0.2), ("first", 0.2), ("count", 0.2**3)]
)
def test_top_reward_mass_by_hand(rule, by_hand):
    """Under π_ref the top-reward responses are ?bc (middle), ??c (last), c?? (first) and ccc
    (count): their mass by hand. A uniform policy puts 3/27, 9/27, 9/27 and 1/27 there."""
    ref = np.exp(tc.log_pi_ref_sequence())
    assert tc.top_reward_mass(ref, rule) == pytest.approx(by_hand, rel=1e-12)
    count = {"middle": 3, "last": 9, "first": 9, "count": 1}[rule]
    assert tc.top_reward_mass(np.full(27, 1 / 27), rule) == pytest.approx(count / 27)
    with pytest.raises(ValueError):
        tc.top_reward_mass(np.full(26, 1 / 26), rule)
