"""The token-credit page (chapter 28's token-level form; Exercise 28.2) through AppTest: the
issue's defaults, the ends of every control, bad links, the charts' numbers against an
independent enumeration, the instant table, and the computed checks."""

import math

import numpy as np
import plotly.graph_objects as go
import pytest

from klrl_app import controls
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
from tests.test_core_token_credit import ALL, REF, enumerate_tilt, r_by_hand

PAGE = "token-credit.py"
DEFAULTS = {
    "V*(x)": "0.582",
    "β·ln Z": "0.582",
    "implicit reward of abc": "+0.618",
    "abc against aba": "+0.200",
    "E_π*[r]": "0.814",
    "KL(π* ‖ π_ref)": "0.464 nats",
    "bandit share of abc": "+0.386",
}


def decoded(v):
    import base64

    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v, dtype=float)


def by_hand(beta, rule, y, y2):
    """The readout from plain loops (moderate beta)."""
    pi, z, _ = enumerate_tilt(beta, rule)
    v0 = beta * math.log(z)
    e = sum(pi[w] * r_by_hand(w, rule) for w in ALL)
    kl = sum(p * math.log(p / (REF[w[0]] * REF[w[1]] * REF[w[2]])) for w, p in pi.items())
    sign = lambda x: ("+" if round(x, 3) > 0 else "") + f"{x:.3f}".replace("-", "−")  # noqa
    sign0 = lambda x: "0.000" if abs(x) < 5e-4 else sign(x)  # noqa
    return {
        "V*(x)": f"{v0:.3f}",
        "β·ln Z": f"{v0:.3f}",
        f"implicit reward of {y}": sign0(r_by_hand(y, rule) - v0),
        f"{y} against {y2}": sign0(r_by_hand(y, rule) - r_by_hand(y2, rule)),
        "E_π*[r]": f"{e:.3f}",
        "KL(π* ‖ π_ref)": f"{kl:.3f} nats",
        f"bandit share of {y}": sign0(r_by_hand(y, rule) - e),
    }


def test_defaults_reproduce_the_issue():
    at = run_page(PAGE)
    assert_clean(at)
    assert notices(at) == []
    assert metrics(at) == DEFAULTS
    assert dict(at.query_params) == {"kappa": "2", "reward": "middle", "y": "abc", "y2": "aba"}
    figs = charts(at)
    assert len(figs) == 3
    for f in figs:
        go.Figure(f)
    text = all_text(at)
    assert "The first token of abc gets no soft credit (0.000)" in text
    assert "whole response's advantage, +0.386" in text
    assert "share their first 2 tokens (ab)" in text and "r(abc) − r(aba) = 1.200 − 1.000" in text
    assert "DPO on the tree" in text and "Exercise 28.2" in text


