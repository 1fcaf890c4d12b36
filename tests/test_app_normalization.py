"""The normalization page (Section 12.7.1, Exercise 28.4) through AppTest: readouts against
hand computations (every group of k = 4 and k = 8 enumerated here), links and bad links, the
charts, the explanation's branches at the ends of the controls, and the leave-one-out table."""

import base64
import itertools
import json
import math
import re
import statistics

import numpy as np
import pytest

from tests.conftest import (
    assert_clean,
    charts,
    instant_readout_at,
    instant_rows,
    metrics,
    notices,
    run_page,
)

PAGE = "normalization.py"
STD, ARCSIN, CENTRED = "÷ std weight", "Arcsin law", "Mean-centred"
OVER_HALF, ENDS = "Over p = ½", "Ends over p = ½"


def enumerated_weight(p: float, k: int) -> float:
    """The prompt's expected update divided by dp/dθ for a one-logit policy, summed over all
    2^k graded groups: E[A_1 (r_1 − p)] / (p (1 − p)), with A_1 response 1's grade minus the
    group mean over the population standard deviation (0 for a group with no spread)."""
    total = 0.0
    for grades in itertools.product((0, 1), repeat=k):
        prob = math.prod(p if g else 1 - p for g in grades)
        if min(grades) == max(grades):
            continue
        a1 = (grades[0] - statistics.fmean(grades)) / statistics.pstdev(grades)
        total += prob * a1 * (grades[0] - p)
    return total / (p * (1 - p))


def summed_weight(p: float, k: int) -> float:
    """The same weight by a sum over the number j correct among the other k − 1 answers, with
    math.comb (for k too large to enumerate): E[A | right] − E[A | wrong], where a correct
    answer among c of k gets √((k − c)/c) and a wrong one −√(c/(k − c))."""
    right = wrong = 0.0
    for j in range(k):
        pj = math.comb(k - 1, j) * p**j * (1 - p) ** (k - 1 - j)
        if j + 1 < k:  # this answer right: c = j + 1 correct
            right += pj * math.sqrt((k - j - 1) / (j + 1))
        if j > 0:  # this answer wrong: c = j correct
            wrong -= pj * math.sqrt(j / (k - j))
    return right - wrong


def arcsin_law(p: float, k: int) -> float:
    return (k - 1) / k / math.sqrt(p * (1 - p))


def look_for(at) -> str:
    found = [str(m.value) for m in at.markdown if "klrl-look" in str(m.value)]
    assert len(found) == 1
    return re.sub(r"<[^>]+>", " ", found[0])


def alts(at) -> list[str]:
    return [
        json.loads(c.proto.json)["alt"]
        for c in at.get("bidi_component")
        if c.proto.component_name == "klrl_live_chart"
    ]


def two(x: float) -> str:
    return f"{x:.2f}".replace("-", "−")


def test_the_two_hand_references_agree():
    for k in (2, 3, 4, 6):
        for p in (0.07, 0.5, 0.81):
            assert summed_weight(p, k) == pytest.approx(enumerated_weight(p, k), rel=1e-12)


# --- readout -----------------------------------------------------------------------------------


def test_defaults_by_enumerating_every_group_of_eight():
    at = run_page(PAGE)
    assert_clean(at)
    assert notices(at) == []
    assert dict(at.query_params) == {"k": "8", "p": "0.1"}
    w, half = enumerated_weight(0.1, 8), enumerated_weight(0.5, 8)
    assert metrics(at) == {
        STD: two(w),  # 2.33
        ARCSIN: two(arcsin_law(0.1, 8)),  # 0.875 / 0.3 = 2.92
        CENTRED: "7/8 = 0.875",
        OVER_HALF: f"{two(w / half)}×",  # 1.25×
        ENDS: f"{two(math.sqrt(7) / half)}×",  # 1.43×: the ceiling √(k − 1) over w(½)
    }
    assert metrics(at)[ENDS] == "1.43×" and metrics(at)[ARCSIN] == "2.92"
    assert len(at.metric) == 0
    assert len(charts(at)) == 2


