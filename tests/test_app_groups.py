"""The groups page (Figure 12.4) through AppTest: readout, controls, links, bad links, calculator."""

import math

import numpy as np
import pytest

from tests.conftest import assert_clean, charts, metrics, notices, run_page

PAGE = "groups.py"
SIGNAL, NONE, MIXED = "Has signal", "All right or all wrong", "Likeliest mixed group"
RIGHT, WRONG = "Correct gets", "Incorrect gets"
STD_K, STD_K1, DR = "÷ std (k)", "÷ std (k − 1)", "centred (Dr. GRPO)"


def chapter_readout():
    """Figure 12.4 at p = 0.10, k = 8, as the chapter prints it."""
    return {SIGNAL: "0.57", NONE: "43%", MIXED: "1 of 8 correct", RIGHT: "+2.65", WRONG: "−0.38"}


def calculator_table(at):
    return at.dataframe[-1].value


def test_defaults_show_the_chapters_readout():
    at = run_page(PAGE)
    assert_clean(at)
    assert notices(at) == []
    assert metrics(at) == chapter_readout()
    assert dict(at.query_params) == {"p": "0.1", "k": "8"}
    sentence = next(md.value for md in at.markdown if "klrl-readout" in md.value)
    for part in ("p = 0.10", "k = 8", "0.57", "43%", "1 of 8", "+2.65", "−0.38"):
        assert part in sentence
    assert len(charts(at)) == 2


def test_exercise_12_4_through_the_controls():
    at = run_page(PAGE)
    at.slider[0].set_value(0.05).run()
    m = metrics(at)
    # 0.95^8 + 0.05^8 = 0.663: two thirds of groups carry nothing.
    assert m[NONE] == "66%" and m[SIGNAL] == "0.34"
    assert at.query_params["p"] == "0.05"
    at.number_input[0].set_value(64).run()
    m = metrics(at)
    # 0.95^64 = 0.038.
    assert m[NONE] == "4%" and m[SIGNAL] == "0.96"
    # likeliest mixed group: 3 of 64 (64 * 0.05 = 3.2); correct sqrt(61/3), incorrect -sqrt(3/61)
    assert m[MIXED] == "3 of 64 correct"
    assert m[RIGHT] == f"+{math.sqrt(61 / 3):.2f}"
    assert m[WRONG] == f"−{math.sqrt(3 / 61):.2f}"
    assert at.query_params["k"] == "64"


def test_half_solved_pairs_by_hand():
    # p = 0.5, k = 2: signal 1 - 0.25 - 0.25 = 0.5; one right one wrong: +1 and -1.
    at = run_page(PAGE, p="0.5", k="2")
    assert metrics(at) == {SIGNAL: "0.50", NONE: "50%", MIXED: "1 of 2 correct",
                           RIGHT: "+1.00", WRONG: "−1.00"}


@pytest.mark.parametrize("params, expect", [
    ({"p": "0.05", "k": "8"}, {NONE: "66%"}),
    ({"p": "0.9"}, {MIXED: "7 of 8 correct", RIGHT: "+0.38", WRONG: "−2.65"}),
    ({"k": "1024", "p": "0.5"}, {SIGNAL: "1.00", NONE: "0%", MIXED: "512 of 1,024 correct"}),
    ({"p": "0.123"}, {MIXED: "1 of 8 correct"}),
])
def test_deep_links_set_the_view(params, expect):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert notices(at) == []
    m = metrics(at)
    for label, value in expect.items():
        assert m[label] == value
    for name, raw in params.items():
        assert at.query_params[name] == raw


@pytest.mark.parametrize("params, shown_p, shown_k", [
    ({"p": "2"}, 0.99, 8),
    ({"p": "0"}, 0.01, 8),
    ({"p": "-0.5"}, 0.01, 8),
    ({"p": "nan"}, 0.10, 8),
    ({"p": "abc"}, 0.10, 8),
    ({"k": "1"}, 0.10, 2),
    ({"k": "100000"}, 0.10, 1024),
    ({"k": "8.5"}, 0.10, 8),
    ({"k": "xyz"}, 0.10, 8),
])
def test_bad_links_draw_the_page_with_a_notice(params, shown_p, shown_k):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert len(notices(at)) == 1
    name = next(iter(params))
    assert f"`{name}" in notices(at)[0]
    assert at.slider[0].value == pytest.approx(shown_p)
    assert at.number_input[0].value == shown_k
    # The readout is the one the clamped or default values give (by hand for the clamped p).
    no_signal = shown_p**shown_k + (1 - shown_p) ** shown_k
    assert metrics(at)[NONE] == f"{100 * no_signal:.0f}%"
    assert len(charts(at)) == 2


def test_bad_p_and_k_together():
    at = run_page(PAGE, p="2", k="1")
    assert_clean(at)
    text = notices(at)[0]
    assert "`p=2`" in text and "`k=1`" in text
    assert dict(at.query_params) == {"p": "0.99", "k": "2"}


# --- the calculator ------------------------------------------------------------------------

def test_calculator_default_is_example_12_2():
    at = run_page(PAGE)
    t = calculator_table(at)
    np.testing.assert_allclose(t[STD_K], [1, -1, -1, 1])
    np.testing.assert_allclose(t[DR], [0.5, -0.5, -0.5, 0.5])
    # k - 1 convention by hand: centred 0.5 over sqrt(1/3).
    np.testing.assert_allclose(t[STD_K1], np.array([1, -1, -1, 1]) * 0.5 * math.sqrt(3))


@pytest.mark.parametrize("text, right, wrong", [
    ("1,0,0,0", 1.73, -0.58),                 # Example 12.2
    ("1 1 1 0 0 0 0 0", 1.29, -0.77),         # Exercise 12.4
    ("1,0,0,0,0,0,0,0", 2.65, -0.38),         # Figure 12.4's readout
])
def test_calculator_chapter_groups(text, right, wrong):
    at = run_page(PAGE)
    at.text_input[0].set_value(text).run()
    assert not at.error
    t = calculator_table(at)
    grades = t["grade"].to_numpy()
    assert t[STD_K][grades == 1].round(2).unique().tolist() == [right]
    assert t[STD_K][grades == 0].round(2).unique().tolist() == [wrong]


def test_calculator_flat_group_says_it_teaches_nothing():
    at = run_page(PAGE)
    at.text_input[0].set_value("1,1,1,1").run()
    assert_clean(at)
    assert not at.error
    assert any("teaches nothing" in i.value for i in at.info)
    t = calculator_table(at)
    assert (t[[STD_K, STD_K1, DR]].to_numpy() == 0).all()


@pytest.mark.parametrize("text, fragment", [
    ("1,2,0", "'2'"),
    ("1,yes", "'yes'"),
    ("0.5, 1", "'0.5'"),
    ("", "empty"),
    ("  , ", "empty"),
    ("nan,1", "grade"),
])
def test_calculator_bad_input_gets_a_clear_message(text, fragment):
    at = run_page(PAGE)
    n_frames = len(at.dataframe)
    at.text_input[0].set_value(text).run()
    assert not at.exception
    assert len(at.error) == 1
    assert fragment in at.error[0].value
    assert len(at.dataframe) == n_frames - 1  # no table for a bad group
    assert metrics(at) == chapter_readout()   # the figure is untouched
    at.text_input[0].set_value("1,0").run()
    assert not at.error