def test_tree_chart_holds_the_optimum_and_the_credits():
    at = run_page(PAGE)
    tree, grid, bars = charts(at)
    # π*'s tree (issue 31: bars, not an icicle): one column per token, each prefix a box whose
    # height is its probability under π*, stacked in index order
    pi, _, mass = enumerate_tilt(0.5, "middle")
    columns = [t for t in tree["data"] if t["type"] == "bar"]
    assert [c["name"] for c in columns] == ["token 1", "token 2", "token 3"]
    assert decoded(columns[2]["y"]) == pytest.approx([pi[w] for w in ALL], rel=1e-6)
    assert decoded(columns[1]["base"]) == pytest.approx(
        np.r_[0, np.cumsum([mass[a + b] for a in "abc" for b in "abc"])[:-1]], abs=1e-6
    )
    # colour = credit of the token into the box: beta ln pi*(a|s)/pi_ref(a|s); fixed range
    colours = decoded(columns[1]["marker"]["color"])
    assert colours[1] == pytest.approx(0.5 * math.log(mass["ab"] / mass["a"] / 0.3), rel=1e-6)
    # y and y′ outlined: abc's third box spans its probability under π*
    outline = next(t for t in tree["data"] if t.get("name") == "y = abc")
    third = decoded(outline["x"]) > 1.5  # the third column's box (NaN ends each box)
    start = sum(pi[w] for w in ALL[: ALL.index("abc")])
    assert sorted(set(decoded(outline["y"])[third].round(6))) == pytest.approx(
        [start, start + pi["abc"]], abs=1e-6
    )
    assert any(t.get("name") == "y′ = aba" for t in tree["data"])
    # the grid: every one of the 39 tokens' credits in a cell of its own
    cells = [t for t in grid["data"] if t["type"] == "bar"]
    assert [c["name"] for c in cells] == ["1st", "2nd", "3rd: a", "3rd: b", "3rd: c"]
    assert sum(len(decoded(c["customdata"])) for c in cells) == 39
    third_c = decoded(cells[4]["customdata"])  # rows aa, ab, …, cc
    assert third_c[1] == pytest.approx(0.5 * math.log(pi["abc"] / mass["ab"] / 0.2), rel=1e-6)
    assert all(c["texttemplate"] == "%{customdata:+.3f}" for c in cells)
    # y = abc outlined in the grid: its first token's cell (rows aa-ac), row ab's 2nd, 3rd: c
    rects = [
        (round(sh["x0"] + 0.47, 6), sh["y0"], sh["y1"])
        for sh in grid["layout"]["shapes"]
        if sh["line"]["dash"] == "solid"
    ]
    assert rects == [(0, 0, 3), (1, 1, 2), (4, 1, 2)]
    for fig in (tree, grid):
        assert fig["layout"]["coloraxis"]["cmin"] == -1.2
        assert fig["layout"]["coloraxis"]["cmax"] == 1.2
    # one colour bar, under the grid; both keep the same margins so their boxes align
    assert [f["layout"]["coloraxis"]["showscale"] for f in (tree, grid)] == [False, True]
    assert (tree["layout"]["margin"]["t"], tree["layout"]["margin"]["b"]) == (
        grid["layout"]["margin"]["t"],
        grid["layout"]["margin"]["b"],
    )
    soft, share = (decoded(t["y"]) for t in bars["data"])
    assert np.round(soft.astype(float), 3).tolist() == [0.0, 0.465, 0.153, 0.0, 0.465, -0.047]
    assert np.round(share.astype(float), 3).tolist() == [0.386] * 3 + [0.186] * 3


def test_beta_link_is_the_same_view():
    at = run_page(PAGE, beta="0.5")
    assert metrics(at) == DEFAULTS and at.query_params["beta"] == "0.5"


@pytest.mark.parametrize("rule", ["middle", "last", "first", "count"])
@pytest.mark.parametrize("beta", ["0.25", "3"])
def test_every_rule_against_loops(rule, beta):
    at = run_page(PAGE, reward=rule, beta=beta, y="cbc", y2="cab")
    assert_clean(at)
    assert metrics(at) == by_hand(float(beta), rule, "cbc", "cab")


@pytest.mark.parametrize("kappa", ["0", "10000"])
@pytest.mark.parametrize("rule", ["middle", "count"])
def test_ends_of_kappa(kappa, rule):
    at = run_page(PAGE, kappa=kappa, reward=rule, y="ccc", y2="aaa")
    assert_clean(at)
    m = metrics(at)
    r = np.array([r_by_hand(y, rule) for y in ALL])
    ref = np.array([REF[y[0]] * REF[y[1]] * REF[y[2]] for y in ALL])
    if kappa == "0":
        assert m["V*(x)"] == f"{ref @ r:.3f}" and m["KL(π* ‖ π_ref)"] == "0.000 nats"
        assert "DPO's optimum is π_ref itself" in all_text(at)
    else:
        assert m["E_π*[r]"] == f"{r.max():.3f}"
    assert m["V*(x)"] == m["β·ln Z"]
    for f in charts(at):
        go.Figure(f)


