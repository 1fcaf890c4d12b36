"""The kl-penalty page (chapter 28, first experiment) through AppTest: readouts, tables,
controls, deep links, bad links.

Expected numbers are either the chapter's printed ones (with a Monte Carlo allowance where the
chapter's number is a sample mean) or come from klrl_core at the same settings, formatted the
way the page promises to print them.
"""

from functools import lru_cache

import pytest

from klrl_core import kl_penalty as core
from tests.conftest import assert_clean, charts, metrics, notices, run_page

PAGE = "kl-penalty.py"
KL, NEG, TV_K3, TV_OPT = ("KL(π* ‖ π_ref)", "k1 estimates < 0", "TV(k3 loss, fwd opt.)",
                          "TV(π*, fwd opt.)")
DEFAULT_QUERY = {"beta": "0.5", "steps": "4000", "seed": "0"}


@lru_cache(maxsize=None)
def core_result(beta: float, seed: int, steps: int) -> core.KLPenaltyResult:
    return core.run_experiment(beta=beta, seed=seed, steps=steps)


def expected_readout(beta: float, seed: int, steps: int) -> dict:
    res = core_result(beta, seed, steps)
    rows = {r["policy"]: r for r in res.summary_rows()}
    return {
        KL: f"{res.estimators.true_kl:.4f} nats",
        NEG: f"{100 * res.estimators.share_negative[0]:.1f}%",
        TV_K3: f"{rows['k3 as a loss']['tv_to_forward']:.3f}",
        TV_OPT: f"{rows['pi* (target)']['tv_to_forward']:.3f}",
    }


def tables(at):
    """(estimator table, summary table) as shown: DataFrames of the printed strings, the first
    one by row number, the second by policy."""
    frames = [t.value.reset_index() for t in at.table]
    est = next(f for f in frames if "estimator" in f.columns)
    summary = next(f for f in frames if "policy" in f.columns)
    return est, summary.set_index("policy")


def num(text: str) -> float:
    """A printed table entry as a number ("−0.0229" -> -0.0229, "12.1%" -> 12.1)."""
    return float(text.replace("−", "-").rstrip("%"))


def sentence(at) -> str:
    return next(md.value for md in at.markdown if "klrl-readout" in md.value)


def test_defaults_show_the_chapters_numbers():
    at = run_page(PAGE)
    assert_clean(at)
    assert notices(at) == []
    m = metrics(at)
    assert m == expected_readout(0.5, 0, 4000)
    # the chapter: KL(pi* || pi_ref) = 0.1363, TV(pi*, forward optimum) = 0.034
    assert m[KL] == "0.1363 nats" and m[TV_OPT] == "0.034"
    # 12.1% of k1 estimates negative (both are sample shares: allow 1 point)
    assert abs(float(m[NEG].rstrip("%")) - 12.1) <= 1.0
    # "k3 as a loss converges to within 0.001 of the forward-KL optimum"
    assert float(m[TV_K3]) <= 0.001
    assert dict(at.query_params) == DEFAULT_QUERY
    assert "κ = 1/β = 2" in sentence(at)


def test_default_tables_match_the_chapter():
    at = run_page(PAGE)
    est, summary = tables(at)
    # means 0.137 / 0.113 / 0.136, spreads 0.114 / 0.042 / 0.067 (Monte Carlo: ~0.002)
    for got, want in zip(est["mean"], (0.1367, 0.1131, 0.1358)):
        assert num(got) == pytest.approx(want, abs=0.003)
    for got, want in zip(est["spread (sd)"], (0.1138, 0.0415, 0.0673)):
        assert num(got) == pytest.approx(want, abs=0.003)
    assert list(est["negative"])[1:] == ["0.0%", "0.0%"]
    # rewards 0.729 / 0.863 / 0.706, KL 0.136 / 1.318 / 0.096 at the digits printed
    for rule, reward, kl in (("k1 in the reward", 0.729, 0.136), ("k1 as a loss", 0.863, 1.318),
                             ("k3 as a loss", 0.706, 0.096)):
        assert num(summary.loc[rule, "E[r]"]) == pytest.approx(reward, abs=0.0015), rule
        assert num(summary.loc[rule, "KL to π_ref"]) == pytest.approx(kl, abs=0.004), rule
    assert summary.loc["k1 in the reward", "TV to π*"] == "0.000"
    assert num(summary.loc["forward-KL opt.", "TV to π*"]) == pytest.approx(0.034, abs=5e-4)
    assert len(charts(at)) == 1


