"""The bandit page (Figure 12.1) through AppTest: readouts, controls, links, bad links."""

import pytest

from klrl_core import bandit
from tests.conftest import assert_clean, charts, metrics, notices, run_page

PAGE = "bandit.py"
MEAN20, SD20, BELOW20 = "Mean · 20", "Spread · 20", "Below ½ · 20"
MEAN4K, SD4K, BELOW4K = "Mean · 4,000", "Spread · 4,000", "Below ½ · 4,000"


def shown_readout(lr, baseline, seed):
    """What the 20-run readout must say, from klrl_core, formatted at the chapter's precision."""
    s = bandit.final_summary(bandit.simulate_reinforce(20, 300, lr, baseline, seed))
    return {MEAN20: f"{s['mean']:.2f}", SD20: f"{s['std']:.2f}",
            BELOW20: f"{s['n_below']} of 20"}


def many_readout(lr, baseline):
    s = bandit.many_run_summary(lr, baseline)
    return {MEAN4K: f"{s['mean']:.2f}", SD4K: f"{s['std']:.2f}",
            BELOW4K: f"{100 * s['share_below']:.0f}%"}


def subset(m, keys):
    return {k: m[k] for k in keys}


def test_defaults_show_the_chapters_many_run_numbers():
    at = run_page(PAGE)
    assert_clean(at)
    assert notices(at) == []
    m = metrics(at)
    # Section 12.1.3: without a baseline, 0.73 on average and 23% of runs below one half.
    assert m[MEAN4K] == "0.73" and m[BELOW4K] == "23%"
    assert subset(m, (MEAN20, SD20, BELOW20)) == shown_readout(0.15, False, 0)
    assert dict(at.query_params) == {"baseline": "off", "lr": "0.15", "seed": "0"}
    sentence = next(md.value for md in at.markdown if "klrl-readout" in md.value)
    assert f"finish below one half" in sentence and "0.73" in sentence and "23%" in sentence


def test_baseline_toggle_gives_the_chapters_baseline_numbers():
    at = run_page(PAGE)
    at.toggle[0].set_value(True).run()
    assert_clean(at)
    m = metrics(at)
    # Section 12.1.3: with the moving-average baseline, 0.86 and 7%.
    assert m[MEAN4K] == "0.86" and m[BELOW4K] == "7%"
    assert subset(m, (MEAN20, SD20, BELOW20)) == shown_readout(0.15, True, 0)
    assert at.query_params["baseline"] == "on"


def test_learning_rate_changes_both_readouts_as_the_core_says():
    at = run_page(PAGE)
    at.slider[0].set_value(0.5).run()
    assert_clean(at)
    m = metrics(at)
    assert subset(m, (MEAN20, SD20, BELOW20)) == shown_readout(0.5, False, 0)
    assert subset(m, (MEAN4K, SD4K, BELOW4K)) == many_readout(0.5, False)
    assert m[BELOW4K] != "23%"  # more runs lock on at a larger step size
    assert at.query_params["lr"] == "0.5"


def test_seed_changes_the_runs_but_not_the_many_run_statistics():
    at = run_page(PAGE)
    before = metrics(at)
    at.number_input[0].set_value(7).run()
    after = metrics(at)
    assert subset(after, (MEAN20, SD20, BELOW20)) == shown_readout(0.15, False, 7)
    assert subset(after, (MEAN4K, BELOW4K)) == subset(before, (MEAN4K, BELOW4K))
    assert at.query_params["seed"] == "7"


def test_new_runs_button_draws_a_new_seed_into_the_link():
    at = run_page(PAGE)
    at.button[0].click().run()
    assert_clean(at)
    seed = int(at.query_params["seed"])
    assert seed != 0
    assert at.number_input[0].value == seed
    m = metrics(at)
    assert subset(m, (MEAN20, SD20, BELOW20)) == shown_readout(0.15, False, seed)
    at.button[0].click().run()
    assert int(at.query_params["seed"]) != seed


@pytest.mark.parametrize("params, lr, baseline, seed", [
    ({"lr": "0.3", "baseline": "on", "seed": "42"}, 0.3, True, 42),
    ({"baseline": "TRUE"}, 0.15, True, 0),
    ({"baseline": "1"}, 0.15, True, 0),
    ({"baseline": "Off"}, 0.15, False, 0),
    ({"baseline": "false", "seed": "123456"}, 0.15, False, 123456),
    ({"lr": "0.05", "baseline": "0"}, 0.05, False, 0),
])
def test_deep_links_set_the_view(params, lr, baseline, seed):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert notices(at) == []
    assert at.toggle[0].value is baseline
    assert at.slider[0].value == pytest.approx(lr)
    assert at.number_input[0].value == seed
    m = metrics(at)
    assert subset(m, (MEAN20, SD20, BELOW20)) == shown_readout(lr, baseline, seed)
    assert subset(m, (MEAN4K, SD4K, BELOW4K)) == many_readout(lr, baseline)


@pytest.mark.parametrize("params, lr, baseline, seed", [
    ({"lr": "nan"}, 0.15, False, 0),
    ({"lr": "abc"}, 0.15, False, 0),
    ({"lr": "5"}, 1.0, False, 0),            # nearest allowed value
    ({"lr": "-1"}, 0.01, False, 0),
    ({"lr": "inf"}, 1.0, False, 0),
    ({"seed": "xyz"}, 0.15, False, 0),
    ({"seed": "-3"}, 0.15, False, 0),
    ({"seed": "2.5"}, 0.15, False, 0),
    ({"baseline": "maybe"}, 0.15, False, 0),
])
def test_bad_links_draw_the_page_with_a_notice(params, lr, baseline, seed):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert len(notices(at)) == 1
    name = next(iter(params))
    assert f"`{name}" in notices(at)[0]
    assert at.slider[0].value == pytest.approx(lr)
    m = metrics(at)
    assert subset(m, (MEAN20, SD20, BELOW20)) == shown_readout(lr, baseline, seed)
    assert len(charts(at)) == 1


def test_several_bad_parameters_at_once():
    at = run_page(PAGE, lr="nan", seed="xyz", baseline="maybe")
    assert_clean(at)
    text = notices(at)[0]
    for name in ("lr", "seed", "baseline"):
        assert f"`{name}" in text
    assert metrics(at)[MEAN4K] == "0.73"
    assert dict(at.query_params) == {"baseline": "off", "lr": "0.15", "seed": "0"}


def test_notice_goes_away_once_the_reader_moves_a_control():
    at = run_page(PAGE, lr="nan")
    assert notices(at)
    at.slider[0].set_value(0.2).run()
    assert notices(at) == []
