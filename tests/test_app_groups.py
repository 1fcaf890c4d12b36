"""The groups page (Figure 12.4) through AppTest: readout, controls, links, bad links, charts,
the explanation (whose every claim must hold at the p and k shown) and the calculator."""

import json
import math
import re
from fractions import Fraction

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


def number(text: str) -> float:
    return float(text.replace("−", "-"))


def calculator_table(at):
    """The calculator's table (the page's last static table) as floats, one row per response."""
    df = at.table[-1].value
    out = df.reset_index()
    for col in out.columns[1:]:
        out[col] = out[col].map(lambda s: number(str(s)))
    return out


def look_for(at) -> str:
    found = [str(m.value) for m in at.markdown if "klrl-look" in str(m.value)]
    assert len(found) == 1
    return re.sub(r"<[^>]+>", " ", found[0])


def chart_alts(at) -> list[str]:
    return [
        json.loads(c.proto.json)["alt"]
        for c in at.get("bidi_component")
        if c.proto.component_name == "klrl_live_chart"
    ]


def binomial(p: Fraction, k: int) -> list[Fraction]:
    """P(c correct of k), exactly."""
    return [math.comb(k, c) * p**c * (1 - p) ** (k - c) for c in range(k + 1)]


def likeliest_mixed_by_hand(p: float, k: int) -> int:
    """argmax over 1 <= c <= k-1 of C(k, c) p^c (1-p)^(k-c), compared in log space by lgamma
    (an independent route from the page's). The cases below have no tie: (k + 1) p is not a
    whole number."""

    def logp(c):
        return (
            math.lgamma(k + 1)
            - math.lgamma(c + 1)
            - math.lgamma(k - c + 1)
            + c * math.log(p)
            + (k - c) * math.log1p(-p)
        )

    return max(range(1, k), key=logp)


# --- readout, controls and links -------------------------------------------------------------


def test_defaults_show_the_chapters_readout():
    at = run_page(PAGE)
    assert_clean(at)
    assert notices(at) == []
    assert metrics(at) == chapter_readout()
    assert dict(at.query_params) == {"p": "0.1", "k": "8"}
    assert len([md for md in at.markdown if "klrl-readout" in md.value]) == 1
    assert len(at.metric) == 0
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
    assert metrics(at) == {
        SIGNAL: "0.50",
        NONE: "50%",
        MIXED: "1 of 2 correct",
        RIGHT: "+1.00",
        WRONG: "−1.00",
    }


@pytest.mark.parametrize(
    "params, expect",
    [
        ({"p": "0.05", "k": "8"}, {NONE: "66%"}),
        ({"p": "0.9"}, {MIXED: "7 of 8 correct", RIGHT: "+0.38", WRONG: "−2.65"}),
        (
            {"k": "1024", "p": "0.5"},
            {SIGNAL: "> 0.999", NONE: "< 0.1%", MIXED: "512 of 1,024 correct"},
        ),
        # 2 / 2¹¹ = 0.098% of groups are flat: not "1.00" beside "0%"
        ({"k": "11", "p": "0.5"}, {SIGNAL: "0.999", NONE: "0.1%"}),
        ({"k": "7", "p": "0.5"}, {SIGNAL: "0.98", NONE: "2%"}),
        ({"p": "0.123"}, {MIXED: "1 of 8 correct"}),
    ],
)
def test_deep_links_set_the_view(params, expect):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert notices(at) == []
    m = metrics(at)
    for label, value in expect.items():
        assert m[label] == value
    for name, raw in params.items():
        assert at.query_params[name] == raw


@pytest.mark.parametrize(
    "params, shown_p, shown_k",
    [
        ({"p": "2"}, 0.99, 8),
        ({"p": "0"}, 0.01, 8),
        ({"p": "-0.5"}, 0.01, 8),
        ({"p": "nan"}, 0.10, 8),
        ({"p": "abc"}, 0.10, 8),
        ({"k": "1"}, 0.10, 2),
        ({"k": "100000"}, 0.10, 1024),
        ({"k": "8.5"}, 0.10, 8),
        ({"k": "xyz"}, 0.10, 8),
    ],
)
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
    shown = metrics(at)[NONE]
    if no_signal >= 0.005:
        assert shown == f"{100 * no_signal:.0f}%"
    else:  # k = 1024 at p = 0.1: 0.9¹⁰²⁴ ≈ 2 × 10⁻⁴⁷, not "0%"
        assert no_signal < 0.0005 and shown == "< 0.1%"
    assert len(charts(at)) == 2


