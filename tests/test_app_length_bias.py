"""The length-bias page (chapter 28, second experiment) through AppTest: readout, controls,
deep links, bad links, and the explanation's branches at the ends of the controls' ranges.

Expected numbers are the chapter's printed table (mean of 20 runs, allowed the run-to-run
standard error, since both it and the page are sample means) or come from klrl_core at the
same settings, formatted the way the page prints them.
"""

import json
import math
import re
from functools import cache

import numpy as np
import pytest

from klrl_core import length_bias as core
from tests.conftest import (
    assert_clean,
    charts,
    instant_readout_at,
    instant_rows,
    metrics,
    notices,
    run_page,
)

PAGE = "length-bias.py"
DEFAULT_QUERY = {
    "steps": "1000",
    "runs": "20",
    "seed": str(core.SEED_DEFAULT),
    "lr_grpo": "2",
    "lr_dr": "20",
}
CHAPTER_1000 = {"GRPO": (0.99, 2.1, 12.1), "Dr. GRPO": (0.98, 9.2, 9.3)}


@cache
def core_final(steps=1000, runs=20, seed=core.SEED_DEFAULT, lr_grpo=2.0, lr_dr=20.0) -> dict:
    res = core.simulate(
        steps=steps, runs=runs, seed=seed, lrs={"GRPO": lr_grpo, "Dr. GRPO": lr_dr}, record_every=10
    )
    return {m: res.final(m) for m in core.METHODS}


def fmt(x, d):
    return f"{x:.{d}f}".replace("-", "−")


def expected_readout(**kw) -> dict[str, str]:
    """The readout: the step count, then each method's P(correct) and lengths."""
    steps, runs = kw.get("steps", 1000), kw.get("runs", 20)
    # written as the slider writes it, without a separator (issue 31: "1,000" beside "1000")
    out = {"after": f"{steps} steps" + (" (one run)" if runs == 1 else f" (mean of {runs:,} runs)")}
    for m in core.METHODS:
        f = core_final(**kw)[m]
        out[f"{m} P(correct)"] = fmt(f["p_correct"], 2)
        out[f"{m} length if right / wrong"] = (
            f"{fmt(f['len_correct'], 1)} / {fmt(f['len_incorrect'], 1)}"
        )
    return out


def shown(at) -> dict:
    """Readout values as numbers: method -> (P(correct), length if correct, if incorrect)."""
    m = metrics(at)
    out = {}
    for method in core.METHODS:
        right, wrong = (
            float(v.replace("−", "-")) for v in m[f"{method} length if right / wrong"].split(" / ")
        )
        out[method] = (float(m[f"{method} P(correct)"]), right, wrong)
    return out


def look_for(at) -> str:
    html = next(str(md.value) for md in at.markdown if "klrl-look" in str(md.value))
    return re.sub(r"<[^>]+>", " ", html)


def captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


def chart_alts(at) -> list[str]:
    live = [
        json.loads(c.proto.json)["alt"]
        for c in at.get("bidi_component")
        if c.proto.component_name == "klrl_live_chart"
    ]
    return live + [
        re.sub(r"<[^>]+>", "", str(m.value)) for m in at.markdown if "klrl-sr-only" in str(m.value)
    ]


def test_defaults_show_the_chapters_numbers():
    at = run_page(PAGE)
    assert_clean(at)
    assert notices(at) == []
    assert metrics(at) == expected_readout()
    final = core_final()
    got = shown(at)
    for m, want in CHAPTER_1000.items():
        for value, chapter, key, half_unit in zip(got[m], want, core.STATS, (0.005, 0.05, 0.05)):
            se = final[m][key + "_se"]
            # displayed rounding + the chapter's own rounding + 3 joint standard errors
            tol = 2 * half_unit + 3 * math.sqrt(2) * se
            assert abs(value - chapter) <= tol, (m, key, value, chapter, se)
    # the bias itself: GRPO's correct answers shrink, incorrect ones grow; Dr. GRPO's stay
    assert got["GRPO"][1] < 2.3 and got["GRPO"][2] > 11.0
    assert abs(got["Dr. GRPO"][1] - 9.3) < 0.5 and abs(got["Dr. GRPO"][2] - 9.3) < 0.5
    assert dict(at.query_params) == DEFAULT_QUERY
    assert len(charts(at)) == 2


