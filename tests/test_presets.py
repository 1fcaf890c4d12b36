"""A lecturer's presets in the link (``lock=``, ``hide=``), the Reset button and the preset
builder ("Prepare a link for a class"), on every page of klrl_app/nav.py (issue 34, items 1
and 2; SPEC.md, "Presets").

The names each page takes are written out here (PAGES: the page's query parameters, its
main control first, the one its figures follow); each check runs a page as a reader opens a
link, and compares it with the same link without the preset."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest

from klrl_app import nav
from klrl_app.nav import PAGES as NAV
from tests.conftest import metrics, notices, run_page

# The control names of every page, in the order the page builds them; the main control (the
# slider its figures follow) first. A value for the main control other than its default,
# so that "the link's value is used" cannot pass by accident.
PAGES = {
    "bandit": (("lr", "baseline", "seed"), "0.3"),
    "ppo-clip": (
        ("eps", "sign", "show", "cispo", "grad", "lr", "epochs", "n", "seed", "bernoulli"),
        "0.3",
    ),
    "tilt": (("kappa", "model", "axis"), "20"),
    "rarity": (("p0", "delta", "beta"), "1e-06"),
    "best-of-n": (("kappa", "model", "axis", "n"), "10"),
    "groups": (("p", "k"), "0.3"),
    "overoptimization": (("kappa", "model", "axis"), "10"),
    "dpo": (("kappa", "pairs", "labels", "steps", "seed", "model", "axis"), "10"),
    "kl-penalty": (("beta", "steps", "seed"), "0.2"),
    "length-bias": (("steps", "runs", "seed", "lr_grpo", "lr_dr"), "500"),
    "normalization": (("k", "p"), "16"),
    "entropy": (("eta", "preset", "steps"), "1"),
    "pass-at-k": (("p", "beta", "k", "samples", "problems"), "0.2"),
    "loop": (
        ("step", "estimator", "g", "lr", "kl", "steps", "rare", "seed", "shared", "exact"),
        "100",
    ),
    "token-credit": (("kappa", "reward", "y", "y2"), "5"),
    "step-labels": (("skill", "steps", "seed", "n", "guess", "error"), "0.8"),
}
# Controls a page builds itself: the widgets (their names after the page's slug) of each.
GROUPS = {
    "model": ("model", "pi0", "r", "rtrue"),
    "preset": ("preset", "logits", "advantages"),
    "problems": ("before", "after"),
}
FILES = {p.url_path: p.file.split("/", 1)[1] for p in NAV}
FIGURE_PAGES = [p.url_path for p in nav.FIGURE_PAGES]
WIDGETS = (
    "slider",
    "select_slider",
    "toggle",
    "selectbox",
    "text_input",
    "number_input",
    "button_group",
)


def test_every_figure_page_is_listed():
    assert sorted(PAGES) == sorted(FIGURE_PAGES)


def _widgets(at, slug: str, name: str) -> list:
    """The widgets of control ``name`` on page ``slug`` (found by their session keys)."""
    keys = {f"{slug}.{n}" for n in GROUPS.get(name, (name,))}
    return [w for kind in WIDGETS for w in getattr(at, kind) if w.key in keys]


def _open(slug: str, **params: str):
    at = run_page(FILES[slug], timeout=120, **params)
    assert not at.exception, [e.value for e in at.exception]
    return at


def _note(at) -> str:
    found = [c.value for c in at.caption if "The lecturer" in str(c.value)]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("slug", FIGURE_PAGES)
def test_lock_every_control_keeps_the_links_values_disabled(slug):
    """lock=<every name>: every control shown and disabled, at the link's value; the numbers
    are the same link's without the lock; the note names them once; the link keeps lock; an
    unknown name gets a notice and changes nothing else."""
    names, main_value = PAGES[slug]
    main = names[0]
    plain = _open(slug, **{main: main_value})
    assert notices(plain) == []
    at = _open(slug, **{main: main_value, "lock": ",".join(names) + ",nosuch"})
    assert notices(at) == [
        "**Part of this link could not be used.**\n\n- `lock=nosuch`: not a "
        "control of this page (its controls: " + ", ".join(_ordered(at, names)) + "); ignored."
    ]
    for name in names:
        shown = _widgets(at, slug, name)
        if name in GROUPS and not shown:
            continue  # a group whose boxes show only for lists of one's own (tilt's model)
        assert shown, name
        assert all(w.disabled for w in shown), name
    assert metrics(at) == metrics(plain)
    assert at.query_params["lock"] == ",".join(names)
    assert at.query_params[main] == plain.query_params[main]
    assert _note(at).startswith(":material/lock: The lecturer fixed ")
    assert at.button(key="reset").label == "Reset"


def _ordered(at, names) -> list[str]:
    """The names in the order the page built them (the notice lists them so)."""
    text = next(n for n in notices(at) if "its controls" in n)
    listed = text.split("its controls: ", 1)[1].split(")", 1)[0].split(", ")
    assert sorted(listed) == sorted(names)
    return listed


@pytest.mark.parametrize("slug", FIGURE_PAGES)
def test_hide_leaves_controls_out_and_uses_the_links_values(slug):
    """hide=<every name but the main one>: those controls are absent, the main one moves, the
    numbers are the link's; then hide=<all>&lock=<main>: a still figure, nothing shown."""
    names, main_value = PAGES[slug]
    main, rest = names[0], names[1:]
    plain = _open(slug, **{main: main_value})
    at = _open(slug, **{main: main_value, "hide": ",".join(rest)})
    assert notices(at) == []
    for name in rest:
        assert _widgets(at, slug, name) == [], name
    assert all(not w.disabled for w in _widgets(at, slug, main))
    assert metrics(at) == metrics(plain)
    assert at.query_params["hide"] == ",".join(rest)
    assert "not shown" in _note(at)

    still = _open(slug, **{main: main_value, "hide": ",".join(names), "lock": main})
    assert notices(still) == []
    for name in names:
        assert _widgets(still, slug, name) == [], name
    assert metrics(still) == metrics(plain)