def test_tables_are_the_cores_numbers():
    at = run_page(PAGE, beta="1.5", steps="300", seed="4")
    assert_clean(at)
    res = core_result(1.5, 4, 300)
    est, summary = tables(at)
    # printed at 4 and 3 decimals, with a true minus sign
    assert list(est["mean"]) == [f"{v:.4f}".replace("-", "−") for v in res.estimators.mean]
    assert list(est["spread (sd)"]) == [f"{v:.4f}" for v in res.estimators.std]
    assert list(est["negative"]) == [f"{100 * v:.1f}%" for v in res.estimators.share_negative]
    rows = {r["policy"]: r for r in res.summary_rows()}
    assert summary.loc["k3 as a loss", "TV to fwd opt."] == \
        f"{rows['k3 as a loss']['tv_to_forward']:.3f}"
    assert summary.loc["k1 as a loss", "E[r]"] == f"{rows['k1 as a loss']['reward']:.3f}"
    assert summary.loc["k1 as a loss", "KL to π_ref"] == f"{rows['k1 as a loss']['kl_to_ref']:.3f}"


def test_moving_beta_recomputes_and_updates_the_link():
    at = run_page(PAGE, steps="500")
    at.slider[0].set_value(1.0).run()
    assert_clean(at)
    assert metrics(at) == expected_readout(1.0, 0, 500)
    assert at.query_params["beta"] == "1"
    assert "κ = 1/β = 1" in sentence(at)


def test_steps_and_seed_controls():
    at = run_page(PAGE, steps="500")
    at.slider[1].set_value(800).run()
    at.number_input[0].set_value(9).run()
    assert_clean(at)
    assert metrics(at) == expected_readout(0.5, 9, 800)
    assert at.query_params["steps"] == "800" and at.query_params["seed"] == "9"
    # a different seed is a different prompt
    assert metrics(at)[KL] != "0.1363 nats"


@pytest.mark.parametrize("params, beta, steps, seed", [
    ({"beta": "0.25", "steps": "600", "seed": "3"}, 0.25, 600, 3),
    ({"kappa": "4", "steps": "400"}, 0.25, 400, 0),          # kappa = 1/beta
    ({"beta": "2", "steps": "200", "seed": "12345"}, 2.0, 200, 12345),
])
def test_deep_links_set_the_view(params, beta, steps, seed):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert notices(at) == []
    assert at.slider[0].value == pytest.approx(beta)
    assert at.slider[1].value == steps
    assert at.number_input[0].value == seed
    assert metrics(at) == expected_readout(beta, seed, steps)
    assert "kappa" not in at.query_params and at.query_params["beta"] == params.get(
        "beta", str(beta))


@pytest.mark.parametrize("params, beta, steps, seed", [
    ({"beta": "nan"}, 0.5, 4000, 0),
    ({"beta": "abc"}, 0.5, 4000, 0),
    ({"beta": "-1"}, 0.05, 4000, 0),            # nearest allowed value
    ({"beta": "100", "steps": "300"}, 5.0, 300, 0),
    ({"beta": "inf", "steps": "300"}, 5.0, 300, 0),
    ({"steps": "abc"}, 0.5, 4000, 0),
    ({"steps": "-5"}, 0.5, 100, 0),
    ({"steps": "1e9"}, 0.5, 5000, 0),
    ({"steps": "2.5"}, 0.5, 4000, 0),
    ({"seed": "-1"}, 0.5, 4000, 0),
    ({"seed": "xyz"}, 0.5, 4000, 0),
    ({"kappa": "0", "steps": "300"}, 0.5, 300, 0),
    ({"kappa": "abc", "steps": "300"}, 0.5, 300, 0),
    ({"kappa": "1000", "steps": "300"}, 0.05, 300, 0),     # beta 0.001: nearest is 0.05
])
def test_bad_links_draw_the_page_with_a_notice(params, beta, steps, seed):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert len(notices(at)) == 1
    bad = next(k for k in params if k != "steps" or len(params) == 1)
    assert f"`{bad}" in notices(at)[0]
    assert at.slider[0].value == pytest.approx(beta)
    assert at.slider[1].value == steps
    assert metrics(at) == expected_readout(beta, seed, steps)
    assert len(charts(at)) == 1


def test_beta_and_kappa_together():
    at = run_page(PAGE, beta="1", kappa="4", steps="300")
    assert_clean(at)
    assert len(notices(at)) == 1 and "`kappa` was ignored" in notices(at)[0]
    assert at.slider[0].value == pytest.approx(1.0)


def test_notice_goes_away_once_the_reader_moves_a_control():
    at = run_page(PAGE, beta="abc", steps="300")
    assert notices(at)
    at.slider[0].set_value(0.7).run()
    assert notices(at) == []
    assert_clean(at)
