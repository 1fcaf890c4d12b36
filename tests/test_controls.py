"""klrl_app/controls.py's generic controls on their own (small scripts), and through the pages
that use them: count_or_all (dpo's pairs), preset_or_lists (entropy's policy, the tilt pages'
model) and linked_texts (pass-at-k's problems)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import notices, run_page


def _run(script, *args, **params: str) -> AppTest:
    at = AppTest.from_function(script, args=args, default_timeout=30)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def _shown(at: AppTest) -> list[str]:
    return [t.value for t in at.text]


# ------------------------------------------------------------------------- count_or_all
def _count_app():
    import streamlit as st

    from klrl_app.controls import Controls

    ui = Controls("t")
    value = ui.count_or_all(
        "pairs",
        "Pairs",
        [10, 100, 1_000, "all"],
        100,
        10**7,
        "pairs",
        word_means="the limit of many",
    )
    st.text(repr(value))
    label, kind, options, texts = ui.sliders["pairs"]
    st.text(repr((label, kind, options, texts, ui.grids["pairs"])))
    ui.finish()


def test_count_or_all_defaults_and_registers_its_slider():
    at = _run(_count_app)
    assert not at.exception and notices(at) == []
    value, slider = _shown(at)
    assert value == "100" and dict(at.query_params) == {"pairs": "100"}
    assert slider == repr(
        (
            "Pairs",
            "index",
            [10, 100, 1000, "all"],
            ["10", "100", "1,000", "all (the limit)"],
            [10, 100, 1000, "all"],
        )
    )


def test_count_or_all_keeps_a_linked_count_between_stops_exactly():
    at = _run(_count_app, pairs="12345")
    assert not at.exception and notices(at) == []
    value, slider = _shown(at)
    assert value == "12345" and at.query_params["pairs"] == "12345"
    # the count is a stop of its own, before the word; the grid keeps the declared stops
    assert slider == repr(
        (
            "Pairs",
            "index",
            [10, 100, 1000, 12345, "all"],
            ["10", "100", "1,000", "12,345", "all (the limit)"],
            [10, 100, 1000, "all"],
        )
    )
    assert at.select_slider[0].value == 12345


@pytest.mark.parametrize("raw", ["all", "ALL", " All "])
def test_count_or_all_reads_the_word_case_blind(raw):
    at = _run(_count_app, pairs=raw)
    assert notices(at) == [] and _shown(at)[0] == "'all'" and at.query_params["pairs"] == "all"


@pytest.mark.parametrize(
    "raw, notice",
    [
        (
            "0",
            "`pairs=0`: a number of pairs must be at least 1; showing the default 100 pairs "
            "instead.",
        ),
        (
            "-3",
            "`pairs=-3`: a number of pairs must be at least 1; showing the default 100 pairs "
            "instead.",
        ),
        (
            "abc",
            "`pairs=abc`: not a number (a count or `all`); showing the default 100 pairs instead.",
        ),
        (
            "2.5",
            "`pairs=2.5`: not a whole number (a count or `all`); showing the default 100 "
            "pairs instead.",
        ),
        ("nan", "`pairs`: not a number (a count or `all`); showing the default 100 pairs instead."),
    ],
)
def test_count_or_all_refuses_bad_text_with_the_default(raw, notice):
    at = _run(_count_app, pairs=raw)
    assert not at.exception
    assert notices(at) == ["**Part of this link could not be used.**\n\n- " + notice]
    assert _shown(at)[0] == "100" and at.query_params["pairs"] == "100"


@pytest.mark.parametrize("raw, quoted", [("1e9", "`pairs=1e9`"), ("inf", "`pairs`")])
def test_count_or_all_clamps_a_count_above_the_largest(raw, quoted):
    at = _run(_count_app, pairs=raw)
    assert notices(at) == [
        "**Part of this link could not be used.**\n\n- "
        + quoted
        + ": above the largest allowed count 10,000,000 (use `all` for the "
        "limit of many); showing 10,000,000 instead."
    ]
    assert _shown(at)[0] == "10000000" and at.query_params["pairs"] == "10000000"


def test_count_or_all_follows_the_slider_and_drops_the_notice():
    at = _run(_count_app, pairs="abc")
    assert len(notices(at)) == 1
    at.select_slider[0].set_value("all").run()
    assert notices(at) == [] and _shown(at)[0] == "'all'" and at.query_params["pairs"] == "all"
    at.select_slider[0].set_value(10).run()
    assert _shown(at)[0] == "10" and at.query_params["pairs"] == "10"


def test_count_or_all_wants_the_word_as_the_last_stop():
    from klrl_app.controls import Controls

    with pytest.raises(ValueError):
        Controls("t").count_or_all("n", "n", [10, "all", 100], 10, 100, "draws")


def test_dpo_keeps_a_linked_count_of_pairs_exactly():
    at = run_page("dpo.py", pairs="12345")
    assert not at.exception and notices(at) == []
    assert at.query_params["pairs"] == "12345"
    slider = next(s for s in at.select_slider if s.label == "Pairs drawn from π₀")
    assert slider.value == 12345 and "12,345" in slider.options
    assert slider.options[-1] == "all (the limit)"


# ---------------------------------------------------------------------- preset_or_lists
def _lists_app(mode):
    import streamlit as st

    from klrl_app.controls import Controls

    presets = {"one": ("1,2", "3,4"), "two": ("5,6", "7,8")}

    def parse(x, y=None):
        xs = tuple(float(v) for v in x.split(","))  # ValueError on junk
        ys = None if y is None else tuple(float(v) for v in y.split(","))
        if ys is not None and len(xs) != len(ys):
            raise ValueError("lengths differ")
        return xs, ys

    def match(lists):
        return next((n for n, texts in presets.items() if parse(*texts) == lists), "own")

    ui = Controls("t")
    if mode == "preset texts":
        value = ui.preset_or_lists(
            "choice",
            presets,
            "one",
            "own",
            ("x", "y"),
            parse,
            match,
            preset_param="preset",
            preset_texts=presets.get,
            missing="MISSING",
            bad=lambda why: f"BAD: {why}",
            own_word="OWN WORD",
            unknown="UNKNOWN",
        )
    else:  # like the tilt pages: y optional, bad lists kept as one's own
        value = ui.preset_or_lists(
            "choice",
            presets,
            "one",
            "own",
            ("x", "y"),
            parse,
            match,
            required=("x",),
            missing="MISSING",
        )
    st.text(value)
    st.text(repr([st.session_state.get(ui.key(n)) for n in ("x", "y")]))
    ui.finish()


NOTICE = "**Part of this link could not be used.**\n\n- "


@pytest.mark.parametrize(
    "params, value, boxes, notice",
    [
        ({}, "one", ["1,2", "3,4"], None),
        ({"preset": "TWO"}, "two", ["5,6", "7,8"], None),
        ({"preset": "own"}, "one", ["1,2", "3,4"], "OWN WORD"),
        ({"preset": "zzz"}, "one", ["1,2", "3,4"], "UNKNOWN"),
        ({"x": "9,9", "y": "1,1", "preset": "two"}, "own", ["9,9", "1,1"], None),  # lists win
        ({"x": "5, 6", "y": "7,8"}, "two", ["5,6", "7,8"], None),  # a preset's lists: the preset
        ({"x": "1,2"}, "one", ["1,2", "3,4"], "MISSING"),
        ({"y": "1,2", "preset": "two"}, "one", ["1,2", "3,4"], "MISSING"),
        (
            {"x": "a,1", "y": "1,2"},
            "one",
            ["1,2", "3,4"],
            "BAD: could not convert string to float: 'a'",
        ),
        ({"x": "1", "y": "1,2"}, "one", ["1,2", "3,4"], "BAD: lengths differ"),
    ],
)
def test_preset_or_lists_with_preset_texts(params, value, boxes, notice):
    at = _run(_lists_app, "preset texts", **params)
    assert not at.exception
    assert _shown(at) == [value, repr(boxes)]
    assert notices(at) == ([] if notice is None else [NOTICE + notice])


@pytest.mark.parametrize(
    "params, value, boxes",
    [
        ({}, "one", [None, None]),  # the boxes are left as they are
        ({"y": "3,4"}, "one", [None, None]),  # an optional list alone: ignored
        ({"x": "a", "y": "1"}, "own", ["a", "1"]),  # kept; the page says what is wrong
        ({"x": "9"}, "own", ["9", ""]),
        ({"x": "1, 2", "y": "3,4"}, "one", ["1, 2", "3,4"]),  # the preset, the link's texts
    ],
)
def test_preset_or_lists_keeping_the_links_texts(params, value, boxes):
    at = _run(_lists_app, "kept", **params)
    assert not at.exception and notices(at) == []
    assert _shown(at) == [value, repr(boxes)]


def test_preset_or_lists_keeps_an_empty_required_list_as_your_own():
    at = _run(_lists_app, "kept", y="3,4", x="")  # x given but empty: bad, kept
    assert _shown(at) == ["own", repr(["", "3,4"])]


def test_preset_or_lists_reads_the_link_once():
    at = _run(_lists_app, "preset texts", preset="two")
    at.query_params["preset"] = "one"
    at.run()
    assert _shown(at)[0] == "two"


def test_entropy_reads_a_preset_case_blind_and_lists_before_a_preset():
    at = run_page("entropy.py", preset="UNIFORM")
    assert notices(at) == [] and at.query_params["preset"] == "uniform"
    at = run_page("entropy.py", preset="bogus", logits="0,0,0", advantages="1,0,-1")
    assert notices(at) == [] and at.query_params["preset"] == "custom"
    assert at.query_params["logits"] == "0,0,0"


def test_tilt_pages_ignore_a_true_reward_alone_and_keep_bad_lists_as_your_own():
    at = run_page("dpo.py", rtrue="0,1")
    assert notices(at) == [] and "rtrue" not in at.query_params
    at = run_page("dpo.py", pi0="0.5,x", r="0,1")
    assert len(notices(at)) == 1 and "Your lists could not be used" in notices(at)[0]
    boxes = {t.label: t.value for t in at.text_input}
    assert "0.5,x" in boxes.values()


# ------------------------------------------------------------------------- linked_texts
def _texts_app():
    import streamlit as st

    from klrl_app.controls import Controls

    def check(a, b):
        if len(a) != len(b):
            raise ValueError("lengths differ")

    ui = Controls("t")
    ui.linked_texts(("a", "b"), {"a": "xy", "b": "zw"}, check, lambda why: f"BAD: {why}")
    st.text(repr([st.session_state[ui.key(n)] for n in ("a", "b")]))
    ui.finish()


@pytest.mark.parametrize(
    "params, texts, notice",
    [
        ({}, ["xy", "zw"], None),
        ({"a": "pq"}, ["pq", "zw"], None),
        ({"a": "pq", "b": "rs"}, ["pq", "rs"], None),
        ({"a": "pqr"}, ["xy", "zw"], "BAD: lengths differ"),
    ],
)
def test_linked_texts(params, texts, notice):
    at = _run(_texts_app, **params)
    assert _shown(at) == [repr(texts)]
    assert notices(at) == ([] if notice is None else [NOTICE + notice])
