"""The step-labels page (Section 12.7.3; process rewards; Exercise 28.8) through AppTest: the
issue's defaults, Exercise 28.8(b), the ends of every control, bad links, the charts' numbers
against direct binomial sums, the instant table, the seeded draw and the reported results."""

import json
import math

import numpy as np
import plotly.graph_objects as go
import pytest

from tests.conftest import (
    assert_one_notice,
    all_text,
    assert_clean,
    charts,
    instant_figure,
    instant_readout_at,
    instant_table,
    metrics,
    notices,
    run_page,
)

PAGE = "step-labels.py"
DEFAULTS = {
    "correct step 3, soft": "0.216",
    "correct step 3, hard": "0.857",
    "wrong step 3, soft": "0.050",
    "wrong step 3, hard": "0.337",
    "ranked higher": "the correct step",
}


def decoded(v):
    import base64

    if isinstance(v, dict):
        # as float64: the page sends its moving numbers as 4-byte floats (7 digits)
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).astype(float)
    return np.asarray(v, dtype=float)


def quantile(n, v, p):
    """Smallest k with sum_{j <= k} C(n, j) v^j (1 - v)^(n - j) >= p, by math.comb."""
    total = 0.0
    for k in range(n + 1):
        total += math.comb(n, k) * v**k * (1 - v) ** (n - k)
        if total >= p - 1e-12:
            return k
    return n


def test_defaults_reproduce_the_issue():
    at = run_page(PAGE)
    assert_clean(at)
    assert notices(at) == []
    assert metrics(at) == DEFAULTS
    assert dict(at.query_params) == {
        "steps": "6",
        "seed": "0",
        "skill": "0.6",
        "n": "8",
        "guess": "0.05",
        "error": "3",
    }
    figs = charts(at)
    assert len(figs) == 3
    for f in figs:
        go.Figure(f)
    steps = figs[0]["data"]
    soft_c, hard_c, soft_w, hard_w = (decoded(t["y"]) for t in steps[:4])
    assert np.round(soft_c, 3).tolist() == [0.078, 0.130, 0.216, 0.360, 0.600, 1.000]
    assert np.round(hard_c, 3).tolist() == [0.477, 0.671, 0.857, 0.972, 0.999, 1.000]
    assert np.round(soft_w, 3).tolist() == [0.078, 0.130] + [0.05] * 4
    assert np.round(hard_w, 3).tolist()[2:] == [0.337] * 4
    # spread bars: exact binomial quantiles of K / 8
    v = [0.6 ** (6 - t) for t in range(1, 7)]
    hi = decoded(steps[0]["error_y"]["array"]) + soft_c
    lo = soft_c - decoded(steps[0]["error_y"]["arrayminus"])
    assert hi.tolist() == pytest.approx([quantile(8, x, 0.95) / 8 for x in v], abs=1e-7)
    assert lo.tolist() == pytest.approx([quantile(8, x, 0.05) / 8 for x in v], abs=1e-7)
    # the wrong steps are marked, in green and red (text traces keep their colour in the
    # browser; annotations take the theme's text colour)
    marks = [t for t in steps if t.get("mode") == "text"]
    assert [m for t in marks for m in t["text"]] == ["✓"] * 6 + ["✓", "✓"] + ["✗"] * 4
    assert marks[1]["textfont"]["color"] == ["#16a34a"] * 2 + ["#ef4444"] * 4
    assert not [a for a in figs[0]["layout"]["annotations"] if a["text"] in "✓✗"]
    text = all_text(at)
    assert "Exercise 28.8(b)'s case" in text and "soft 0.0024 and hard 0.019" in text
    assert "soft 0.050 and hard 0.337, so the wrong first step outranks the right one" in text
    assert "flips at q = 0.368, below this q = 0.60: a completer weaker than 0.368" in text
    assert "On the right" not in text and "In the chart of the labels against N, both" in text


def test_exercise_28_8b_setting():
    at = run_page(PAGE, skill="0.3", error="1")
    assert_clean(at)
    assert metrics(at) == {
        "correct step 1, soft": "0.0024",
        "correct step 1, hard": "0.019",
        "wrong step 1, soft": "0.050",
        "wrong step 1, hard": "0.337",
        "ranked higher": "the wrong step",
    }
    text = all_text(at)
    assert "would rank the wrong step higher" in text
    assert "flips at q = 0.549, above this q = 0.30, which is why the wrong step 1 ranks" in text


def test_instant_table_over_the_skill_slider():
    at = run_page(PAGE, error="1")
    t = instant_table(at)
    assert len(t["rows"]) == 101 and all(t["rows"])
    m = instant_readout_at(at, 0.3)
    assert m["correct step 1, soft"] == "0.0024" and m["ranked higher"] == "the wrong step"
    assert instant_readout_at(at, 0.6)["ranked higher"] == "the correct step"
    for q in (0.0, 0.5, 1.0):
        fig = instant_figure(at, q, "step-labels-vs-n")
        assert fig["layout"]["xaxis"]["type"] == "log"
        assert fig["layout"]["xaxis"]["range"] == pytest.approx([-0.1, math.log10(1024) + 0.1])
        assert fig["layout"]["yaxis"]["range"] == [-0.02, 1.04]
        assert instant_figure(at, q, "step-labels-steps")["layout"]["yaxis"]["range"] == [
            -0.04,
            1.2,
        ]