@pytest.mark.parametrize("slug", ["tilt", "groups", "loop"])
def test_hiding_the_main_control_alone_needs_something_left_to_move(slug):
    """Hidden with every other control hidden or locked, the main control stays shown (and
    movable) with a notice; hidden while another control moves, it is gone."""
    names, main_value = PAGES[slug]
    main, rest = names[0], names[1:]
    at = _open(slug, **{main: main_value, "hide": main, "lock": ",".join(rest)})
    assert len(notices(at)) == 1 and f"`hide={main}`" in notices(at)[0]
    assert "add it to `lock` too" in notices(at)[0]
    shown = _widgets(at, slug, main)
    assert shown and not any(w.disabled for w in shown)
    # it still moves, and stays where it was moved
    was = _value(at, slug, main)
    _move(at, slug, main)
    assert _value(at, slug, main) == MOVES[slug] != was
    assert at.query_params[main] != main_value

    free = _open(slug, **{main: main_value, "hide": main})
    assert notices(free) == [] and _widgets(free, slug, main) == []


@pytest.mark.parametrize(
    "raw, shown", [("k@ppa", "`hide=k@ppa`"), ("present", "`hide=present`"), ("x" * 40, "`hide`")]
)
def test_a_malformed_name_gets_a_notice_and_is_ignored(raw, shown):
    at = _open("tilt", hide=raw, kappa="20")
    assert notices(at) == [
        f"**Part of this link could not be used.**\n\n- {shown}: not a "
        f"control of this page (its controls: kappa, model, axis); ignored."
    ]
    assert "hide" not in at.query_params
    assert _widgets(at, "tilt", "kappa") and not [
        c for c in at.caption if "The lecturer" in str(c.value)
    ]


def test_names_are_read_case_blind_and_beta_names_kappa():
    at = _open("tilt", kappa="20", lock=" BETA , Model")
    assert notices(at) == []
    assert all(w.disabled for n in ("kappa", "model") for w in _widgets(at, "tilt", n))
    assert _note(at) == ":material/lock: The lecturer fixed κ and the model for this view."
    # pass-at-k's β is linked as beta, and kappa names it too
    at = _open("pass-at-k", lock="kappa")
    assert notices(at) == [] and all(w.disabled for w in _widgets(at, "pass-at-k", "beta"))


