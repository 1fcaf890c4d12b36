"""The browser tests' and benchmarks' own arithmetic (tests/e2e/harness.py), without a browser."""

from tests.e2e import harness


def test_drawn_share_compares_a_plain_sliders_stops_as_numbers():
    # the slider announces "0.50" for the value 0.5; the driver reports the number 0.5
    seen = [["0.5", "0.50"], ["0.55", "0.55"], ["0.6", "0.60"], ["0.6", "0.60"]]
    assert harness.drawn_share(seen, [0.5, 0.6]) == 2 / 3
    assert harness.drawn_share(seen, [0.5, 0.55, 0.6]) == 1.0
    # a rounded text is not the value: 0.205 announced as "0.21" is not the stop 0.21
    assert harness.drawn_share([["0.205", "0.21"]], [0.21]) == 0.0


def test_drawn_share_compares_a_select_sliders_stops_by_their_text():
    seen = [["3", "0.1"], ["4", "0.2"]]  # the value is the stop's index
    assert harness.drawn_share(seen, ["0.1"]) == 0.5
    assert harness.drawn_share([], ["0.1"]) == 0.0
