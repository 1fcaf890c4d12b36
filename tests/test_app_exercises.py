"""The exercises page (issue 11, point 2) through AppTest: answer boxes, Check, Correct / Not
yet with hints, worked solutions, links to the live pages, and nothing written to the link.

Right answers come from the catalogue and, for one part of each exercise tested, from a
computation by hand in this file (math only, no project code).
"""

import math
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from klrl_app import exercises as cat
from tests.conftest import assert_clean, metrics, notices, run_page

PAGE = "exercises.py"
KL_121 = "12.1 · KL(π* ‖ π₀) in nats"
KL_122 = "12.2 · exact KL(π₂ ‖ π₀) in nats"
ADV_124 = "12.4 · advantage of a correct answer"


def _hand_kl_121() -> float:
    """KL(pi* || pi0) for pi0 = (0.7, 0.2, 0.1), r = (0, 1, 2), beta = 1, by hand."""
    w = [0.7, 0.2 * math.e, 0.1 * math.e**2]
    pi = [x / sum(w) for x in w]
    return sum(p * math.log(p / q) for p, q in zip(pi, [0.7, 0.2, 0.1]))


def _hand_kl_122() -> float:
    """Best of two on a fair coin keeps the reward-1 side with probability 3/4."""
    return 0.25 * math.log(0.25 / 0.5) + 0.75 * math.log(0.75 / 0.5)


def _hand_adv_124() -> float:
    """Three right out of eight: (1 - 3/8) / sqrt(3/8 * 5/8), population standard deviation."""
    return (1 - 3 / 8) / math.sqrt(3 / 8 * 5 / 8)


HAND = {KL_121: _hand_kl_121(), KL_122: _hand_kl_122(), ADV_124: _hand_adv_124()}


def _part(label):
    return next(p for e, p in cat.all_parts() if p.label == label)


def _exercise_id(label):
    return label.split(" · ")[0]


def _box(at, label):
    """The number box labelled ``label``."""
    boxes = [b for b in at.number_input if b.label == label]
    assert len(boxes) == 1, [b.label for b in at.number_input]
    return boxes[0]


def _answer(at, label, value):
    """Type ``value`` into the part's box and press its exercise's Check."""
    _box(at, label).set_value(value)
    at.button(key=f"exercises.{_exercise_id(label)}.check").click()
    return at.run()


def _texts(elements):
    return [str(e.value) for e in elements]


def _answer_texts(part):
    a = part.answer()
    texts = {f"{a:.{part.digits}f}", f"{abs(a):.{part.digits}f}"}
    texts |= {t.rstrip("0").rstrip(".") for t in texts if "." in t}
    return {t for t in texts if t not in {"0", "1"}}


@pytest.fixture(scope="module")
def fresh():
    return run_page(PAGE)


def test_the_page_loads_clean_and_empty(fresh):
    assert_clean(fresh)
    assert fresh.success == [] and fresh.warning == []  # no verdict before any answer
    labels = [b.label for b in fresh.number_input]
    shown = [p.label for e in cat.EXERCISES for p in e.parts]
    # The labels exactly: the browser reads them out as the boxes' names (aria-label), where
    # a markdown escape would be heard; none of them has a star that could start italics.
    assert labels == shown
    assert all(b.value is None for b in fresh.number_input)
    assert all(re.match(r"\d\d\.\d · ", label) for label in labels)
    assert dict(fresh.query_params) == {}


def test_headings_run_h1_h2_h3_without_skipping(fresh):
    md = [str(m.value) for m in fresh.markdown]
    h2 = [m for m in md if m.startswith("<h2 class='klrl-h'>")]
    h3 = [m for m in md if m.startswith("### ")]
    assert [re.sub(r"<[^>]+>", "", m) for m in h2][:1] == ["Chapter 12 · AI Alignment"]
    assert len(h2) == 2 and "Chapter 28" in h2[1]
    assert md.index(h2[0]) < md.index(h3[0])  # an h3 only after its chapter's h2
    assert [m.split(" · ")[0] for m in h3] == [f"### Exercise {e.id}" for e in cat.EXERCISES]
    assert not any(m.lstrip().startswith(("# ", "## ", "#### ")) for m in md)


