"""A reader's own model on the tilt pages (issue 11): presets by link, the chapter's worked
numbers, bad lists. Expected values are the chapter's printed numbers or worked by hand here."""

import math

import pytest

from tests.conftest import assert_clean, metrics, notices, run_page

EX_12_1 = {"pi0": "0.7,0.2,0.1", "r": "0,1,2"}
EX_12_1_EXAMPLE = {"pi0": "0.2,0.1,0.7", "r": "1,1,0"}
COIN = {"pi0": "0.5,0.5", "r": "0,1"}


def table_rows(at) -> dict[str, list[str]]:
    """The small model's table: response label -> its printed row."""
    df = at.table[0].value
    return {str(i): [str(v) for v in row] for i, row in zip(df.index, df.to_numpy())}


def hand_tilt(pi0, r, beta):
    w = [p * math.exp(x / beta) for p, x in zip(pi0, r)]
    z = sum(w)
    pi = [x / z for x in w]
    e = sum(p * x for p, x in zip(pi, r))
    kl = sum(p * math.log(p / q) for p, q in zip(pi, pi0) if p > 0)
    return pi, e, kl, math.log(z)


def test_exercise_12_1_at_beta_1():
    at = run_page("tilt.py", beta="1", **EX_12_1)
    assert_clean(at)
    assert notices(at) == []
    m = metrics(at)
    # the chapter: pi* ~ (0.353, 0.274, 0.373), E[r] 1.020, KL 0.335 (and Eq. 12.6 agrees)
    assert m["E[r] under π*"] == "1.020"
    assert m["KL(π* ‖ π₀)"] == "0.335 nats"
    assert m["κ·E[r] − log Z"] == "0.335 nats"
    pi, e, kl, log_z = hand_tilt([0.7, 0.2, 0.1], [0, 1, 2], 1.0)
    assert m["log Z"] == f"{log_z:.3f}"
    rows = table_rows(at)
    assert [r[-1] for r in rows.values()] == ["0.353", "0.274", "0.373"]
    assert at.selectbox[0].value == "Exercise 12.1"  # the link names its preset
    assert at.query_params["pi0"] == "0.7,0.2,0.1" and at.query_params["r"] == "0,1,2"


@pytest.mark.parametrize(
    "beta, shares",
    [("0.5", ["0.507", "0.253", "0.240"]), ("0.1", ["0.667", "0.333", "1.1 × 10⁻⁴"])],
)
def test_example_12_1_keeps_the_styles_odds(beta, shares):
    """Example 12.1: (0.51, 0.25, 0.24) at beta 0.5 and (0.667, 0.333, 0.0001) at 0.1: a
    probability under 0.0005 keeps two significant figures instead of reading 0.000 (the
    chapter's 0.0001 is 1.1 × 10⁻⁴ to four decimals; klrl_app/fmt.py writes every such small
    probability as a × 10ⁿ)."""
    at = run_page("tilt.py", beta=beta, **EX_12_1_EXAMPLE)
    rows = table_rows(at)
    assert [r[-1] for r in rows.values()] == shares
    pi, *_ = hand_tilt([0.2, 0.1, 0.7], [1, 1, 0], float(beta))
    assert pi[0] / pi[1] == pytest.approx(2.0)  # the prior decides within a level
    assert at.selectbox[0].value == "Example 12.1"


@pytest.mark.parametrize("n, kl, formula", [("2", "0.131", "0.193"), ("10", "0.685", "1.403")])
def test_the_coin_of_exercise_12_2(n, kl, formula):
    at = run_page("best-of-n.py", n=n, **COIN)
    assert_clean(at)
    m = metrics(at)
    assert m[f"best-of-{n}: KL"] == f"{kl} nats"
    assert m["log n − (n−1)/n"] == f"{formula} nats"
    if n == "2":  # best-of-2 on a fair coin: (1/4, 3/4)
        assert [r[-1] for r in table_rows(at).values()] == ["0.250", "0.750"]


def test_the_coin_at_n_100_stays_below_log_2():
    m = metrics(run_page("best-of-n.py", n="100", **COIN))
    assert m["log n − (n−1)/n"] == "3.615 nats"
    assert float(m["best-of-100: KL"].split()[0]) < math.log(2)


def test_a_list_that_does_not_sum_to_one_is_normalised_with_a_note():
    at = run_page("tilt.py", pi0="2,1,1", r="1,1,0")
    assert_clean(at)
    said = " ".join(i.value for i in at.info)
    assert "summed to 4" in said
    assert at.query_params["pi0"] == "0.5,0.25,0.25"  # the link follows the reading


@pytest.mark.parametrize(
    "params, why",
    [
        ({"pi0": "0.5,abc", "r": "0,1"}, "not a number"),
        ({"pi0": "0.5,0.5", "r": "0,1,2"}, "2"),  # lengths differ
        ({"pi0": "-0.5,1.5", "r": "0,1"}, "negative"),
        ({"pi0": "0,0", "r": "0,1"}, "zero"),
        ({"pi0": "", "r": ""}, ""),
        ({"pi0": ",".join(["1"] * 201), "r": ",".join(["0"] * 201)}, "200"),
        ({"pi0": "0.5,0.5", "r": "0,inf"}, ""),
        ({"pi0": "0.5,0.5"}, "both"),
    ],
)
def test_bad_lists_give_a_notice_and_the_books_model(params, why):
    for page in ("tilt.py", "best-of-n.py", "overoptimization.py"):
        at = run_page(page, **params)
        assert_clean(at)
        said = " ".join(notices(at))
        assert "book's model" in said and why in said, said
        kl = next(v for k, v in metrics(at).items() if k.endswith("KL") or k.startswith("KL"))
        assert kl.endswith("nats") and len(kl.split()[0].split(".")[1]) == 2  # book: 2 digits


def test_overoptimization_takes_a_true_reward():
    at = run_page("overoptimization.py", pi0="0.6,0.3,0.1", r="0,1,2", rtrue="0,1,0.5", beta="1")
    assert_clean(at)
    m = metrics(at)
    pi, e, kl, _ = hand_tilt([0.6, 0.3, 0.1], [0, 1, 2], 1.0)
    assert m["true E[r*]"] == f"{pi[1] * 1 + pi[2] * 0.5:.3f}"
    assert at.query_params["rtrue"] == "0,1,0.5"