def test_checkpoint_table_matches_the_chapter_at_step_0():
    at = run_page(PAGE)
    at.session_state["klrl-length-bias-details"] = True  # the expander builds only when open
    at.run()
    table = at.table[0].value.reset_index()
    assert list(table["step"].unique()) == ["0", "100", "300", "1,000"]
    start = table[table["step"] == "0"]
    assert list(start["P(correct)"]) == ["0.25", "0.25"]
    p = 1 / (1 + math.exp(2.0))
    length = 1 + (1 - (1 - p) ** 40) / p  # 9.34: the chapter's 9.3
    assert list(start["length if correct"]) == [f"{length:.1f}"] * 2


def test_readout_names_the_step_count_and_both_methods():
    at = run_page(PAGE, steps="300", runs="4")
    m = metrics(at)
    assert m["after"] == "300 steps (mean of 4 runs)"
    assert list(m) == [
        "after",
        "GRPO P(correct)",
        "GRPO length if right / wrong",
        "Dr. GRPO P(correct)",
        "Dr. GRPO length if right / wrong",
    ]
    assert len(at.metric) == 0


def test_moving_controls_recomputes_and_updates_the_link():
    at = run_page(PAGE, steps="300")
    at.slider[1].set_value(6).run()  # runs (More settings)
    assert_clean(at)
    assert metrics(at) == expected_readout(steps=300, runs=6)
    assert at.query_params["runs"] == "6"
    at.slider[2].set_value(4.0).run()  # GRPO step size
    assert metrics(at) == expected_readout(steps=300, runs=6, lr_grpo=4.0)
    assert at.query_params["lr_grpo"] == "4"
    at.number_input[0].set_value(3).run()  # seed
    assert metrics(at) == expected_readout(steps=300, runs=6, seed=3, lr_grpo=4.0)
    assert at.query_params["seed"] == "3"
    at.slider[0].set_value(500).run()  # the main control: steps
    assert metrics(at) == expected_readout(steps=500, runs=6, seed=3, lr_grpo=4.0)
    assert metrics(at)["after"].startswith("500 steps")


@pytest.mark.parametrize(
    "params, kw",
    [
        (
            {"steps": "300", "runs": "5", "seed": "2", "lr_grpo": "3", "lr_dr": "10"},
            dict(steps=300, runs=5, seed=2, lr_grpo=3.0, lr_dr=10.0),
        ),
        ({"steps": "200", "runs": "1"}, dict(steps=200, runs=1)),
        ({"steps": "400", "lr_dr": "55"}, dict(steps=400, lr_dr=55.0)),
    ],
)
def test_deep_links_set_the_view(params, kw):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert notices(at) == []
    assert metrics(at) == expected_readout(**kw)
    assert at.slider[0].value == kw["steps"]
    for name, value in params.items():
        assert at.query_params[name] == value


@pytest.mark.parametrize(
    "params, kw",
    [
        ({"steps": "abc", "runs": "3"}, dict(steps=1000, runs=3)),
        ({"steps": "nan", "runs": "3"}, dict(steps=1000, runs=3)),
        ({"steps": "-5"}, dict(steps=100)),  # nearest allowed value
        ({"steps": "100000", "runs": "2"}, dict(steps=5000, runs=2)),
        ({"runs": "0", "steps": "200"}, dict(steps=200, runs=1)),
        ({"runs": "1e6", "steps": "200"}, dict(steps=200, runs=200)),
        ({"runs": "2.5", "steps": "200"}, dict(steps=200, runs=20)),
        ({"lr_grpo": "inf", "steps": "200"}, dict(steps=200, lr_grpo=10.0)),
        ({"lr_grpo": "xyz", "steps": "200"}, dict(steps=200)),
        ({"lr_dr": "-3", "steps": "200"}, dict(steps=200, lr_dr=1.0)),
        ({"seed": "-1", "steps": "200"}, dict(steps=200, seed=0)),  # nearest allowed value
    ],
)
def test_bad_links_draw_the_page_with_a_notice(params, kw):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert len(notices(at)) == 1
    bad = next(iter(params))
    assert f"`{bad}" in notices(at)[0]
    assert metrics(at) == expected_readout(**kw)
    assert len(charts(at)) == 2


def test_several_bad_parameters_at_once():
    at = run_page(PAGE, steps="-1", runs="abc", lr_grpo="nan", lr_dr="1e9", seed="x")
    assert_clean(at)
    text = notices(at)[0]
    for name in ("steps", "runs", "lr_grpo", "lr_dr", "seed"):
        assert f"`{name}" in text
    assert metrics(at) == expected_readout(steps=100, lr_dr=100.0)