def test_instant_table_covers_every_kappa_stop():
    at = run_page(PAGE)
    t = instant_table(at)
    assert len(t["rows"]) == len(controls.kappa_options()) and all(t["rows"])
    i0 = controls.kappa_options().index(0.0)
    assert instant_readout_at(at, i0)["V*(x)"] == "0.340"  # E_pi_ref[r] = 0.3 + 0.2 * 0.2
    i = controls.kappa_options().index(1.0)
    assert instant_readout_at(at, i) == by_hand(1.0, "middle", "abc", "aba")
    # fixed axis ranges at every stop
    for j in (0, i, len(t["rows"]) - 1):
        fig = instant_figure(at, j, "token-credit-bars")
        assert fig["layout"]["yaxis"]["range"] == pytest.approx([-1.32, 1.32])
        for key in ("token-credit-tree", "token-credit-ref"):
            assert instant_figure(at, j, key)["layout"]["coloraxis"]["cmax"] == 1.2
    # the π* tree's masses at a stop are the enumeration's
    tree = instant_figure(at, i, "token-credit-tree")["data"]
    (third,) = [t for t in tree if t["name"] == "token 3"]
    pi, _, _ = enumerate_tilt(1.0, "middle")
    assert decoded(third["y"]) == pytest.approx([pi[w] for w in ALL], rel=1e-6)


def test_slider_moves_and_link_follows():
    at = run_page(PAGE)
    at.select_slider[0].set_value(1.0).run()
    assert at.query_params["kappa"] == "1"
    assert metrics(at) == by_hand(1.0, "middle", "abc", "aba")


def test_typed_responses_take_the_nearest_valid_word():
    at = run_page(PAGE)
    at.text_input[0].set_value("cbx").run()
    assert at.text_input[0].value == "cbc"
    assert any("not 3 letters" in w for w in notices(at))
    assert at.query_params["y"] == "cbc"
    at.text_input[1].set_value("CCA").run()  # letters are read case-blind, silently
    assert at.text_input[1].value == "cca" and at.query_params["y2"] == "cca"
    assert metrics(at) == by_hand(0.5, "middle", "cbc", "cca")
    assert_clean(at)


@pytest.mark.parametrize(
    "params, name, shown",
    [
        ({"reward": "longest"}, "reward", {"reward": "middle"}),
        ({"y": "abd"}, "y", {"y": "abc"}),
        ({"y": "ab"}, "y", {"y": "abc"}),
        ({"y2": "abcab"}, "y2", {"y2": "abc"}),
        ({"y2": "zzz"}, "y2", {"y2": "aba"}),
        ({"kappa": "-1"}, "kappa", {"kappa": "0"}),
        ({"kappa": "1e9"}, "kappa", {"kappa": "10000"}),
        ({"beta": "0"}, "beta", {"kappa": "10000"}),
        ({"beta": "abc"}, "beta", {"kappa": "2"}),
    ],
)
def test_bad_links_give_a_notice_and_the_nearest_value(params, name, shown):
    at = run_page(PAGE, **params)
    assert_one_notice(at, name, shown)
    assert len(charts(at)) == 3


def test_same_response_twice_and_presentation_view():
    at = run_page(PAGE, y="bbb", y2="bbb")
    assert_clean(at)
    assert metrics(at)["bbb against bbb"] == "0.000"
    assert "the same response" in all_text(at)
    at = run_page(PAGE, present="1")
    assert_clean(at)
    assert metrics(at) == DEFAULTS and len(charts(at)) == 3
    assert "Checks, computed" not in all_text(at)


def test_tree_labels_are_hidden_rather_than_shrunk_below_11_px():
    """The review found 1-10 px labels in the tree: below 11 px a label is hidden (the
    grid's cells are all tall enough for theirs; tests/e2e/test_readable.py measures them),
    and π*'s tree prints a letter only where its type fits (its credits are in the grid)."""
    tree, grid, _ = charts(run_page(PAGE))
    assert grid["layout"]["uniformtext"] == {"minsize": 11, "mode": "hide"}
    assert grid["layout"]["coloraxis"]["colorbar"]["orientation"] == "h"
    # the tree's letters: one text trace in the chart's type (not the bars' own text, which
    # plotly.js fits at every stop) whose texts are every prefix's last token; a letter is
    # placed, at its box's middle, only in a box at least 22 px tall of 270 px (the
    # presentation view's 19 px type fits)
    assert all(t.get("textposition") == "none" for t in tree["data"] if t["type"] == "bar")
    (letters,) = [t for t in tree["data"] if t.get("mode") == "text"]
    assert letters["textfont"] == {"color": "#111827"}
    assert letters["text"] == [w[t] for t in range(3) for w in sorted({w[: t + 1] for w in ALL})]
    bars = [t for t in tree["data"] if t["type"] == "bar"]
    heights = np.array([h for t in bars for h in decoded(t["y"])])
    bases = np.array([b for t in bars for b in decoded(t["base"])])
    placed = ~np.isnan(decoded(letters["y"]))
    assert np.array_equal(placed, heights * 270 >= 22) and placed.any() and not placed.all()
    np.testing.assert_allclose(
        decoded(letters["y"])[placed], (bases + heights / 2)[placed], rtol=1e-6
    )