def test_the_note_names_what_is_fixed_and_what_is_hidden():
    at = _open("bandit", lock="lr,baseline", hide="seed")  # named in the page's order
    assert _note(at) == (
        ":material/lock: The lecturer fixed “Baseline” and “Learning rate” "
        "for this view and set “Seed”, which is not shown."
    )
    at = _open("groups", hide="k")
    assert _note(at) == (
        ":material/lock: The lecturer set “Group size k” for this view; it is not shown."
    )
    # the buttons that would move a fixed seed cannot
    at = _open("bandit", lock="seed")
    assert at.button[[b.label for b in at.button].index("New runs")].disabled


def _value(at, slug: str, name: str):
    return at.session_state[f"{slug}.{name}"]


# Another stop of each page's main control, for a move.
MOVES = {"tilt": 30.0, "groups": 0.5, "loop": 201}  # loop's stops are every third step


def _move(at, slug: str, name: str):
    """Move control ``name`` to another stop, as a reader's drag would, and run."""
    at.session_state[f"{slug}.{name}"] = MOVES[slug]
    return at.run()


@pytest.mark.parametrize(
    "slug, name, value",
    [("tilt", "kappa", 20.0), ("groups", "p", 0.3), ("groups", "k", 8), ("loop", "shared", True)],
)
def test_reset_returns_every_control_to_the_link(slug, name, value):
    """Move controls, press Reset: every control holds the link's value again."""
    names, main_value = PAGES[slug]
    at = _open(slug, **{names[0]: main_value})
    before = {n: at.session_state[f"{slug}.{n}"] for n in names if n not in GROUPS}
    assert before[name] == value
    other = {
        "tilt": {"kappa": 30.0, "axis": "sqrt"},
        "groups": {"p": 0.5, "k": 12},
        "loop": {"shared": False, "step": 201, "estimator": "rloo"},
    }[slug]
    for n, v in other.items():
        at.session_state[f"{slug}.{n}"] = v
    at.run()
    assert {n: at.session_state[f"{slug}.{n}"] for n in other} == other
    at.button(key="reset").click().run()
    assert not at.exception
    assert {n: at.session_state[f"{slug}.{n}"] for n in before} == before
    assert at.query_params[names[0]] == main_value


def test_a_locked_control_stays_at_the_link_whatever_moves_it():
    """A model's preset sets κ (tilt_figures.preset_chosen), New runs sets the seed: a locked
    κ or seed stays at the link's value."""
    at = _open("tilt", kappa="20", lock="kappa")
    at.selectbox(key="tilt.model").set_value(at.selectbox(key="tilt.model").options[1]).run()
    assert not at.exception
    assert at.session_state["tilt.kappa"] == 20.0 and at.query_params["kappa"] == "20"


def test_exercises_takes_no_preset():
    at = _open("exercises", lock="kappa")
    assert notices(at) == [
        "**Part of this link could not be used.**\n\n- `lock=kappa`: this "
        "page has no controls; ignored."
    ]
    assert [b for b in at.button if b.key == "reset"] == []


# --------------------------------------------------------------------------- the builder
def _builder(slug: str, **params: str):
    at = _open(slug, **params)
    at.session_state[f"klrl-{slug}-prepare"] = True
    return at.run()


def _link(at) -> str:
    codes = [c.value for c in at.code]
    return codes[-1]