def test_bad_p_and_k_together():
    at = run_page(PAGE, p="2", k="1")
    assert_clean(at)
    text = notices(at)[0]
    assert "`p=2`" in text and "`k=1`" in text
    assert dict(at.query_params) == {"p": "0.99", "k": "2"}


def test_presentation_view_has_no_explanation_and_no_calculator():
    at = run_page(PAGE, present="1")
    assert_clean(at)
    assert len(charts(at)) == 2 and metrics(at) == chapter_readout()
    assert not [m for m in at.markdown if "klrl-look" in str(m.value)]
    assert len(at.text_input) == 0 and len(at.expander) == 0


# --- the charts --------------------------------------------------------------------------------


def test_signal_chart_names_the_other_group_sizes_in_its_legend_not_on_the_plot():
    at = run_page(PAGE, k="64")
    left = charts(at)[0]
    names = [t["name"] for t in left["data"]]
    assert names[0] == "k = 64" and "k = 2" in names
    assert names.count("k = 64") == 1  # the chosen k is not drawn twice
    assert left["layout"]["annotations"] == []  # no note near the tick labels
    dashes = {t["name"]: t["line"].get("dash") for t in left["data"] if t.get("mode") == "lines"}
    assert dashes["k = 2"] not in (None, "solid")
    assert left["layout"]["xaxis"]["tickvals"][-1] == 1.0  # a tick at p = 1
    at = run_page(PAGE)
    names = [t["name"] for t in charts(at)[0]["data"]]
    assert {"k = 8", "k = 2", "k = 64"} <= set(names)
    dashes = {
        t["name"]: t["line"].get("dash") for t in charts(at)[0]["data"] if t.get("mode") == "lines"
    }
    assert dashes["k = 2"] != dashes["k = 64"]  # told apart without colour


def test_chart_alt_texts_state_the_current_numbers():
    at = run_page(PAGE, p="0.3", k="5")
    signal = 1 - 0.3**5 - 0.7**5
    none = 0.3**5 + 0.7**5
    left, right = chart_alts(at)
    assert left.startswith("Line chart") and f"{signal:.2f} at k = 5" in left
    assert "p = 0.30" in left and "k = 2 and k = 64" in left
    # likeliest mixed group 1 or 2 of 5: P(1) = 5*.3*.7^4 = 0.360, P(2) = 10*.09*.343 = 0.309
    assert right.startswith("Stem chart") and f"{100 * none:.0f}% in the grey" in right
    assert "1 of 5 correct" in right
    assert f"+{math.sqrt(4):.2f}" in right and f"−{math.sqrt(1 / 4):.2f}" in right


# --- the explanation: every branch is the true one -----------------------------------------


def test_default_explanation_says_43_percent_is_less_than_half():
    """Issue 10: the old text said most responses sit in the no-signal stem at p = 0.10, k = 8,
    where 0.9^8 + 0.1^8 = 43%."""
    text = look_for(run_page(PAGE))
    assert "43% of responses sit in the grey no-signal stem at 0, less than half" in text
    assert "most responses" not in text
    # The rest: P(1) / (1 - P(0) - P(8)) = 0.383 / 0.570 = 67% from groups with one correct.
    pmf = binomial(Fraction(1, 10), 8)
    held = pmf[1] / (1 - pmf[0] - pmf[8])
    assert f"mostly ({100 * float(held):.0f}%) from groups with 1 of 8 correct" in text
    assert "single right answer gets a large positive advantage (+2.65)" in text
    assert "7 wrong ones each get a small negative one (−0.38)" in text
    # 1 − 0.9⁶⁴ − 0.1⁶⁴ = 0.99882: not written "1.00", which reads as certain (issue 31)
    assert "0.18 for k = 2, 0.57 for k = 8 and 0.999 for k = 64" in text


