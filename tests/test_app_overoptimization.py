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


@pytest.mark.parametrize(
    "kappa, branch",
    [
        ("0", "before the peak"),
        ("2", "before the peak"),
        ("20", "past the peak"),
        ("10000", "past the peak"),
    ],
)
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
    # their coefficient written γ, not β beside the KL weight (issue 31)
    assert f"α = {fit.alpha:.3f}, γ = {fit.beta:.3f}" in text
    names = [t.get("name", "") for c in charts(at) for t in c["data"]]
    assert any(n.startswith("d(α − γ·d)") for n in names)
    assert any(n.startswith("d(α − γ·log d)") for n in names)


# ------------------------------------------------------------------ the instant figures
import json  # noqa: E402

from klrl_app import controls  # noqa: E402
from tests.conftest import drawn, instant_figure, instant_readout_at, instant_table  # noqa: E402

CHARTS = ("over-policy", "over-frontier")


@pytest.mark.parametrize(
    "params", [{}, {"axis": "sqrt"}, {"pi0": "0.5,0.3,0.2", "r": "0,0.6,1", "rtrue": "0,0.8,0.1"}]
)
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
        ranges = {
            json.dumps(
                [
                    instant_figure(at, j, key)["layout"][ax].get("range")
                    for ax in ("xaxis", "yaxis", "yaxis2")
                    if ax in instant_figure(at, j, key)["layout"]
                ]
            )
            for j in range(len(rows))
        }
        assert len(ranges) == 1, (key, ranges)
        found = json.loads(ranges.pop())
        # a small model's policy panel has one category per response: no x range to fix
        assert all(r is not None for r in found[1:]) and (
            found[0] is not None or (key == "over-policy" and "pi0" in params)
        )


def test_the_table_of_stops_fits_the_budget():
    at = run_page(PAGE)
    from klrl_app import instant
    from tests.conftest import instant_table, sent_table

    # within the budget, so that the table carries the charts (not the readout alone)
    assert len(sent_table(at)) <= instant.MAX_TABLE and instant_table(at)["base"]


# --- issue 31 ---------------------------------------------------------------------------------
def gao_text(at) -> str:
    from tests.conftest import all_text

    text = all_text(at)
    return text[text.index("Gao et al. measured") :]


def test_gao_et_al_s_coefficient_is_not_called_beta_beside_the_slider_s_beta():
    """Their fitted coefficient was written β (0.132) beside the KL weight β = 0.05."""
    at = run_page(PAGE)
    text = gao_text(at).split("\n")[0]
    import re

    assert not re.search(r"β = \d\.\d|β·d|β·log|β > 0", text)
    assert "γ = " in text and "d(α − γ·d)" in text and "d(α − γ·log d)" in text
    assert "written γ here" in text  # and where the name comes from
    from tests.conftest import charts

    gao = charts(at)[-1]
    names = [t.get("name", "") for t in gao["data"]]
    assert any("γ = " in n for n in names) and not any("β" in n for n in names)


def _book():
    """The book's model written out here: 30 rewards evenly spaced from 0 to 1, π₀ from the
    chapter's logits (SPEC.md), the true reward the chapter's bend."""
    import numpy as np
    from klrl_core import user_model

    p = user_model.PRESETS[user_model.BOOK]
    r, pi0 = np.array(p.r, dtype=float), np.array(p.pi0, dtype=float)
    pi0 = pi0 / pi0.sum()
    return r, pi0, r - 2.4 * np.maximum(r - 0.5, 0) ** 2


def test_why_best_of_n_s_gain_peaks_above_the_tilt_s():
    """Best-of-n's true-reward gain peaks above the tilt's (0.282 against 0.241 on the book's
    model); the page says so and why, with numbers checked here by plain formulas."""
    import math
    import numpy as np

    r, pi0, rt = _book()
    order = np.argsort(r)
    base = pi0 @ rt

    def tilt(kappa):
        w = np.log(pi0) + kappa * r
        w = np.exp(w - w.max())
        return w / w.sum()

    def bon(n):  # pi_n(y) = F(y)^n − F⁻(y)^n over responses in order of reward
        f = np.cumsum(pi0[order])
        out = np.empty_like(pi0)
        out[order] = f**n - np.r_[0.0, f[:-1]] ** n
        return out

    def kl(pi):
        return float(np.sum(pi * np.log(pi / pi0)))

    t_pk = max((tilt(k) for k in np.linspace(0, 60, 6001)), key=lambda p: p @ rt)
    b_pk = max((bon(n) for n in range(1, 5000)), key=lambda p: p @ rt)
    gt, gb = t_pk @ rt - base, b_pk @ rt - base
    assert f"{gb:.2f}, {gt:.2f}" == "0.28, 0.24"
    text = gao_text(run_page(PAGE))
    assert "Best-of-n's gain peaks higher than the tilt's" in text
    import re

    found = re.search(r"best-of-n's at ([\d.]+) \(d = ([\d.]+)\) and the tilt's at ([\d.]+)", text)
    assert abs(float(found[1]) - gb) < 2e-3 and abs(float(found[3]) - gt) < 2e-3
    # the reason, at the KL the text names: the tilt's proxy reward is more spread out
    found = re.search(
        r"the tilt \(at ([\d.]+) nats\) and best-of-(\d+) \(at ([\d.]+) nats\) "
        r"earn proxy rewards of ([\d.]+) and ([\d.]+)",
        text,
    )
    kl_t, n, kl_b = float(found[1]), int(found[2]), float(found[3])
    lo, hi = 0.0, 60.0  # the tilt at that KL, by bisection on κ
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if kl(tilt(mid)) < kl_t else (lo, mid)
    t_at, b_at = tilt(lo), bon(n)
    assert f"{kl(b_at):.2f}" == f"{kl_b:.2f}"
    assert abs(kl(b_at) - kl_t) < 0.1  # about the same KL
    assert abs(float(found[4]) - t_at @ r) < 2e-3 and abs(float(found[5]) - b_at @ r) < 2e-3
    sd = lambda p: math.sqrt(p @ (r - p @ r) ** 2)  # noqa: E731
    assert sd(t_at) > sd(b_at) + 0.05 and b_at @ rt > t_at @ rt + 0.02
    found = re.search(r"standard deviation ([\d.]+) against ([\d.]+)", text)
    assert abs(float(found[1]) - sd(t_at)) < 2e-3 and abs(float(found[2]) - sd(b_at)) < 2e-3
    found = re.search(r"true reward ([\d.]+) for best-of-n against ([\d.]+) for the tilt", text)
    assert abs(float(found[1]) - b_at @ rt) < 2e-3 and abs(float(found[2]) - t_at @ rt) < 2e-3
    assert "the proxy overrates most" in text  # r − r* grows with r under the bend


def test_equal_peaks_are_said_as_equal():
    """r* = r on a small model: both reach the top reward, the same gain."""
    text = gao_text(run_page(PAGE, pi0="0.25,0.25,0.25,0.25", r="0,0.3,0.6,1", rtrue="0,0.3,0.6,1"))
    assert "The two gains peak at the same height" in text and "peaks higher" not in text


def test_no_peak_to_compare_when_the_true_reward_only_falls():
    """r = 0, 1, 2 under the chapter's bend: r* falls from π₀ on along both methods."""
    text = gao_text(run_page(PAGE, pi0="0.7,0.2,0.1", r="0,1,2"))
    assert "there is no peak to compare" in text and "peaks higher" not in text