def _luminance(hex_colour: str) -> float:
    """WCAG 2 relative luminance, written out here (sRGB channels, linearised)."""
    c = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def test_the_trees_letters_read_on_their_boxes_at_every_setting():
    """The tree's letters are near-black (#111827): at every κ stop and reward rule (y and y′
    change neither heights nor colours), every box tall enough for a letter (22 of 270 px)
    has a colour (the credit scale, red #dc2626 - pale #f3f4f6 - blue #2563eb, over ±span,
    span = max r - min r) on which the letter has at least 4.5:1 contrast (WCAG AA). Boxes
    and credits from klrl_core's soft tree; colours interpolated here."""
    from klrl_core import token_credit as tc

    ink = _luminance("#111827")
    ends = [(0.0, "#dc2626"), (0.5, "#f3f4f6"), (1.0, "#2563eb")]
    rgb = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for _, c in ends])
    worst = np.inf
    for rule in ("middle", "last", "first", "count"):
        r = np.array([tc.reward(w, rule) for w in ALL])
        span = r.max() - r.min()
        for kappa in controls.kappa_options():
            tree = tc.soft_tree(math.inf if kappa == 0 else 1 / kappa, rule)
            mass = tc.node_mass(
                tc.sequence_tilt(math.inf if kappa == 0 else 1 / kappa, rule).log_pi
            )
            for t in range(3):
                tall = np.asarray(mass[t + 1]).ravel() * 270 >= 22
                u = np.clip(0.5 + 0.5 * np.asarray(tree.credit[t]).ravel() / span, 0, 1)
                for ui in u[tall]:
                    box = np.array([np.interp(ui, [0, 0.5, 1], rgb[:, i]) for i in range(3)])
                    lum = _luminance("#" + "".join(f"{int(round(v)):02x}" for v in box))
                    worst = min(worst, (lum + 0.05) / (ink + 0.05))
    assert 4.5 <= worst < 21, worst


@pytest.mark.parametrize("rule", ["middle", "last", "first", "count"])
def test_kappa_zero_reads_as_sentences(rule):
    text = all_text(run_page(PAGE, kappa="0", reward=rule))
    assert (
        "each token's credit is its advantage under the reference, the change it makes "
        "to E_π_ref[r | prefix]."
    ) in text
    assert "advantages E[r | prefix] changes" not in text


def test_a_negative_top_credit_is_the_largest_in_size_and_a_zero_share_says_so():
    text = all_text(run_page(PAGE, kappa="10000", reward="middle", y="ccc", y2="cca"))
    assert (
        "token 2 (c) carries the largest credit in size (−1.000): writing it lowered the "
        "soft value more than any other token of ccc did"
    ) in text
    text = all_text(run_page(PAGE, kappa="10000", reward="first", y="ccc", y2="cca"))
    assert "the whole response's advantage, which is 0.000 here as well" in text
    assert "still gives it" not in text and "differ by 0," not in text


# --- issue 31 ---------------------------------------------------------------------------------
def look_for_text(at) -> str:
    text = all_text(at)
    return text[text.index("What to look for") :].split("\n")[0]