@pytest.mark.parametrize("p", [0.01, 0.3, 0.5, 0.99])
def test_k4_by_enumerating_all_sixteen_groups(p):
    at = run_page(PAGE, k="4", p=str(p))
    assert_clean(at)
    w, half = enumerated_weight(p, 4), enumerated_weight(0.5, 4)
    m = metrics(at)
    assert m[STD] == two(w)
    assert m[ARCSIN] == two(arcsin_law(p, 4))
    assert m[CENTRED] == "3/4 = 0.750"
    assert m[OVER_HALF] == f"{two(w / half)}×"
    assert m[ENDS] == f"{two(math.sqrt(3) / half)}×" == "1.07×"


def test_the_k_slider_moves_the_readout_and_the_link():
    at = run_page(PAGE)
    at.select_slider[0].set_value(4).run()
    assert metrics(at)[STD] == two(enumerated_weight(0.1, 4))
    assert at.query_params["k"] == "4"
    at.slider[0].set_value(0.5).run()
    assert metrics(at)[OVER_HALF] == "1.00×"
    assert at.query_params["p"] == "0.5"


def test_large_k_against_a_plain_binomial_sum():
    at = run_page(PAGE, k="256", p="0.01")
    assert_clean(at)
    m = metrics(at)
    half = summed_weight(0.5, 256)
    assert m[STD] == two(summed_weight(0.01, 256))
    assert m[ENDS] == f"{two(math.sqrt(255) / half)}×"  # 8.00×
    assert m[CENTRED] == "255/256 = 0.996"


# --- links --------------------------------------------------------------------------------------


def test_a_linked_k_between_the_stops_is_kept():
    at = run_page(PAGE, k="7", p="0.2")
    assert_clean(at)
    assert notices(at) == []
    assert at.select_slider[0].value == 7
    assert metrics(at)[STD] == two(enumerated_weight(0.2, 7))
    assert dict(at.query_params) == {"k": "7", "p": "0.2"}


@pytest.mark.parametrize(
    "params, shown_k, shown_p",
    [
        ({"k": "abc"}, 8, 0.10),
        ({"k": "1"}, 2, 0.10),
        ({"k": "5000"}, 256, 0.10),
        ({"k": "8.5"}, 8, 0.10),
        ({"p": "2"}, 8, 0.99),
        ({"p": "0"}, 8, 0.01),
        ({"p": "nan"}, 8, 0.10),
    ],
)
def test_bad_links_give_a_notice_and_still_draw(params, shown_k, shown_p):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert len(notices(at)) == 1
    name = next(iter(params))
    assert f"`{name}" in notices(at)[0]
    assert at.select_slider[0].value == shown_k
    assert at.slider[0].value == pytest.approx(shown_p)
    assert metrics(at)[STD] == two(summed_weight(shown_p, shown_k))
    assert len(charts(at)) == 2


def test_presentation_view_shows_the_figure_only():
    at = run_page(PAGE, present="1")
    assert_clean(at)
    assert len(charts(at)) == 2 and metrics(at)[ENDS] == "1.43×"
    assert not [m for m in at.markdown if "klrl-look" in str(m.value)]
    assert len(at.table) == 0


# --- charts -------------------------------------------------------------------------------------


def trace(fig: dict, name: str) -> dict:
    return next(t for t in fig["data"] if t.get("name") == name)


def values(t: dict, axis: str) -> np.ndarray:
    v = t[axis]
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v, dtype=float)


