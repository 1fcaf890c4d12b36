"""The best-of-n page (Figure 12.3) through AppTest."""

import pytest

from tests.conftest import assert_clean, metrics, notices, run_page

PAGE = "best-of-n.py"


def test_defaults_show_the_chapters_readout():
    at = run_page(PAGE)
    assert_clean(at)
    m = metrics(at)
    assert m["π*: KL"] == "4.76 nats" and m["π*: E[r]"] == "0.82"
    assert m["n (KL-matched)"] == "324"
    assert m["best-of-324: KL"] == "4.76 nats"
    assert m["log n − (n−1)/n"] == "4.78 nats"
    assert m["best-of-324: E[r]"] == "0.79"
    # Section 12.5.2: 22% on one response below the top; the top in under 1% of batches; pi* 8%
    assert m["its likeliest response (r = 0.76)"] == "22%"
    shown_bon, shown_opt = m["best response: best-of-n / π*"].split(" / ")
    assert float(shown_bon.rstrip("%")) < 1 and round(float(shown_opt.rstrip("%"))) == 8
    assert "n" not in at.query_params  # the KL-matched n is not a choice, so not in the link


def test_slider_moves_the_matched_n():
    at = run_page(PAGE)
    at.select_slider[0].set_value(10.0).run()
    m = metrics(at)
    assert m["π*: KL"] == "1.39 nats"
    n = int(m["n (KL-matched)"].replace(",", ""))
    assert n < 324
    # the integer n whose KL is closest: within a small step of the tilt's 1.39 nats
    assert abs(float(m[f"best-of-{n:,}: KL"].split()[0]) - 1.39) <= 0.02


def test_typing_n_overrides_the_match_and_enters_the_link():
    at = run_page(PAGE)
    at.number_input[0].set_value(2).run()
    m = metrics(at)
    assert m["n (chosen)"] == "2"
    # Exercise-style check by hand: best-of-2 KL equals log 2 - 1/2 = 0.19 when no response repeats often.
    assert m["log n − (n−1)/n"] == "0.19 nats"
    assert at.query_params["n"] == "2"


@pytest.mark.parametrize("params", [{"n": "10000000"}, {"n": "10000000", "kappa": "10000"}])
def test_huge_n_stays_finite(params):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert notices(at) == []
    m = metrics(at)
    assert m["best-of-10,000,000: KL"] == "10.96 nats"  # tends to log(1/pi0(top)) = 10.96
    assert m["log n − (n−1)/n"] == "15.12 nats"


@pytest.mark.parametrize(
    "params, n_label, n_value",
    [
        ({"n": "-3"}, "n (chosen)", "1"),
        ({"n": "abc"}, "n (KL-matched)", "324"),
        ({"n": "2.5"}, "n (KL-matched)", "324"),
        ({"n": "1e9"}, "n (chosen)", "10,000,000"),
        ({"kappa": "abc"}, "n (KL-matched)", "324"),
    ],
)
def test_bad_links(params, n_label, n_value):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert len(notices(at)) == 1
    assert metrics(at)[n_label] == n_value


def test_clearing_the_n_box_returns_to_the_kl_matched_n():
    """Issue 10: an emptied box meant best-of-1; it means the KL-matched n again."""
    at = run_page(PAGE, n="5")
    assert metrics(at)["n (chosen)"] == "5"
    at.number_input[0].set_value(None).run()
    m = metrics(at)
    assert m["n (KL-matched)"] == "324"
    assert "n" not in at.query_params


@pytest.mark.parametrize("typed, shown", [(0, "1"), (-7, "1"), (20_000_000, "10,000,000")])
def test_a_typed_n_out_of_range_is_replaced_with_a_message(typed, shown):
    at = run_page(PAGE)
    at.number_input[0].set_value(typed).run()
    assert metrics(at)["n (chosen)"] == shown
    assert at.number_input[0].value == int(shown.replace(",", ""))  # the box shows it too
    said = " ".join(notices(at))
    assert "not allowed" in said and shown in said
    # the typed value is quoted exactly (a rounded 2.00000 × 10⁷ could read as allowed)
    assert f"{typed:,}".replace("-", "−") + " is not allowed" in said


def test_the_explanation_follows_n():
    """The batch sentence flips once a batch of n usually holds the best response."""
    small = " ".join(m.value for m in run_page(PAGE).markdown)
    assert "holds a best response only 0.6% of the time" in small  # 1 - (1 - 1.74e-5)^324
    big = " ".join(m.value for m in run_page(PAGE, n="10000000").markdown)
    assert "so best-of-n returns one that often" in big and "holds a best response only" not in big
    # Section 12.5.2: the formula is close at n = 324 because the best responses are rare
    assert "close, because the responses that decide best-of-324 are rare" in small
    still = " ".join(m.value for m in run_page(PAGE, kappa="0").markdown)
    assert "the optimum at κ = 0 is π₀ itself" in still and "keeps growing" not in still


# ------------------------------------------------------------------ the instant figures
import json  # noqa: E402

from klrl_app import controls  # noqa: E402
from tests.conftest import drawn, instant_figure, instant_table  # noqa: E402

CHARTS = ("bon-policy", "bon-frontier")


def table_readout(at, j: int) -> dict[str, str]:
    """The readout the browser writes at stop j: the row's values under the row's labels, or
    the table's (as instant.js does; here the labels name n, so they change along κ)."""
    t = instant_table(at)
    row = t["rows"][j]
    return dict(zip(row["l"] or t["labels"], row["v"]))


@pytest.mark.parametrize("params", [{}, {"n": "7"}, {"axis": "sqrt"}])
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
        assert table_readout(at, j) == metrics(moved), options[j]


@pytest.mark.parametrize("params", [{}, {"n": "1"}, {"pi0": "0.5,0.3,0.2", "r": "0,1,1"}])
def test_axis_ranges_are_the_same_at_every_stop(params):
    at = run_page(PAGE, **params)
    rows = instant_table(at)["rows"]
    assert all(r is not None for r in rows)
    for key in CHARTS:
        ranges = {
            json.dumps(
                [
                    instant_figure(at, j, key)["layout"][ax].get("range")
                    for ax in ("xaxis", "yaxis", "yaxis3")
                    if ax in instant_figure(at, j, key)["layout"]
                ]
            )
            for j in range(len(rows))
        }
        assert len(ranges) == 1, (key, ranges)
        x_range, y_range = json.loads(ranges.pop())[:2]
        # a small model's policy panel has one category per response: no x range to fix
        assert y_range is not None and (
            x_range is not None or (key == "bon-policy" and "pi0" in params)
        )
    # the dots and bars stay inside the y range at every stop
    # (the top of the upper segment when the axis is broken, issue 31)
    lay = instant_figure(at, 0, "bon-policy")["layout"]
    top = lay.get("yaxis3", lay["yaxis"])["range"][1]
    import base64
    import numpy as np

    for j in range(len(rows)):
        for trace in instant_figure(at, j, "bon-policy")["data"]:
            y = trace["y"]
            vals = (
                np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"])
                if isinstance(y, dict)
                else np.asarray(y, dtype=float)
            )
            # a dot is drawn in one segment (nan in the other)
            assert np.all(np.isnan(vals) | (vals <= top))


def test_the_table_of_stops_fits_the_budget():
    at = run_page(PAGE)
    from klrl_app import instant
    from tests.conftest import instant_table, sent_table

    # within the budget, so that the table carries the charts (not the readout alone)
    assert len(sent_table(at)) <= instant.MAX_TABLE and instant_table(at)["base"]