@pytest.mark.parametrize(
    "p, k",
    [
        (0.01, 8),
        (0.99, 8),
        (0.01, 2),
        (0.99, 2),
        (0.5, 2),
        (0.1, 1024),
        (0.5, 1024),
        (0.01, 1024),
        (0.99, 1024),
        (0.7, 10),
        (0.3, 3),
        (0.05, 64),
    ],
)
def test_explanation_branches_follow_the_numbers(p, k):
    at = run_page(PAGE, p=str(p), k=str(k))
    assert_clean(at)
    text = look_for(at)
    pmf = binomial(Fraction(p).limit_denominator(1000), k)
    none = pmf[0] + pmf[k]
    none_pct = f"{100 * float(none):.0f}%"

    # The grey stem: "most" only above one half; "practically empty" when it rounds to 0%.
    assert ("most responses" in text) == (none > Fraction(1, 2))
    assert ("exactly half" in text) == (none == Fraction(1, 2))
    assert ("practically empty" in text) == (none_pct == "0%")
    assert ("less than half" in text) == (none < Fraction(1, 2) and none_pct != "0%")
    if none_pct != "0%":
        assert none_pct in text

    # Where the rest come from, and which side of the likeliest mixed group is pushed hard.
    c = likeliest_mixed_by_hand(p, k)
    held = float(pmf[c] / (1 - none))
    if k == 2:
        assert "one right and one wrong answer" in text
    elif held > 0.5:
        assert f"mostly ({100 * held:.0f}%) from groups with {c:,} of {k:,} correct" in text
    else:
        assert f"the likeliest, {c:,} of {k:,} correct, holds {100 * held:.0f}% of them" in text
    right, wrong = math.sqrt((k - c) / c), -math.sqrt(c / (k - c))
    if 2 * c < k:
        assert "large positive advantage" in text and "large negative" not in text
        assert f"(+{right:.2f})" in text and f"({wrong:.2f})".replace("-", "−") in text
    elif 2 * c > k:
        assert "large negative advantage" in text and "large positive" not in text
        assert f"(+{right:.2f})" in text and f"({wrong:.2f})".replace("-", "−") in text
    else:
        assert "equal and opposite" in text and "+1.00" in text

    # The left panel's numbers: the chance of signal at this p for each curve drawn.
    for kk in sorted({k, 2, 64}):
        s = 1 - pmf_signal_none(p, kk)
        assert f"{below_certain(s)} for k = {kk:,}" in text


def below_certain(s: float) -> str:
    """A chance below 1 to 2 decimals, or more until it no longer reads 1, as a reader needs
    it: never "1.00" (issue 31)."""
    for places in (2, 3, 4, 5):
        if f"{s:.{places}f}" != f"{1:.{places}f}":
            return f"{s:.{places}f}"
    return "> 0.99999"


def test_a_chance_of_signal_just_below_1_is_not_written_as_certain():
    """Issue 31: at p = 0.37, k = 16 the readout said 0.999 and the text "1.00"."""
    at = run_page(PAGE, p="0.37", k="16")
    s16 = 1 - 0.37**16 - 0.63**16  # 0.99938
    s64 = 1 - 0.37**64 - 0.63**64
    assert metrics(at)[SIGNAL] == "0.999" and f"{s16:.5f}" == "0.99938"
    text = look_for(at)
    assert "1.00 for" not in text
    assert f"0.999 for k = 16 and {below_certain(s64)} for k = 64" in text


def pmf_signal_none(p: float, k: int) -> float:
    return p**k + (1 - p) ** k


def test_explanation_at_the_extremes_reads_the_right_way_round():
    low = look_for(run_page(PAGE, p="0.01"))
    assert "most responses (92%)" in low  # 0.99^8 + 0.01^8 = 0.923
    assert "single right answer" in low
    high = look_for(run_page(PAGE, p="0.99"))
    assert "most responses (92%)" in high
    assert "single wrong answer gets a large negative advantage (−2.65)" in high
    assert "7 right ones each get a small positive one (+0.38)" in high
    big = look_for(run_page(PAGE, p="0.5", k="1024"))
    assert "practically empty" in big and "512 of 1,024 correct" in big
    assert "equal and opposite" in big


# --- the calculator ------------------------------------------------------------------------


def test_calculator_is_an_h2_section_with_a_table_that_fits_a_phone():
    at = run_page(PAGE)
    assert len(at.subheader) == 0
    heads = [m.value for m in at.markdown if "<h2" in str(m.value)]
    assert any("Advantages of one group" in h for h in heads)
    t = at.table[-1].value
    assert list(t.columns) == ["grade", STD_K, STD_K1, DR]  # and the response number as index
    assert t.index.name == "response"


