"""The overoptimization page (Figure 12.5) through AppTest."""

import pytest

from tests.conftest import assert_clean, metrics, notices, run_page

PAGE = "overoptimization.py"


def test_defaults_show_the_chapters_readout():
    at = run_page(PAGE)
    assert_clean(at)
    m = metrics(at)
    assert m["KL(π* ‖ π₀)"] == "4.76 nats"
    assert m["proxy E[r]"] == "0.82"
    assert m["true E[r*]"] == "0.54"
    assert m["true reward's peak"] == "0.55 at 3.2 nats"


@pytest.mark.parametrize("params", [{"beta": "0.03"}, {"kappa": "33.333333333333336"}])
def test_section_12_8_1_numbers_at_beta_003(params):
    at = run_page(PAGE, **params)
    m = metrics(at)
    assert (m["proxy E[r]"], m["true E[r*]"]) == ("0.94", "0.46")


def test_slider_and_link():
    at = run_page(PAGE)
    at.select_slider[0].set_value(0.0).run()
    m = metrics(at)
    assert m["KL(π* ‖ π₀)"] == "0.00 nats" and m["proxy E[r]"] == "0.31"
    assert at.query_params["kappa"] == "0"


@pytest.mark.parametrize("params", [{"kappa": "1e400"}, {"beta": "0"}, {"kappa": "zz"}])
def test_bad_links(params):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert len(notices(at)) == 1


def _explanation(at) -> str:
    return " ".join(str(m.value) for m in at.markdown if "What to look for" in str(m.value))


@pytest.mark.parametrize("kappa, branch", [("0", "before the peak"), ("2", "before the peak"),
                                           ("20", "past the peak"), ("10000", "past the peak")])
def test_the_explanation_says_which_side_of_the_peak(kappa, branch):
    """Issue 10: texts true at every setting. The side is checked against KL(kappa) and the
    peak's KL as the readout prints them."""
    at = run_page("overoptimization.py", kappa=kappa)
    m = metrics(at)
    kl = float(m["KL(π* ‖ π₀)"].split()[0])
    peak_kl = float(m["true reward's peak"].split(" at ")[1].split()[0])
    assert (kl < peak_kl) == (branch == "before the peak")
    assert branch in _explanation(at)


def test_gao_fits_are_drawn_with_their_coefficients():
    """Issue 12: Gao et al.'s forms fitted to the model's exact curves, coefficients shown.
    The fit itself is pinned in tests/test_core_square_root.py; here the page shows it."""
    import numpy as np

    from klrl_core import model, square_root as sq
    from tests.conftest import charts

    at = run_page("overoptimization.py")
    r = model.rewards()
    lp, rt = model.log_reference(r), model.true_reward(r)
    d = np.linspace(0, sq.max_d(lp, r, "best_of_n"), 121)[1:]
    fit = sq.fit_gao_bon(*sq.best_of_n_curve(lp, r, rt, d=d)[:2])
    text = " ".join(str(m.value) for m in at.markdown)
    assert f"α = {fit.alpha:.3f}, β = {fit.beta:.3f}" in text
    names = [t.get("name", "") for c in charts(at) for t in c["data"]]
    assert any(n.startswith("d(α − β·d)") for n in names)
    assert any(n.startswith("d(α − β·log d)") for n in names)


# ------------------------------------------------------------------ the instant figures
import json  # noqa: E402

from klrl_app import controls  # noqa: E402
from tests.conftest import drawn, instant_figure, instant_readout_at, instant_table  # noqa: E402

CHARTS = ("over-policy", "over-frontier")




@pytest.mark.parametrize("params", [{}, {"axis": "sqrt"},
                                    {"pi0": "0.5,0.3,0.2", "r": "0,0.6,1", "rtrue": "0,0.8,0.1"}])
def test_the_table_holds_the_figures_and_readout_each_stop_draws(params):
    """Neighbours of κ = 20, a far stop and both ends: the browser's figure and readout there
    are what a run at that stop draws."""
    options = controls.kappa_options()
    i = options.index(20.0)
    at = run_page(PAGE, kappa="20", **params)
    for j in (i - 1, i + 1, 12, 0, len(options) - 1):
        moved = run_page(PAGE, kappa=controls.fmt_number(options[j]), **params)
        for key in CHARTS:
            assert instant_figure(at, j, key) == drawn(moved, key), (options[j], key)
        assert instant_readout_at(at, j) == metrics(moved), options[j]


@pytest.mark.parametrize("params", [{}, {"pi0": "0.5,0.3,0.2", "r": "0,0.6,1"}])
def test_axis_ranges_are_the_same_at_every_stop(params):
    at = run_page(PAGE, **params)
    rows = instant_table(at)["rows"]
    assert all(r is not None for r in rows)
    for key in CHARTS:
        ranges = {json.dumps([instant_figure(at, j, key)["layout"][ax].get("range")
                              for ax in ("xaxis", "yaxis", "yaxis2")
                              if ax in instant_figure(at, j, key)["layout"]])
                  for j in range(len(rows))}
        assert len(ranges) == 1, (key, ranges)
        found = json.loads(ranges.pop())
        # a small model's policy panel has one category per response: no x range to fix
        assert all(r is not None for r in found[1:]) and (
            found[0] is not None or (key == "over-policy" and "pi0" in params))


def test_the_table_of_stops_fits_the_budget():
    at = run_page(PAGE)
    found = [json.loads(c.proto.json)["table"] for c in at.get("bidi_component")
             if c.proto.component_name == "klrl_instant" and "table" in json.loads(c.proto.json)]
    assert len(found[0].encode("utf-8")) <= 300_000
