"""The token-credit page (chapter 28's token-level form; Exercise 28.2) through AppTest: the
issue's defaults, the ends of every control, bad links, the charts' numbers against an
independent enumeration, the instant table, and the computed checks."""

import math

import numpy as np
import plotly.graph_objects as go
import pytest

from klrl_app import controls
from tests.conftest import (assert_one_notice, all_text, assert_clean, charts, instant_figure, instant_readout_at,
                            instant_table, metrics, notices, run_page)
from tests.test_core_token_credit import ALL, REF, enumerate_tilt, r_by_hand

PAGE = "token-credit.py"
DEFAULTS = {"V*(x)": "0.582", "β·ln Z": "0.582", "implicit reward of abc": "+0.618",
            "abc against aba": "+0.200", "E_π*[r]": "0.814", "KL(π* ‖ π_ref)": "0.464 nats",
            "bandit share of abc": "+0.386"}


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
    return {"V*(x)": f"{v0:.3f}", "β·ln Z": f"{v0:.3f}",
            f"implicit reward of {y}": sign0(r_by_hand(y, rule) - v0),
            f"{y} against {y2}": sign0(r_by_hand(y, rule) - r_by_hand(y2, rule)),
            "E_π*[r]": f"{e:.3f}", "KL(π* ‖ π_ref)": f"{kl:.3f} nats",
            f"bandit share of {y}": sign0(r_by_hand(y, rule) - e)}


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
    tree, ref_tree, bars = charts(at)
    (opt,), (ref,) = tree["data"], ref_tree["data"]
    pi, _, mass = enumerate_tilt(0.5, "middle")
    leaves = decoded(opt["values"])[-27:]
    assert leaves == pytest.approx([pi[y] for y in ALL], rel=1e-10)
    assert decoded(ref["values"])[-27:] == pytest.approx(
        [REF[y[0]] * REF[y[1]] * REF[y[2]] for y in ALL], rel=1e-12)
    # colour = credit of the token into the node: beta ln pi*(a|s)/pi_ref(a|s); fixed range
    colours = decoded(opt["marker"]["colors"])
    ids = opt["ids"]
    i = ids.index("π*:ab")
    assert colours[i] == pytest.approx(0.5 * math.log(mass["ab"] / mass["a"] / 0.3), rel=1e-9)
    # π_ref's tree: the same colours (π*'s credits at this κ) on the reference's masses
    assert ref["ids"][i] == "π_ref:ab"
    assert decoded(ref["marker"]["colors"]) == pytest.approx(colours, abs=0)
    for fig in (tree, ref_tree):
        assert fig["layout"]["coloraxis"]["cmin"] == -1.2
        assert fig["layout"]["coloraxis"]["cmax"] == 1.2
    # one colour bar, under π_ref's tree; both trees keep the same margins so their boxes align
    assert [f["layout"]["coloraxis"]["showscale"] for f in (tree, ref_tree)] == [False, True]
    assert tree["layout"]["margin"] == ref_tree["layout"]["margin"]
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
    assert instant_readout_at(at, i0)["V*(x)"] == "0.340"     # E_pi_ref[r] = 0.3 + 0.2 * 0.2
    i = controls.kappa_options().index(1.0)
    assert instant_readout_at(at, i) == by_hand(1.0, "middle", "abc", "aba")
    # fixed axis ranges at every stop
    for j in (0, i, len(t["rows"]) - 1):
        fig = instant_figure(at, j, "token-credit-bars")
        assert fig["layout"]["yaxis"]["range"] == pytest.approx([-1.32, 1.32])
        for key in ("token-credit-tree", "token-credit-ref"):
            assert instant_figure(at, j, key)["layout"]["coloraxis"]["cmax"] == 1.2
    # the π* tree's masses at a stop are the enumeration's
    opt = instant_figure(at, i, "token-credit-tree")["data"][0]
    pi, _, _ = enumerate_tilt(1.0, "middle")
    assert decoded(opt["values"])[-27:] == pytest.approx([pi[w] for w in ALL], rel=1e-6)


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
    at.text_input[1].set_value("CCA").run()        # letters are read case-blind, silently
    assert at.text_input[1].value == "cca" and at.query_params["y2"] == "cca"
    assert metrics(at) == by_hand(0.5, "middle", "cbc", "cca")
    assert_clean(at)


@pytest.mark.parametrize("params, name, shown", [
    ({"reward": "longest"}, "reward", {"reward": "middle"}),
    ({"y": "abd"}, "y", {"y": "abc"}),
    ({"y": "ab"}, "y", {"y": "abc"}),
    ({"y2": "abcab"}, "y2", {"y2": "abc"}),
    ({"y2": "zzz"}, "y2", {"y2": "aba"}),
    ({"kappa": "-1"}, "kappa", {"kappa": "0"}),
    ({"kappa": "1e9"}, "kappa", {"kappa": "10000"}),
    ({"beta": "0"}, "beta", {"kappa": "10000"}),
    ({"beta": "abc"}, "beta", {"kappa": "2"}),
])
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
    """The review found 1-10 px labels in the tree: below 11 px a label is hidden, and the
    credit is printed without its plus sign (the colour gives the sign), so the labels of the
    first two levels fit a phone's column."""
    tree, ref_tree, _ = charts(run_page(PAGE))
    for fig in (tree, ref_tree):
        assert fig["layout"]["uniformtext"] == {"minsize": 11, "mode": "hide"}
    # π_ref's boxes print the credit; π*'s only their token (the same credits, one chart over)
    assert set(ref_tree["data"][0]["texttemplate"][1:]) == {"%{label} %{customdata:.3f}"}
    assert tree["data"][0]["texttemplate"] == "%{label}"
    assert ref_tree["layout"]["coloraxis"]["colorbar"]["orientation"] == "h"


@pytest.mark.parametrize("rule", ["middle", "last", "first", "count"])
def test_kappa_zero_reads_as_sentences(rule):
    text = all_text(run_page(PAGE, kappa="0", reward=rule))
    assert ("each token's credit is its advantage under the reference, the change it makes "
            "to E_π_ref[r | prefix].") in text
    assert "advantages E[r | prefix] changes" not in text


def test_a_negative_top_credit_is_the_largest_in_size_and_a_zero_share_says_so():
    text = all_text(run_page(PAGE, kappa="10000", reward="middle", y="ccc", y2="cca"))
    assert ("token 2 (c) carries the largest credit in size (−1.000): writing it lowered the "
            "soft value more than any other token of ccc did") in text
    text = all_text(run_page(PAGE, kappa="10000", reward="first", y="ccc", y2="cca"))
    assert "the whole response's advantage, which is 0.000 here as well" in text
    assert "still gives it" not in text and "differ by 0," not in text
