"""The length-bias page (chapter 28, second experiment) through AppTest: readouts, controls,
deep links, bad links.

Expected numbers are the chapter's printed table (mean of 20 runs, allowed the run-to-run
standard error, since both it and the page are sample means) or come from klrl_core at the
same settings, formatted the way the page prints them.
"""

import math
from functools import lru_cache

import pytest

from klrl_core import length_bias as core
from tests.conftest import assert_clean, charts, notices, run_page

PAGE = "length-bias.py"
DEFAULT_QUERY = {"steps": "1000", "runs": "20", "seed": str(core.SEED_DEFAULT), "lr_grpo": "2",
                 "lr_dr": "20"}
CHAPTER_1000 = {"GRPO": (0.99, 2.1, 12.1), "Dr. GRPO": (0.98, 9.2, 9.3)}


@lru_cache(maxsize=None)
def core_final(steps=1000, runs=20, seed=core.SEED_DEFAULT, lr_grpo=2.0, lr_dr=20.0) -> dict:
    res = core.simulate(steps=steps, runs=runs, seed=seed,
                        lrs={"GRPO": lr_grpo, "Dr. GRPO": lr_dr}, record_every=10)
    return {m: res.final(m) for m in core.METHODS}


def fmt(x, d):
    return f"{x:.{d}f}".replace("-", "−")


def expected_cards(**kw) -> list[tuple[str, str]]:
    """The four readout cards, GRPO's two then Dr. GRPO's, as (label, value)."""
    out = []
    for m in core.METHODS:
        f = core_final(**kw)[m]
        out += [("P(correct)", fmt(f["p_correct"], 2)),
                ("length if right / wrong",
                 f"{fmt(f['len_correct'], 1)} / {fmt(f['len_incorrect'], 1)}")]
    return out


def cards(at) -> list[tuple[str, str]]:
    return [(m.label, m.value) for m in at.metric]


def shown(at) -> dict:
    """Card values as numbers: method -> (P(correct), length if correct, length if incorrect)."""
    c = cards(at)
    out = {}
    for i, m in enumerate(core.METHODS):
        p = float(c[2 * i][1])
        right, wrong = (float(v) for v in c[2 * i + 1][1].split(" / "))
        out[m] = (p, right, wrong)
    return out


def test_defaults_show_the_chapters_numbers():
    at = run_page(PAGE)
    assert_clean(at)
    assert notices(at) == []
    assert cards(at) == expected_cards()
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
    table = at.dataframe[0].value
    assert list(table["step"].unique()) == [0, 100, 300, 1000]
    start = table[table["step"] == 0]
    assert list(start["p_correct"]) == pytest.approx([0.25, 0.25], abs=1e-12)
    p = 1 / (1 + math.exp(2.0))
    length = 1 + (1 - (1 - p) ** 40) / p        # 9.34: the chapter's 9.3
    assert list(start["len_correct"]) == pytest.approx([length, length], rel=1e-9)


def test_sentence_reads_the_same_numbers():
    at = run_page(PAGE)
    text = next(md.value for md in at.markdown if "klrl-readout" in md.value)
    g, d = core_final()["GRPO"], core_final()["Dr. GRPO"]
    for x, digits in ((g["p_correct"], 2), (g["len_correct"], 1), (g["len_incorrect"], 1),
                      (d["p_correct"], 2), (d["len_incorrect"], 1)):
        assert fmt(x, digits) in text


def test_moving_controls_recomputes_and_updates_the_link():
    at = run_page(PAGE, steps="300")
    at.slider[1].set_value(6).run()              # runs
    assert_clean(at)
    assert cards(at) == expected_cards(steps=300, runs=6)
    assert at.query_params["runs"] == "6"
    at.slider[2].set_value(4.0).run()            # GRPO step size
    assert cards(at) == expected_cards(steps=300, runs=6, lr_grpo=4.0)
    assert at.query_params["lr_grpo"] == "4"
    at.number_input[0].set_value(3).run()        # seed
    assert cards(at) == expected_cards(steps=300, runs=6, seed=3, lr_grpo=4.0)
    assert at.query_params["seed"] == "3"


@pytest.mark.parametrize("params, kw", [
    ({"steps": "300", "runs": "5", "seed": "2", "lr_grpo": "3", "lr_dr": "10"},
     dict(steps=300, runs=5, seed=2, lr_grpo=3.0, lr_dr=10.0)),
    ({"steps": "200", "runs": "1"}, dict(steps=200, runs=1)),
    ({"steps": "400", "lr_dr": "55"}, dict(steps=400, lr_dr=55.0)),
])
def test_deep_links_set_the_view(params, kw):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert notices(at) == []
    assert cards(at) == expected_cards(**kw)
    assert at.slider[0].value == kw["steps"]
    for name, value in params.items():
        assert at.query_params[name] == value


@pytest.mark.parametrize("params, kw", [
    ({"steps": "abc", "runs": "3"}, dict(steps=1000, runs=3)),
    ({"steps": "nan", "runs": "3"}, dict(steps=1000, runs=3)),
    ({"steps": "-5"}, dict(steps=100)),                     # nearest allowed value
    ({"steps": "100000", "runs": "2"}, dict(steps=5000, runs=2)),
    ({"runs": "0", "steps": "200"}, dict(steps=200, runs=1)),
    ({"runs": "1e6", "steps": "200"}, dict(steps=200, runs=200)),
    ({"runs": "2.5", "steps": "200"}, dict(steps=200, runs=20)),
    ({"lr_grpo": "inf", "steps": "200"}, dict(steps=200, lr_grpo=10.0)),
    ({"lr_grpo": "xyz", "steps": "200"}, dict(steps=200)),
    ({"lr_dr": "-3", "steps": "200"}, dict(steps=200, lr_dr=1.0)),
    ({"seed": "-1", "steps": "200"}, dict(steps=200, seed=0)),   # nearest allowed value
])
def test_bad_links_draw_the_page_with_a_notice(params, kw):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert len(notices(at)) == 1
    bad = next(iter(params))
    assert f"`{bad}" in notices(at)[0]
    assert cards(at) == expected_cards(**kw)
    assert len(charts(at)) == 2


def test_several_bad_parameters_at_once():
    at = run_page(PAGE, steps="-1", runs="abc", lr_grpo="nan", lr_dr="1e9", seed="x")
    assert_clean(at)
    text = notices(at)[0]
    for name in ("steps", "runs", "lr_grpo", "lr_dr", "seed"):
        assert f"`{name}" in text
    assert cards(at) == expected_cards(steps=100, lr_dr=100.0)
