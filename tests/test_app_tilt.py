"""The tilt page (Figure 12.2) through AppTest: readout, slider, deep links, bad links."""

import pytest

from tests.conftest import assert_clean, metrics, notices, run_page

KL, REWARD, REF = "KL(π* ‖ π₀)", "E[r] under π*", "E[r] under π₀"


def test_defaults_show_the_chapters_readout():
    at = run_page("tilt.py")
    assert_clean(at)
    m = metrics(at)
    assert m[KL] == "0.34 nats" and m[REWARD] == "0.45" and m[REF] == "0.31"
    assert notices(at) == []
    assert at.query_params["kappa"] == "5"


def test_moving_the_slider_recomputes_and_updates_the_link():
    at = run_page("tilt.py")
    at.select_slider[0].set_value(20.0).run()
    m = metrics(at)
    assert m[KL] == "4.76 nats" and m[REWARD] == "0.82"
    assert at.query_params["kappa"] == "20"


@pytest.mark.parametrize("params, kl, reward", [
    ({"kappa": "10"}, "1.39 nats", "0.59"),
    ({"beta": "0.05"}, "4.76 nats", "0.82"),
    ({"kappa": "1"}, "0.01 nats", "0.34"),
    ({"beta": "1"}, "0.01 nats", "0.34"),
])
def test_deep_links(params, kl, reward):
    at = run_page("tilt.py", **params)
    assert_clean(at)
    assert notices(at) == []
    m = metrics(at)
    assert (m[KL], m[REWARD]) == (kl, reward)


def test_a_beta_between_slider_stops_is_kept_exactly():
    at = run_page("tilt.py", beta="0.03")  # kappa 33.3..., not a slider stop
    assert notices(at) == []
    assert at.select_slider[0].value == pytest.approx(1 / 0.03)
    assert metrics(at)[REWARD] == "0.94"   # Section 12.8.1: proxy 0.94 at beta = 0.03


@pytest.mark.parametrize("params, shown_kl", [
    ({"kappa": "abc"}, "0.34 nats"),         # default
    ({"kappa": "nan"}, "0.34 nats"),
    ({"beta": "0"}, "10.96 nats"),           # nearest allowed: kappa 10,000
    ({"kappa": "1e400"}, "10.96 nats"),
    ({"kappa": "-3"}, "0.00 nats"),          # nearest allowed: kappa 0, pi* = pi0
    ({"beta": "-1"}, "10.96 nats"),
    ({"beta": "xyz"}, "0.34 nats"),
])
def test_bad_links_draw_the_page_with_a_notice(params, shown_kl):
    at = run_page("tilt.py", **params)
    assert_clean(at)
    assert len(notices(at)) == 1
    name = next(iter(params))
    assert f"`{name}" in notices(at)[0]
    assert metrics(at)[KL] == shown_kl


def test_kappa_wins_over_beta_with_a_notice():
    at = run_page("tilt.py", kappa="10", beta="0.5")
    assert metrics(at)[KL] == "1.39 nats"
    assert "beta=0.5" in notices(at)[0]


def test_notice_goes_away_once_the_reader_moves_the_slider():
    at = run_page("tilt.py", kappa="abc")
    assert notices(at)
    at.select_slider[0].set_value(10.0).run()
    assert notices(at) == []