def test_label_against_n_chart():
    at = run_page(PAGE)
    fig = charts(at)[1]
    hard_correct = next(t for t in fig["data"] if t["name"] == "correct step: hard (dashed)")
    n = decoded(hard_correct["x"])
    assert n[0] == 1 and n[-1] == 1024
    assert decoded(hard_correct["y"]) == pytest.approx(1 - (1 - 0.216) ** n, rel=1e-6)
    hard_wrong = next(t for t in fig["data"] if t["name"] == "wrong step: hard (dashed)")
    assert decoded(hard_wrong["y"])[-1] == pytest.approx(1 - 0.95**1024)


@pytest.mark.parametrize(
    "params",
    [
        {"skill": "0"},
        {"skill": "1"},
        {"guess": "0"},
        {"guess": "1"},
        {"n": "1"},
        {"n": "1024"},
        {"steps": "1", "error": "1"},
        {"steps": "20", "error": "20"},
        {"error": "none"},
        {"error": "1"},
        {"error": "6"},
        {"seed": "2147483647"},
        {"skill": "0", "guess": "0", "n": "1024", "steps": "20", "error": "none"},
        {"skill": "1", "guess": "1", "n": "1", "steps": "1", "error": "1"},
    ],
)
def test_ends_of_every_control_draw(params):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert notices(at) == []
    for key, value in params.items():
        assert at.query_params[key] == value
    figs = charts(at)
    assert len(figs) == 3
    for f in figs:
        go.Figure(f)
    for value in metrics(at).values():
        assert (
            value in ("the wrong step", "the correct step", "a tie", "> 0.999")
            or 0 <= float(value) <= 1
        )


@pytest.mark.parametrize(
    "params, name, shown",
    [
        ({"n": "0"}, "n", {"n": "1"}),
        ({"n": "5000"}, "n", {"n": "1024"}),
        ({"n": "2.5"}, "n", {"n": "8"}),
        ({"skill": "-1"}, "skill", {"skill": "0"}),
        ({"skill": "nan"}, "skill", {"skill": "0.6"}),
        ({"guess": "2"}, "guess", {"guess": "1"}),
        ({"error": "0"}, "error", {"error": "1"}),
        ({"error": "7"}, "error", {"error": "6"}),
        ({"error": "x"}, "error", {"error": "3"}),
        ({"steps": "50"}, "steps", {"steps": "20"}),
    ],
)
def test_bad_links_give_a_notice_and_the_nearest_value(params, name, shown):
    at = run_page(PAGE, **params)
    assert_one_notice(at, name, shown)
    assert len(charts(at)) == 3


def test_fewer_steps_pull_the_wrong_step_in():
    at = run_page(PAGE, error="6")
    at.slider(key="step-labels.steps").set_value(4).run()
    assert_clean(at)
    assert at.query_params["error"] == "4" and at.query_params["steps"] == "4"
    assert "outside 1 to 4" in all_text(at)


def test_new_draw_moves_the_seed_and_the_draw():
    at = run_page(PAGE)
    before = decoded(charts(at)[2]["data"][0]["y"]).tolist()
    at.button(key="step-labels-new-draw").click().run()
    assert at.query_params["seed"] == "1"
    after = decoded(charts(at)[2]["data"][0]["y"]).tolist()
    again = run_page(PAGE, seed="1")
    assert decoded(charts(again)[2]["data"][0]["y"]).tolist() == after
    assert all(x * 8 == int(x * 8) for x in before + after)


def test_reported_results_are_labelled_as_reported():
    at = run_page(PAGE)
    text = all_text(at)
    assert "reported by the papers" in text and "not the output of the model" in text
    table = at.table[-1].value.to_string()
    for number in ("12.4%", "3.8%", "14.0%", "3.4%", "78.2%", "72.4%", "1,860", "500 MATH"):
        assert number in table
    assert "not directly comparable" in text


def test_presentation_view():
    at = run_page(PAGE, present="1")
    assert_clean(at)
    assert metrics(at) == DEFAULTS and len(charts(at)) == 2


def test_one_completion_reads_as_one():
    """Review finding at N = 1: 'one of 1 tries', and the chart's text alternative named
    N = 1 twice."""
    at = run_page(PAGE, n="1")
    assert_clean(at)
    text = all_text(at)
    assert "of 1 tries" not in text and "best-of-1 " not in text
    assert "the chance that its one try finishes: at N = 1 the two labels are the same" in text
    alts = [
        json.loads(c.proto.json)["alt"]
        for c in at.get("bidi_component")
        if c.proto.component_name == "klrl_live_chart"
    ]
    assert "hard mean 0.216 at N = 1 and 1.000 at N = 1,024;" in alts[1]
    assert "at N = 1, " not in alts[1] and "N = 1 completion per step" in alts[2]


def test_equal_hard_labels_are_said_to_agree():
    text = all_text(run_page(PAGE, n="1024"))
    assert (
        "a lower soft label than the correct one (the hard labels agree to three decimals)"
    ) in text