def test_calculator_default_is_example_12_2():
    at = run_page(PAGE)
    t = calculator_table(at)
    np.testing.assert_allclose(t[STD_K], [1, -1, -1, 1])
    np.testing.assert_allclose(t[DR], [0.5, -0.5, -0.5, 0.5])
    # k - 1 convention by hand: centred 0.5 over sqrt(1/3) = 0.866, shown as 0.87.
    np.testing.assert_allclose(
        t[STD_K1], np.round(np.array([1, -1, -1, 1]) * 0.5 * math.sqrt(3), 2)
    )


@pytest.mark.parametrize(
    "text, right, wrong",
    [
        ("1,0,0,0", 1.73, -0.58),  # Example 12.2
        ("1 1 1 0 0 0 0 0", 1.29, -0.77),  # Exercise 12.4
        ("1,0,0,0,0,0,0,0", 2.65, -0.38),  # Figure 12.4's readout
    ],
)
def test_calculator_chapter_groups(text, right, wrong):
    at = run_page(PAGE)
    at.text_input[0].set_value(text).run()
    assert not at.error
    t = calculator_table(at)
    grades = t["grade"].to_numpy()
    assert t[STD_K][grades == 1].unique().tolist() == [right]
    assert t[STD_K][grades == 0].unique().tolist() == [wrong]


def test_calculator_long_group_gets_one_row_per_grade():
    at = run_page(PAGE)
    at.text_input[0].set_value("1 " * 20 + "0 " * 30).run()
    assert_clean(at)
    t = at.table[-1].value
    assert list(t.index) == ["1 (correct)", "0 (wrong)"]
    assert t["responses"].tolist() == ["20", "30"]
    # mean 0.4, sd sqrt(0.24): correct +0.6/0.49 = +1.22, wrong -0.4/0.49 = -0.82
    sd = math.sqrt(0.4 * 0.6)
    assert t[STD_K].tolist() == [f"+{0.6 / sd:.2f}", f"−{0.4 / sd:.2f}"]
    assert t[DR].tolist() == ["+0.60", "−0.40"]


def test_calculator_one_grade_is_singular():
    at = run_page(PAGE)
    at.text_input[0].set_value("1").run()
    assert_clean(at)
    [info] = [i.value for i in at.info]
    assert "The one grade is 1" in info and "All 1 grades" not in info
    assert "teaches nothing" in info


def test_calculator_flat_group_says_it_teaches_nothing():
    at = run_page(PAGE)
    at.text_input[0].set_value("1,1,1,1").run()
    assert_clean(at)
    assert not at.error
    assert any("teaches nothing" in i.value for i in at.info)
    t = calculator_table(at)
    assert (t[[STD_K, STD_K1, DR]].to_numpy() == 0).all()


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("1,2,0", "'2'"),
        ("1,yes", "'yes'"),
        ("0.5, 1", "'0.5'"),
        ("", "empty"),
        ("  , ", "empty"),
        ("nan,1", "grade"),
    ],
)
def test_calculator_bad_input_gets_a_clear_message(text, fragment):
    at = run_page(PAGE)
    n_tables = len(at.table)
    at.text_input[0].set_value(text).run()
    assert not at.exception
    assert len(at.error) == 1
    assert fragment in at.error[0].value
    assert len(at.table) == n_tables - 1  # no table for a bad group
    assert metrics(at) == chapter_readout()  # the figure is untouched
    at.text_input[0].set_value("1,0").run()
    assert not at.error


# ------------------------------------------------------------------ the instant figures

from tests.conftest import array, drawn, instant_figure, instant_readout_at, instant_table  # noqa: E402

CHARTS = ("groups-signal", "groups-advantages")


@pytest.mark.parametrize("k", ["8", "2", "64", "1024"])
def test_the_table_holds_the_figures_and_readout_each_stop_draws(k):
    """Neighbours of p = 0.10, a far stop and both ends: the browser's figure and readout
    there are what a run at that stop draws."""
    at = run_page("groups.py", p="0.1", k=k)
    for q in (0.09, 0.11, 0.5, 0.01, 0.99):
        moved = run_page("groups.py", p=f"{q:g}", k=k)
        for key in CHARTS:
            assert instant_figure(at, q, key) == drawn(moved, key), (q, key)
        assert instant_readout_at(at, q) == metrics(moved), q