def test_the_weight_chart_draws_the_exact_weight_the_law_and_the_constant():
    at = run_page(PAGE, k="5")
    left, right = charts(at)
    std = trace(left, "÷ group std (exact)")
    p, w = values(std, "x"), values(std, "y")
    # The curves that move with k are drawn in single precision (the browser's table of
    # stops holds them at every stop): exact to f4's ~6e-8, far below a hover's 3 decimals.
    for i in (3, 100, 200, 333):
        assert w[i] == pytest.approx(enumerated_weight(float(p[i]), 5), rel=2e-7)
    assert w[0] == pytest.approx(2.0) and w[-1] == pytest.approx(2.0)  # √(k − 1) at the ends
    law = values(trace(left, "÷ true std (arcsin law)"), "y")
    assert np.isnan(law[0]) and np.isnan(law[-1])  # infinite: not drawn
    assert law[200] == pytest.approx(arcsin_law(float(p[200]), 5), rel=2e-7)
    assert np.allclose(values(trace(left, "mean-centred"), "y"), 0.8)
    # Right: each objective's slope is the left panel's weight: the drawn objective is the
    # running trapezoid integral of the drawn weight (to single precision).
    obj = values(trace(right, "∫w dp, ÷ group std"), "y").astype(float)
    integral = np.concatenate(([0.0], np.cumsum(np.diff(p) * 0.5 * (w[1:] + w[:-1]))))
    assert obj[0] == 0 and np.allclose(obj, integral, rtol=0, atol=1e-6)
    arc = values(trace(right, "4/5 · 2·arcsin√p"), "y")
    assert arc[-1] == pytest.approx(0.8 * math.pi)
    assert values(trace(right, "4/5 · p"), "y")[-1] == pytest.approx(0.8)


def test_the_ceiling_is_drawn_only_when_the_weight_varies():
    at = run_page(PAGE)
    ann = [a["text"] for a in charts(at)[0]["layout"]["annotations"]]
    assert ann == ["ceiling √(k − 1) = 2.65"]
    at = run_page(PAGE, k="2")
    assert charts(at)[0]["layout"]["annotations"] == []


def test_alt_texts_carry_the_numbers():
    at = run_page(PAGE)
    left, right = alts(at)
    assert left.startswith("Line chart") and "rising to √(k − 1) = 2.65" in left
    assert "2.33, 2.92 and 0.875" in left
    assert right.startswith("Line chart") and f"to {two(0.875 * math.pi)}" in right
    left = alts(run_page(PAGE, k="2"))[0]
    assert "flat at 1.00" in left


# --- the explanation ----------------------------------------------------------------------------


def test_default_explanation():
    text = look_for(run_page(PAGE))
    assert "favours prompts near p = 0 and p = 1" in text
    assert "smallest at p = ½ (1.86)" in text and "√(k − 1) = 2.65" in text
    assert "up to 1.43× as much as a half-solved one" in text
    # Within 10% of the arcsin law between 0.15 and 0.85 (the core's notes), checked here by
    # the enumeration: inside at 0.16 and 0.84, outside at 0.14 and 0.86.
    assert "Between p = 0.15 and 0.85 the exact weight is within 10% of the arcsin law" in text
    for p, inside in ((0.16, True), (0.84, True), (0.14, False), (0.86, False)):
        assert (abs(enumerated_weight(p, 8) / arcsin_law(p, 8) - 1) <= 0.1) is inside
    below = 1 - enumerated_weight(0.1, 8) / arcsin_law(0.1, 8)
    assert f"1.25× its value at p = ½ and {100 * below:.0f}% below the arcsin law's 2.92" in text
    # the one-logit step: w p (1 − p) against 7/8 p (1 − p)
    assert f"here {enumerated_weight(0.1, 8) * 0.09:.3f} against {0.875 * 0.09:.3f}" in text