@pytest.mark.parametrize("label", [KL_121, KL_122, ADV_124])
@pytest.mark.parametrize("source", ["catalogue", "hand"])
def test_a_right_answer_says_correct(label, source):
    part = _part(label)
    value = part.answer() if source == "catalogue" else HAND[label]
    at = _answer(run_page(PAGE), label, value)
    assert_clean(at)
    assert len(at.success) == 1 and at.warning == []
    assert at.success[0].value.startswith("**Correct**")
    assert part.shown().replace("-", "−") in at.success[0].value


@pytest.mark.parametrize(
    "label, wrong, fragment",
    [
        (KL_121, 0.9, None),  # unrecognised: the part's own hint
        (KL_121, _hand_kl_121() / math.log(2), "bits"),  # the KL in bits
        (KL_122, math.log(2) - 0.5, "formula"),  # the formula instead of the exact KL
        (ADV_124, 0.625 / math.sqrt((3 * 0.625**2 + 5 * 0.375**2) / 7), "not 7"),  # divisor 7
        (ADV_124, -_hand_adv_124(), "sign"),
    ],
)
def test_a_wrong_answer_says_not_yet_with_a_hint_that_keeps_the_answer(label, wrong, fragment):
    part = _part(label)
    at = _answer(run_page(PAGE), label, wrong)
    assert_clean(at)
    assert at.success == [] and len(at.warning) == 1
    text = at.warning[0].value
    assert text.startswith("**Not yet.** ") and len(text) > len("**Not yet.** ") + 10
    if fragment:
        assert fragment in text
    else:
        assert text.replace("\\*", "*").endswith(part.hint)
    for answer in _answer_texts(part):
        assert not re.search(rf"(?<![\d.]){re.escape(answer)}(?!\d)", text), (answer, text)


def test_each_box_gets_its_own_verdict_and_others_stay_quiet():
    at = run_page(PAGE)
    _box(at, KL_121).set_value(_hand_kl_121())
    _box(at, "12.1 · expected reward under π*").set_value(0.4)  # pi0's expected reward
    at.button(key="exercises.12.1.check").click()
    at.run()
    assert len(at.success) == 1 and len(at.warning) == 1
    assert "reference policy" in at.warning[0].value
    # Another exercise's Check leaves these verdicts as they were and adds its own.
    _answer(at, ADV_124, _hand_adv_124())
    assert len(at.success) == 2 and len(at.warning) == 1


def test_check_with_every_box_empty_asks_for_a_number():
    at = run_page(PAGE)
    at.button(key="exercises.12.3.check").click()
    at.run()
    assert at.success == [] and at.warning == []
    assert any("Type a number" in i.value for i in at.info)


def test_whole_numbers_get_an_integer_box():
    at = run_page(PAGE)
    label = "28.7 · smallest k at which the base model's pass@k is higher"
    box = _box(at, label)
    assert box.format == "%d" and box.step == 1
    at = _answer(at, label, 5)  # by hand: (1-0.7^5 + 1-0.95^5)/2 = 0.539 > 0.45
    assert len(at.success) == 1
    at = _answer(at, label, 4)  # (1-0.7^4 + 1-0.95^4)/2 = 0.439 < 0.45
    assert at.success == [] and len(at.warning) == 1


def test_worked_solutions_carry_the_core_numbers(fresh):
    texts = [str(m.value) for e in fresh.expander for m in e.markdown]
    joined = "\n".join(texts)
    for number in (
        "1.9826",
        "(0.353, 0.274, 0.373)",
        "1.020",
        "0.335",  # 12.1
        "(0.25, 0.75)",
        "0.131",
        "0.193",
        "0.685",
        "1.403",
        "3.615",  # 12.2
        "0.0249",
        "0.0124",
        "0.0253",
        "0.0128",  # 12.3
        "1.29",
        "−0.77",
        "0.663",
        "0.038",
    ):  # 12.4
        assert number in joined, number
    for e in cat.EXERCISES:
        body = cat.by_id(e.id).solution().replace("π*", "π\\*")
        assert body in texts, e.id
    assert "-0.77" not in joined and "−0.000" not in joined