@pytest.mark.parametrize("k", ["8", "2", "1024"])
def test_axis_ranges_are_the_same_at_every_stop(k):
    at = run_page("groups.py", k=k)
    t = instant_table(at)
    assert len(t["rows"]) == 99 and all(r is not None for r in t["rows"])
    # k = 1024 used to send the readout only (4.6 MB of stems); its second panel is now a pair
    # of curves against p (issue 31: the stems squashed into a blob), so its charts follow too.
    for key in CHARTS:
        ranges = {
            json.dumps(
                [instant_figure(at, q, key)["layout"][ax].get("range") for ax in ("xaxis", "yaxis")]
            )
            for q in t["keys"]
        }
        assert len(ranges) == 1, (key, ranges)
        assert None not in json.loads(ranges.pop())


def test_the_stems_stay_inside_the_fixed_axes():
    """Every visible stem (share ≥ 1/1000 of the largest) at every stop lies inside the x
    range, and no share passes the top."""
    import numpy as np
    from klrl_core import groups

    at = run_page("groups.py", k="8")
    (x0, x1), (_, y1) = (
        instant_figure(at, 0.5, "groups-advantages")["layout"][ax]["range"]
        for ax in ("xaxis", "yaxis")
    )
    for q in np.round(np.arange(0.01, 1.0, 0.01), 2):
        d = groups.advantage_distribution(float(q), 8)
        seen = d.value[d.share >= 1e-3 * d.share.max()]
        assert x0 < seen.min() and seen.max() < x1 and d.share.max() < y1, q


def test_the_table_of_stops_fits_the_budget():
    at = run_page("groups.py")
    from klrl_app import instant
    from tests.conftest import instant_table, sent_table

    # within the budget, so that the table carries the charts (not the readout alone)
    assert len(sent_table(at)) <= instant.MAX_TABLE and instant_table(at)["base"]


@pytest.mark.parametrize("k", [65, 1024])
def test_large_groups_draw_the_likeliest_groups_advantages_against_p(k):
    """Issue 31: at k = 1024 the stems of one p bunch into two clumps on axes that hold every p.
    Above k = 64 the second panel draws, at every p of the slider, each side's advantage in the
    likeliest mixed group (c* by lgamma, the advantages by hand), spread over the whole width."""
    at = run_page(PAGE, p="0.1", k=str(k))
    assert_clean(at)
    fig = drawn(at, "groups-advantages")
    right, wrong = (
        {ax: array(t[ax]) for ax in "xy"} for t in fig["data"] if t.get("mode") == "lines"
    )
    xs = np.round(np.linspace(0.01, 0.99, 99), 2)
    assert np.allclose(right["x"], xs) and np.allclose(wrong["x"], xs)
    for q, up, down in zip(xs, right["y"], wrong["y"]):
        # Where (k + 1) q is whole, c and c - 1 tie (1025 · 0.12 = 123): either may be drawn.
        c = likeliest_mixed_by_hand(float(q), k)
        tied = [c] + [c + d for d in (-1, 1) if abs((k + 1) * q - (c + max(d, 0))) < 1e-9]
        assert any(
            math.isclose(up, math.sqrt((k - t) / t), rel_tol=1e-6)
            and math.isclose(down, -math.sqrt(t / (k - t)), rel_tol=1e-6)
            for t in tied
        ), (q, c)
    assert fig["layout"]["xaxis"]["range"] == [0, 1]
    y0, y1 = fig["layout"]["yaxis"]["range"]
    assert y0 < min(wrong["y"]) and max(right["y"]) < y1
    c = likeliest_mixed_by_hand(0.1, k)
    alt = chart_alts(at)[1]
    assert alt.startswith("Line chart") and f"{c:,} of {k:,} correct" in alt
    assert f"+{math.sqrt((k - c) / c):.2f}" in alt
    text = look_for(at)
    assert "grey" not in text and "likeliest mixed group at every p" in text


def test_group_sizes_up_to_64_keep_the_stems():
    fig = drawn(run_page(PAGE, p="0.1", k="64"), "groups-advantages")
    assert fig["layout"]["xaxis"]["title"]["text"] == "advantage"
    assert "grey no-signal stem" in look_for(run_page(PAGE, p="0.01", k="64"))