# ----------------------------------------------------------------- the explanation's branches
START = 1 + (1 - (1 - 1 / (1 + math.exp(2.0))) ** 40) * (1 + math.exp(2.0))  # 9.34 tokens


def moved(f: dict, key: str, runs: int) -> float:
    """The change of a mean length from the start, or 0 when it is within half a token or,
    with several runs, within three standard errors."""
    delta = f[key] - START
    if abs(delta) < 0.5 or (runs > 1 and abs(delta) <= 3 * f[key + "_se"]):
        return 0.0
    return delta


def learned_words(p: float) -> str:
    return (
        "learned" if p >= 0.9 else "still learning" if p - 0.25 >= 0.05 else "barely moved toward"
    )


@pytest.mark.parametrize(
    "kw",
    [
        dict(steps=100),  # the steps slider's low end
        dict(steps=100, runs=1),  # one run: no band
        dict(steps=5000, runs=1, lr_dr=100.0),  # Dr. GRPO's lengths wander
        dict(steps=100, runs=40, lr_grpo=0.1, lr_dr=1.0),  # nothing has happened yet
        dict(steps=1000),  # the chapter's view
    ],
)
def test_explanation_branch_is_the_true_one(kw):
    params = {k: str(v) for k, v in kw.items()}
    at = run_page(PAGE, **params)
    assert_clean(at)
    runs = kw.get("runs", 20)
    g, d = core_final(**kw)["GRPO"], core_final(**kw)["Dr. GRPO"]
    text = look_for(at)
    # learning the answer: both in one phrase when they agree
    wg, wd = learned_words(g["p_correct"]), learned_words(d["p_correct"])
    if wg == wd:
        assert f"both methods {'have ' if wg != 'still learning' else 'are '}{wg}" in text
    else:
        assert "both methods" not in text.split(".")[0]
        assert wg in text and wd in text
    # the lengths
    g_fell = moved(g, "len_correct", runs) < 0
    d_moved = moved(d, "len_correct", runs) != 0 or moved(d, "len_incorrect", runs) != 0
    if g_fell and not d_moved:
        assert "Only GRPO moves the lengths" in text
        assert f"fallen from 9.3 to {fmt(g['len_correct'], 1)} tokens" in text
    elif g_fell:
        assert "Only GRPO" not in text
        assert "Dr. GRPO's lengths have moved too" in text
    else:
        assert "Only GRPO" not in text and "have not clearly shortened yet" in text
    if g["len_correct"] <= 2.5:
        assert "until it ends almost straight after the answer" in text
    else:
        assert "toward ending straight after the answer" in text
    # a single run has no band, and the page says so instead of pointing at one
    if runs == 1:
        assert "(the band)" not in text
        assert "A single run: no band" in captions(at)
        assert all(t.get("fill") != "toself" for fig in charts(at) for t in fig["data"])
        assert "Late in GRPO training" not in text
    else:
        assert "(the band)" in text
        assert f"Lines: mean of {runs:,} runs" in captions(at)
        assert sum(t.get("fill") == "toself" for fig in charts(at) for t in fig["data"]) == 6


def test_steps_100_is_not_described_as_learned():
    """At the steps slider's low end neither method has P(correct) near 1: the old text said
    "both methods learn the answer" at every setting."""
    at = run_page(PAGE, steps="100")
    g, d = core_final(steps=100)["GRPO"], core_final(steps=100)["Dr. GRPO"]
    assert g["p_correct"] < 0.9 and d["p_correct"] < 0.9
    text = look_for(at)
    assert "learned the answer" not in text
    assert "still learning" in text


def test_charts_have_text_alternatives_with_the_current_numbers():
    at = run_page(PAGE, steps="300", runs="5")
    alts = chart_alts(at)
    assert len(alts) == 2
    for alt, m in zip(alts, core.METHODS):
        f = core_final(steps=300, runs=5)[m]
        assert alt.startswith(f"Line chart of {m} training")
        assert "over 300 steps, mean of 5 runs" in alt
        assert f"to {f['len_correct']:.1f} tokens" in alt
        assert f"to {f['p_correct']:.2f}" in alt