def test_colours_mean_one_thing_each():
    """Green and red are the correct and the wrong step in every chart; the hard label is
    violet, not the correct step's green (review: two series, one colour)."""
    steps, vs_n, draw = charts(run_page(PAGE))
    hard = next(t for t in steps["data"] if t.get("name") == "hard label (mean)")
    soft = next(t for t in steps["data"] if t.get("name") == "soft label")
    greens = {"#22c55e", "#16a34a"}
    assert hard["marker"]["color"] not in greens | {"#ef4444", soft["marker"]["color"]}
    colours = {t["name"]: t["line"]["color"] for t in vs_n["data"] if t.get("showlegend", True)}
    assert colours["correct step: hard (dashed)"] in greens
    assert colours["wrong step: hard (dashed)"] == "#ef4444"


def test_the_data_set_diamonds_sit_over_their_own_bars_inside_the_axis():
    draw = charts(run_page(PAGE))[2]
    diamonds = [t for t in draw["data"] if t.get("mode") == "markers"]
    xs = [decoded(t["x"]) for t in diamonds]
    assert (xs[1] - xs[0]).tolist() == pytest.approx([0.425] * 6)  # one bar's width apart
    lo, hi = draw["layout"]["yaxis"]["range"]
    assert lo < 0 and hi > 1 and all(t["cliponaxis"] is False for t in diamonds)
    one = charts(run_page(PAGE, error="none"))[2]
    assert decoded(next(t for t in one["data"] if t.get("mode") == "markers")["x"]).tolist() == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]


def test_the_caption_says_which_numbers_come_from_rl():
    text = all_text(run_page(PAGE))
    assert "Both studies compare reward models" not in text
    assert "their 12.4% is such a policy, trained on final-answer correctness" in text


# --- issue 31 ---------------------------------------------------------------------------------
def test_the_data_set_colours_each_step_by_its_truth():
    """The second solution was red at every step, its correct steps 1 and 2 included."""
    draw = charts(run_page(PAGE))[2]
    bars = [t for t in draw["data"] if t["type"] == "bar"]
    green, red = "#22c55e", "#ef4444"
    assert bars[0]["marker"]["color"] == [green] * 6
    assert bars[1]["marker"]["color"] == [green, green] + [red] * 4  # wrong from step 3
    assert bars[1]["marker"]["pattern"]["shape"] == "/" and "(hatched)" in bars[1]["name"]
    diamonds = [t for t in draw["data"] if t.get("mode") == "markers"]
    assert diamonds[1]["marker"]["color"] == [green, green] + [red] * 4
    last = charts(run_page(PAGE, error="6"))[2]
    assert [t for t in last["data"] if t["type"] == "bar"][1]["marker"]["color"] == [green] * 5 + [
        red
    ]


def test_the_hard_label_has_no_range_bars_and_the_soft_spread_is_exact_at_powers_of_two():
    """The hard label's 5%–95% bars ran 0 to 1 and the soft band against N was a sawtooth."""
    steps, vs_n, _ = charts(run_page(PAGE))
    hard = [t for t in steps["data"] if str(t.get("name", "")).startswith("hard label")]
    assert hard and all("error_y" not in t for t in hard)
    assert not [t for t in vs_n["data"] if t.get("fill")]
    bars = next(t for t in vs_n["data"] if t.get("name") == "correct step: soft 5%–95%")
    ns = [2**i for i in range(11)]
    assert decoded(bars["x"]) == pytest.approx([0.94 * m for m in ns])
    v = 0.6**3  # step 3 of 6 at q = 0.6
    hi = decoded(bars["error_y"]["array"]) + v
    lo = v - decoded(bars["error_y"]["arrayminus"])
    assert hi.tolist() == pytest.approx([quantile(m, v, 0.95) / m for m in ns], abs=1e-6)
    assert lo.tolist() == pytest.approx([quantile(m, v, 0.05) / m for m in ns], abs=1e-6)


def test_at_skill_1_the_text_says_the_labels_separate_the_steps():
    """At q = 1 the labels separate the steps perfectly (1.000 against 0.050): the text said
    "Both labels follow μ, not the step"."""
    text = all_text(run_page(PAGE, skill="1"))
    assert "Both labels follow μ, not the step" not in text
    assert "the labels separate the steps perfectly" in text
    assert "every correct step gets soft 1.000 and hard 1.000" in text
    assert f"guess rate g = 0.050 (soft) and {1 - 0.95**8:.3f} (hard)" in text
    # a weaker completer that still puts every correct step above every wrong one
    text = all_text(run_page(PAGE, skill="0.95"))
    assert f"soft {0.95**5:.3f} or more against 0.050" in text
    assert "Both labels follow μ, not the step" not in text
    # where a wrong step outranks a correct one, the old sentence is the true one
    text = all_text(run_page(PAGE, skill="0.3", error="1"))
    assert "Both labels follow μ, not the step" in text and "separate" not in text
    text = all_text(run_page(PAGE, skill="1", error="none"))
    assert "every step of the correct solution gets soft and hard labels of 1.000" in text