def test_solutions_follow_the_core(monkeypatch):
    """A changed klrl_core number reaches the page: nothing is typed in."""
    from klrl_core import groups

    monkeypatch.setattr(groups, "no_signal_probability", lambda p, k: 0.123456)
    at = run_page(PAGE)
    joined = "\n".join(str(m.value) for e in at.expander for m in e.markdown)
    assert "0.123" in joined and "0.663" not in joined


def test_math_stars_are_escaped_but_bold_and_titles_are_not(fresh):
    md = "\n".join(str(m.value) for m in fresh.markdown)
    assert "π\\*" in md and "π* " not in md and "π*(" not in md
    assert "**Weights.**" in md


def test_the_link_of_exercise_12_1_opens_the_tilt_at_its_model(fresh):
    links = [re.search(r"\]\(([^)]*)\)", str(m.value)) for m in fresh.markdown]
    links = [m.group(1) for m in links if m]
    tilt = [u for u in links if urlsplit(u).path == "tilt"]
    assert tilt, links
    q = parse_qs(urlsplit(tilt[0]).query)
    assert q == {"pi0": ["0.7,0.2,0.1"], "r": ["0,1,2"], "beta": ["1"]}
    assert not any(u.startswith(("/", "http")) for u in links)  # relative: any base URL


def test_links_only_to_pages_that_exist(fresh):
    from klrl_app.nav import PAGES

    paths = {p.url_path for p in PAGES}
    links = [re.search(r"\]\(([^)]*)\)", str(m.value)) for m in fresh.markdown]
    for m in filter(None, links):
        assert urlsplit(m.group(1)).path in paths, m.group(1)


def test_nothing_is_written_to_the_link():
    at = run_page(PAGE)
    _box(at, KL_121).set_value(0.335)
    at.button(key="exercises.12.1.check").click()
    at.run()
    assert dict(at.query_params) == {}
    for value in ("0.335", "0.7"):
        assert value not in str(dict(at.query_params))


def test_presentation_view_keeps_the_exercises_and_only_present_in_the_link():
    at = run_page(PAGE, present="1")
    assert_clean(at)
    assert len(at.number_input) > 20
    assert dict(at.query_params) == {"present": "1"}


# --- the links open their page at the exercise's instance --------------------------------------
# Each test follows the link the exercises page draws (its query, as a browser would send it),
# opens the target page with it, and checks the page's readout against numbers computed here.


def _link_line(at, exercise_id):
    """The markdown of the exercise's link line (the link, then its note if any)."""
    title = cat.by_id(exercise_id).link.split("?", 1)[0]
    lines = [
        str(m.value)
        for m in at.markdown
        if re.search(rf"\]\({re.escape(title)}(\?[^)]*)?\)", str(m.value))
    ]
    assert len(lines) == 1, lines
    return lines[0]


def _follow(at, exercise_id):
    """The target page run with the link's query: (page, the link line's text)."""
    line = _link_line(at, exercise_id)
    url = urlsplit(re.search(r"\]\(([^)]*)\)", line).group(1))
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    target = run_page(f"{url.path}.py", **query)
    assert_clean(target)
    assert notices(target) == [], notices(target)  # every parameter was used
    return target, line


def _num(text):
    return float(text.replace("−", "-").split()[0])


def test_link_of_28_6_opens_entropy_at_its_policy_and_advantages(fresh):
    target, line = _follow(fresh, "28.6")
    assert "set to this exercise" in line
    pi, adv = [0.6, 0.3, 0.1], [1.0, 0.0, -1.0]  # the statement's first case
    h = -sum(p * math.log(p) for p in pi)  # 0.898 nats
    mean_l = sum(p * math.log(p) for p in pi)
    mean_a = sum(p * a for p, a in zip(pi, adv))
    cov = sum(p * (math.log(p) - mean_l) * (a - mean_a) for p, a in zip(pi, adv))  # 0.373
    shown = metrics(target)
    assert shown["H(π)"] == f"{h:.3f} nats" == "0.898 nats"
    assert shown["Cov(log π, A)"] == f"+{cov:.3f}" == "+0.373"
    # the page holds the lists as its own (not a preset) and keeps them in its link
    assert target.session_state["entropy.preset"] == "custom"
    assert [_num(v) for v in str(target.query_params["advantages"]).split(",")] == adv
    # and the note's second case, typed as it says, gives the opposite covariance
    assert "−1, 0, 1" in line
    target.text_input(key="entropy.advantages").set_value("−1, 0, 1").run()
    assert metrics(target)["Cov(log π, A)"] == f"−{cov:.3f}"