def test_tied_credits_are_said_as_a_tie():
    """Under the additive count rule at κ = 4, cbc's tokens 1 and 3 (both c) carry the same
    credit exactly; the text said token 3 carries "the most"."""
    beta = 0.25
    text = look_for_text(run_page(PAGE, kappa="4", reward="count", y="cbc", y2="cca"))
    # the credits by hand: V* of each prefix by the recursive soft value
    from tests.test_core_token_credit import soft_value_by_recursion as v

    credits = [
        v(p + a, beta, "count") - v(p, beta, "count")
        for p, a in (("", "c"), ("c", "b"), ("cb", "c"))
    ]
    assert abs(credits[0] - credits[2]) < 1e-12 and abs(credits[1]) < credits[0]
    assert "carries the most" not in text
    assert (
        f"tokens 1 (c) and 3 (c) tie for the largest credit in size (+{credits[0]:.3f}, "
        f"+{credits[2]:.3f}, equal exactly)"
    ) in text


def test_credits_equal_only_to_three_decimals_are_a_tie_too():
    """A tie at the shown precision is said as one, and said to be at that precision: at
    κ = 10.4 under the middle rule abc's tokens 2 and 3 get 0.11576 and 0.11578."""
    from tests.test_core_token_credit import soft_value_by_recursion as v

    beta = 1 / 10.4
    cr = [v("abc"[: t + 1], beta, "middle") - v("abc"[:t], beta, "middle") for t in range(3)]
    assert f"{cr[1]:.3f}" == f"{cr[2]:.3f}" == "0.116" and cr[2] - cr[1] > 1e-5
    text = look_for_text(run_page(PAGE, kappa="10.4"))
    assert (
        "tokens 2 (b) and 3 (c) tie for the largest credit in size (+0.116, +0.116, "
        "equal to the 3 decimals shown)"
    ) in text
    assert "carries the most" not in text


def test_the_model_is_stated_on_the_first_screen():
    """Issue 31: the tokens, the reference and the reward rule, above the figures (a caption
    before the charts), in the presentation view too, computed from the setting."""
    for rule, pays in (
        ("middle", "r = [y₂ = b] + 0.2·[y₃ = c]"),
        ("last", "r = [y₃ = c]"),
        ("first", "r = [y₁ = c]"),
        ("count", "r = (number of c tokens)/3"),
    ):
        at = run_page(PAGE, reward=rule, present="1")
        caption = at.caption[0].value
        assert caption == (
            f"The model: 27 responses of 3 tokens, each a, b or c; π_ref writes "
            f"a 0.5, b 0.3, c 0.2 at every step; the {rule} rule pays {pays} "
            f"for the whole response."
        )


def test_credit_sum_and_bandit_share_are_connected_by_v_star():
    """abc's credits sum to +0.618, its bandit share is +0.386; the page says why:
    V*(x) = E_π*[r] − β·KL, with numbers from an enumeration here."""
    pi, z, _ = enumerate_tilt(0.5, "middle")
    e = sum(pi[w] * r_by_hand(w, "middle") for w in ALL)
    kl = sum(p * math.log(p / (REF[w[0]] * REF[w[1]] * REF[w[2]])) for w, p in pi.items())
    v0 = 0.5 * math.log(z)
    text = look_for_text(run_page(PAGE))
    assert (
        f"abc's credits sum to r(abc) − V*(x) = +{1.2 - v0:.3f}, its bandit share is "
        f"r(abc) − E_π*[r] = +{1.2 - e:.3f}: they differ because V*(x) = E_π*[r] − "
        f"β·KL(π* ‖ π_ref) = {e:.3f} − 0.5 × {kl:.3f} = {v0:.3f}"
    ) in text
    assert f"exceed the bandit share by β·KL = {0.5 * kl:.3f}." in text
    assert (f"{1.2 - v0:.3f}", f"{1.2 - e:.3f}") == ("0.618", "0.386")
    # where β·KL rounds to 0.000 the text does not say they differ
    big = look_for_text(run_page(PAGE, kappa="10000", y="ccc", y2="cca"))
    assert "they agree to 3 decimals" in big and "they differ" not in big
    zero = look_for_text(run_page(PAGE, kappa="0"))
    assert "At κ = 0 π* is π_ref, KL is 0" in zero and "they differ" not in zero