@pytest.mark.parametrize("k, weight", [(2, 1.0), (3, math.sqrt(2))])
@pytest.mark.parametrize("p", [0.01, 0.5, 0.99])
def test_k2_and_k3_favour_no_prompt(k, weight, p):
    at = run_page(PAGE, k=str(k), p=str(p))
    assert_clean(at)
    for q in (0.05, 0.3, 0.5):  # flat, by enumeration
        assert enumerated_weight(q, k) == pytest.approx(weight, rel=1e-12)
    m = metrics(at)
    assert m[STD] == two(weight) and m[OVER_HALF] == "1.00×" and m[ENDS] == "1.00×"
    text = look_for(at)
    assert f"At k = {k} dividing by the group's standard deviation favours no prompt" in text
    assert f"the exact weight is {two(weight)} at every p" in text
    assert "favours prompts near" not in text and "up to" not in text
    if k == 2:
        assert "with advantages +1 and −1 whatever p is" in text
        assert "2.00× mean-centring's" in text
    diff = weight / arcsin_law(p, k) - 1
    word = "above" if diff > 0 else "below"
    if abs(diff) >= 0.005:
        assert f"{100 * abs(diff):.0f}% {word} the arcsin law's" in text


def test_half_solved_is_the_least_favoured():
    text = look_for(run_page(PAGE, p="0.5", k="16"))
    assert "The marked p = ½ is the least favoured solve rate" in text
    assert "favours prompts near p = 0 and p = 1" in text


@pytest.mark.parametrize("p", ["0.01", "0.99"])
def test_extreme_k_and_p(p):
    at = run_page(PAGE, k="256", p=p)
    assert_clean(at)
    text = look_for(at)
    half = summed_weight(0.5, 256)
    assert f"up to {two(math.sqrt(255) / half)}× as much" in text
    w = summed_weight(float(p), 256)
    assert f"{two(w / half)}× its value at p = ½" in text
    diff = w / arcsin_law(float(p), 256) - 1
    assert diff < 0 and f"{100 * -diff:.0f}% below the arcsin law's" in text


# --- the leave-one-out section ------------------------------------------------------------------


def loo_table(at):
    df = at.table[-1].value.reset_index()
    return df


def test_leave_one_out_table_by_hand():
    at = run_page(PAGE)
    df = loo_table(at)
    # likeliest mixed group at p = 0.1, k = 8: 1 of 8 correct.  Correct: b = 0, r − b = 1,
    # r − r̄ = 1 − 1/8.  Wrong: b = 1/7, r − b = −1/7, r − r̄ = −1/8 = 7/8 · (−1/7).
    assert list(df["grade"]) == ["1 (correct)", "0 (wrong)"]
    assert list(df["answers"]) == ["1", "7"]
    assert list(df["b_i, mean of the others"]) == ["0.000", f"{1 / 7:.3f}"]
    assert list(df["r_i − b_i"]) == ["+1.000", f"−{1 / 7:.3f}"]
    assert list(df["r_i − r̄"]) == ["+0.875", "−0.125"]
    assert list(df["7/8 · (r_i − b_i)"]) == ["+0.875", "−0.125"]
    text = "\n".join(str(m.value) for m in at.markdown)
    assert "(groups?p=0.1&k=8)" in text
    assert "1 correct, 7 wrong, group mean 0.125" in text


def test_leave_one_out_table_for_an_even_group():
    at = run_page(PAGE, k="4", p="0.5")
    df = loo_table(at)
    # 2 of 4: correct b = 1/3, r − b = 2/3, r − r̄ = 1/2 = 3/4 · 2/3.
    assert list(df["answers"]) == ["2", "2"]
    assert list(df["b_i, mean of the others"]) == ["0.333", "0.667"]
    assert list(df["r_i − b_i"]) == ["+0.667", "−0.667"]
    assert list(df["3/4 · (r_i − b_i)"]) == ["+0.500", "−0.500"]
    assert list(df["r_i − r̄"]) == ["+0.500", "−0.500"]


@pytest.mark.parametrize("params", [{}, {"k": "2"}, {"k": "256", "p": "0.99"}])
def test_every_chart_is_a_valid_plotly_figure(params):
    import plotly.graph_objects as go

    for fig in charts(run_page(PAGE, **params)):
        go.Figure(fig)  # raises ValueError on anything plotly.js would not understand