def test_link_of_28_4_marks_p_002_with_groups_of_four(fresh):
    target, line = _follow(fresh, "28.4")
    rewards = [0.9, 0.2, 0.4, 0.1]
    g = len(rewards)
    b1 = sum(rewards[1:]) / (g - 1)
    ratio = (rewards[0] - sum(rewards) / g) / (rewards[0] - b1)  # part (b): 0.75
    weight = 1 / math.sqrt(0.02 * 0.98)  # part (c): 7.14
    shown = metrics(target)
    assert shown["Mean-centred"] == f"{g - 1}/{g} = {ratio:.3f}" == "3/4 = 0.750"
    arcsin = _num(shown["Arcsin law"])
    assert arcsin == round(ratio * weight, 2) == 5.36
    # part (c)'s weight, as the note says, up to the readout's rounding (half a cent / 0.75)
    assert abs(arcsin / ratio - weight) <= 0.005 / ratio
    assert target.slider(key="normalization.p").value == 0.02
    assert "0.50" in line
    # the other prompt, set as the note says: 1/sqrt(1/4) = 2 times (G - 1)/G
    target.slider(key="normalization.p").set_value(0.5).run()
    assert _num(metrics(target)["Arcsin law"]) == round(ratio * 2.0, 2) == 1.5


def test_link_of_12_4_opens_groups_and_says_how_to_see_its_group(fresh):
    target, line = _follow(fresh, "12.4")
    shown = metrics(target)
    assert shown["All right or all wrong"] == f"{100 * (0.05**8 + 0.95**8):.0f}%" == "66%"
    # The readout's group is the likeliest mixed one, not the exercise's (so the note):
    # C(8,1)·0.05·0.95^7 is larger than C(8,c)·0.05^c·0.95^(8-c) for every c from 2 to 7.
    mixed = {c: math.comb(8, c) * 0.05**c * 0.95 ** (8 - c) for c in range(1, 8)}
    assert max(mixed, key=mixed.get) == 1
    assert shown["Likeliest mixed group"] == "1 of 8 correct"
    # the grades the note names, typed into the calculator, show the exercise's advantages
    grades = re.search(r"type ([01](?:,[01])+) into “Grades of one group”", line).group(1)
    assert grades == "1,1,1,0,0,0,0,0"
    target.text_input(key="groups.calculator").set_value(grades).run()
    assert not target.error
    table = target.table[-1].value.reset_index()
    by_grade = {int(_num(str(r["grade"]))): _num(str(r["÷ std (k)"])) for _, r in table.iterrows()}
    sd = math.sqrt(3 / 8 * 5 / 8)
    assert by_grade == {1: round((1 - 3 / 8) / sd, 2), 0: round(-3 / 8 / sd, 2)}
    assert by_grade == {1: 1.29, 0: -0.77}


def test_link_of_28_5_opens_the_simulation_and_says_it_does_not_set_the_instance(fresh):
    line = _link_line(fresh, "28.5")
    assert "](length-bias)" in line and "set to this exercise" not in line
    assert "does not compute this push" in line


def test_the_reference_line_names_both_chapters_exercises():
    from tests.conftest import all_text

    at = run_page(PAGE)
    assert (
        "Chapter 12 · Exercises 12.1–12.4 · Chapter 28 (a different book) · Exercises 28.1–28.8"
    ) in all_text(at)


def test_every_exercise_links_to_a_page_of_the_app():
    from klrl_app.nav import PAGES

    paths = {p.url_path for p in PAGES}
    assert all(ex.link.split("?", 1)[0] in paths for ex in cat.EXERCISES)