@pytest.mark.parametrize(
    "slug, lock, hide",
    [
        ("tilt", ("kappa", "model"), ("axis",)),
        ("groups", ("k",), ()),
        ("bandit", ("lr",), ("seed", "baseline")),
        ("pass-at-k", ("beta",), ("problems", "samples")),
        ("entropy", ("preset",), ("steps",)),
    ],
)
def test_the_builders_link_round_trips(slug, lock, hide):
    """Tick Lock and Hide in "Prepare a link": opening the link it shows gives the same
    numbers, the same locks and the same hidden controls, and keeps the preset."""
    names, main_value = PAGES[slug]
    at = _builder(slug, **{names[0]: main_value})
    listed = [c.key for c in at.checkbox if c.key.startswith(f"prepare.{slug}.lock.")]
    assert listed == [f"prepare.{slug}.lock.{n}" for n in _ordered(_open(slug, lock="zz"), names)]
    for n in lock:
        at.checkbox(key=f"prepare.{slug}.lock.{n}").check()
    for n in hide:
        at.checkbox(key=f"prepare.{slug}.hide.{n}").check()
    at.run()
    link = _link(at)
    query = dict(parse_qsl(urlsplit(link).query))
    assert query.get("lock", "") == ",".join(n for n in names if n in lock) or not lock
    opened = _open(slug, **query)
    assert notices(opened) == []
    assert metrics(opened) == metrics(at)
    for n in names:
        shown = _widgets(opened, slug, n)
        if n in hide:
            assert shown == [], n
        elif n in lock:
            assert all(w.disabled for w in shown), n
        else:
            assert not any(w.disabled for w in shown), n
    assert {k: v for k, v in opened.query_params.items()} == query
    # the builder of the opened link starts from its ticks
    again = _builder(slug, **query)
    assert _link(again) == link


def test_the_builder_locks_a_hidden_main_control_with_nothing_left_to_move():
    at = _builder("groups")
    at.checkbox(key="prepare.groups.hide.p").check()
    at.checkbox(key="prepare.groups.lock.k").check()
    at.run()
    query = dict(parse_qsl(urlsplit(_link(at)).query))
    assert query["hide"] == "p" and query["lock"] == "p,k"
    assert any("still figure" in str(c.value) for c in at.caption)
    opened = _open("groups", **query)
    assert notices(opened) == [] and _widgets(opened, "groups", "p") == []


def test_the_builders_qr_code_is_the_links():
    """The PNG shown holds, module by module, segno's symbol of the link shown (read back
    from the image's pixels), black on white with a four-module quiet zone."""
    import io

    import numpy as np
    import segno
    from PIL import Image

    at = _builder("tilt", kappa="20", lock="kappa")
    link = _link(at)
    images = at.get("image")
    assert len(images) == 1
    img = images[0].proto.imgs[0]
    assert img.alt.startswith("QR code of the link above")
    from klrl_app import presets

    pixels = np.asarray(Image.open(io.BytesIO(presets.qr_png(link))).convert("L"))
    symbol = np.array(segno.make(link, error="m").matrix, dtype=bool)
    n, scale, border = symbol.shape[0], 6, 4
    assert pixels.shape == ((n + 2 * border) * scale,) * 2
    # the centre pixel of every module: dark where the symbol is dark
    centres = pixels[(border * scale + scale // 2) :: scale, (border * scale + scale // 2) :: scale]
    np.testing.assert_array_equal(centres[:n, :n] < 128, symbol)
    assert (pixels[: border * scale] == 255).all()  # the quiet zone is white


def test_the_builder_is_not_in_the_presentation_view():
    at = _open("tilt", present="1")
    assert not [e for e in at.expander if e.key == "klrl-tilt-prepare"]
    assert at.button(key="reset")


def test_more_settings_is_left_out_when_the_link_hides_all_it_holds():
    def popovers(at) -> list[str]:
        return [p.proto.popover.label for p in at.get("popover")]

    assert "More settings" in popovers(_open("kl-penalty"))
    assert "More settings" in popovers(_open("kl-penalty", hide="steps"))
    assert "More settings" not in popovers(_open("kl-penalty", hide="steps,seed"))
    # tilt's model button: only the axis when the model is hidden; nothing when both are
    assert [p for p in popovers(_open("tilt", hide="model")) if "axis" in p] == ["Frontier's axis"]
    assert not [
        p for p in popovers(_open("tilt", hide="model,axis")) if "Model" in p or "axis" in p
    ]