@pytest.mark.parametrize("params", [{}, {"p": "0.03"}], ids=["default", "p-0.03"])
def test_instant_readout_holds_the_readout_the_next_stops_show(params):
    """The table sent at k = 8 holds, for every stop of the k slider, what the page shows when
    k gets there (the readout at the marked p)."""
    stops = [2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128, 192, 256]
    at = run_page(PAGE, k="8", **params)
    assert [row[0] for row in instant_rows(at)] == list(range(len(stops)))
    for i in (stops.index(6), stops.index(10), 0, len(stops) - 1):
        sent = instant_readout_at(at, i)
        moved = run_page(PAGE, k=str(stops[i]), **params)
        assert metrics(moved) == sent, stops[i]
        assert sent[CENTRED].startswith(f"{stops[i] - 1}/{stops[i]} = ")


# --- the figures that follow k (klrl_app/instant.py) ----------------------------------------
FOLLOWED = ("normalization-weights", "normalization-objectives")
STOPS = [2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128, 192, 256]


@pytest.mark.parametrize(
    "params", [{}, {"p": "0.03"}, {"present": "1"}], ids=["default", "p-0.03", "presenting"]
)
def test_the_table_draws_what_the_page_draws_at_each_stop(params):
    """At neighbouring stops, far ones and both ends of k, the browser's figure for each
    followed chart (the table's base with that stop's patches) and its text alternative are
    what the page draws when run at that k."""
    from tests.conftest import instant_figure, instant_table

    at = run_page(PAGE, k="8", **params)
    table = instant_table(at)
    for k in (6, 10, 96, 2, 256):
        i = STOPS.index(k)
        moved = run_page(PAGE, k=str(k), **params)
        drawn = charts(moved)
        for n, key in enumerate(FOLLOWED):
            assert instant_figure(at, i, key) == drawn[n], (k, key)
            assert table["rows"][i]["a"][key] == alts(moved)[n], (k, key)


def test_axis_ranges_are_the_same_at_every_stop_and_hold_every_curve():
    from tests.conftest import instant_figure, instant_table

    at = run_page(PAGE)
    table = instant_table(at)
    assert len(table["rows"]) == len(STOPS) and all(r is not None for r in table["rows"])
    for key in FOLLOWED:
        figs = [instant_figure(at, i, key) for i in range(len(STOPS))]
        for axis in ("xaxis", "yaxis"):
            assert len({tuple(f["layout"][axis]["range"]) for f in figs}) == 1, (key, axis)
        top = figs[0]["layout"]["yaxis"]["range"][1]
        if figs[0]["layout"]["yaxis"].get("type") == "log":  # the weights (review item 12)
            top = 10**top
        for i, f in enumerate(figs):
            if key == "normalization-weights":  # the exact weight and its ceiling fit
                y = values(trace(f, "÷ group std (exact)"), "y")
                assert y.max() <= top and math.sqrt(STOPS[i] - 1) < top
            else:  # every objective's curve fits
                for t in f["data"][:3]:
                    assert np.nanmax(values(t, "y")) <= top
    # The objectives' top is taken at the largest k: their ends grow with k at every k a link
    # may give, by the closed form (k − 1)/k · π and a plain trapezoid sum of the weight.
    ends = []
    for k in range(2, 257):
        grid = 0.5 * (1.0 - np.cos(np.pi * np.linspace(0.0, 1.0, 401)))
        w = np.array(
            [summed_weight(float(q), k) if 0 < q < 1 else math.sqrt(k - 1) for q in grid[::8]]
        )
        ends.append(max((k - 1) / k * math.pi, float(np.trapezoid(w, grid[::8]))))
    assert all(b >= a for a, b in zip(ends, ends[1:]))
    assert ends[-1] <= instant_figure(at, 0, FOLLOWED[1])["layout"]["yaxis"]["range"][1]


def test_the_table_fits_in_300_kb_at_the_defaults():
    from tests.conftest import instant_table

    text = json.dumps(instant_table(run_page(PAGE)), ensure_ascii=False, separators=(",", ":"))
    assert len(text.encode("utf-8")) <= 300_000