@pytest.mark.parametrize(
    "params", [{}, {"runs": "4", "lr_grpo": "3", "seed": "2"}], ids=["default", "other-setting"]
)
def test_instant_readout_holds_the_readout_the_next_stops_show(params):
    """The table sent beside steps = 1,000 (slices of the same full run) is what the page shows
    when the slider gets there; the page sends every stop of the slider."""
    at = run_page(PAGE, steps="1000", **params)
    keys = [row[0] for row in instant_rows(at)]
    assert keys == [100 * i for i in range(1, 51)]
    for s in (900, 1100, 2200, 100, 5000):
        sent = instant_readout_at(at, s)
        moved = run_page(PAGE, steps=str(s), **params)
        assert metrics(moved) == sent, s
        assert sent["after"].startswith(f"{s} steps")


def test_every_stop_carries_both_panels_as_the_page_draws_them():
    """The browser's table at steps = 1,000 holds both panels at every stop, each equal to the
    figure the page draws there; a stop's panel ends at that step, where its mean curves are
    a separate simulation's means; the y axes are the same at every stop; under 300 kB."""
    from tests.conftest import array, instant_figure, instant_table

    at = run_page(PAGE, steps="1000")
    t = instant_table(at)
    assert len(json.dumps(t, ensure_ascii=False)) <= 300_000
    assert all(r is not None and len(r["c"]) == 2 for r in t["rows"])
    for s in (100, 300, 2500, 5000):
        moved = charts(run_page(PAGE, steps=str(s)))
        for i, m in enumerate(core.METHODS):
            fig = instant_figure(at, s, f"length-bias-{m}")
            assert fig == moved[i], (s, m)
            assert fig["layout"]["xaxis"]["range"] == [0, s]
            lines = {d["name"]: d for d in fig["data"] if d.get("name")}
            x = array(lines["length if correct"]["x"])
            at_s = int(np.flatnonzero(x == s)[0])
            f = core_final(steps=s)[m]
            for name, key in (
                ("length if correct", "len_correct"),
                ("length if incorrect", "len_incorrect"),
                ("P(correct answer)", "p_correct"),
            ):
                assert array(lines[name]["y"])[at_s] == pytest.approx(f[key], rel=1e-6), (s, m)
    ranges = {
        json.dumps(
            [
                instant_figure(at, k, f"length-bias-{m}")["layout"][ax]["range"]
                for m in core.METHODS
                for ax in ("yaxis", "yaxis2")
            ]
        )
        for k in t["keys"]
    }
    assert len(ranges) == 1


# ----------------------------------------------- review of the eleven pages (length-bias)
def all_words(at) -> str:
    return " ".join(re.sub(r"<[^>]+>", "", str(m.value)) for m in at.markdown)


@pytest.mark.parametrize("kw, near", [({"lr_grpo": 10.0, "lr_dr": 100.0}, False), ({}, True)])
def test_dr_grpo_stays_near_only_when_its_lengths_barely_moved(kw, near):
    """Review item 8: at Dr. GRPO step size 100 its correct length ends 0.7 tokens from the
    start (8.6 against 9.3), within three standard errors of the runs: the text says the move
    is within the runs' noise, not that the lengths "stay near"; at the defaults they do."""
    at = run_page(PAGE, **{k: str(v).rstrip("0").rstrip(".") for k, v in kw.items()})
    assert_clean(at)
    d = core_final(**kw)["Dr. GRPO"]
    text = all_words(at)
    moved = [abs(d[k] - 9.3) for k in ("len_correct", "len_incorrect")]
    assert (max(moved) < 0.45) == near
    if near:
        assert "while Dr. GRPO's stay near 9.3" in text
    else:
        se = d["len_correct_se"]
        assert 0.5 <= abs(d["len_correct"] - 9.3) <= 3 * se + 0.05
        assert "stay near" not in text
        assert "while Dr. GRPO's move from 9.3 by no more than the runs' noise (" in text
        assert f"{d['len_correct']:.1f} ± {float(f'{se:.0e}'):g} if right" in text


def test_the_readout_writes_the_step_count_as_the_slider_does():
    """Issue 31: the slider showed "1000" and the readout "1,000". Streamlit's slider shows an
    integer's plain digits (no format given); the readout and the text now do the same."""
    at = run_page(PAGE)
    assert at.slider[0].value == 1000 and at.slider[0].proto.format == "%d"
    assert metrics(at)["after"].startswith("1000 steps")
    assert "1,000 steps" not in " ".join(str(m.value) for m in at.markdown)
