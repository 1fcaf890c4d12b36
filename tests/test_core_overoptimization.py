"""klrl_core.overoptimization: where the true reward turns along a path (Figure 12.5)."""

import itertools

import pytest

from klrl_core import overoptimization


def test_turn_by_hand():
    t = overoptimization.turn([0.1, 0.3, 0.2], [0.0, 0.5, 0.7])
    assert t.peak == 1 and t.best == 0.3 and abs(t.drop - 0.1) < 1e-15 and t.proxy_rose
    # r* only falls: the peak is the start, the proxy rose from 0.5 to 0.6
    assert overoptimization.turn([0.4, 0.3, 0.1], [0.5, 0.2, 0.6]) == (0, 0.4, 0.4 - 0.1, True)
    # r* still rising at the end: no drop; the proxy below its start did not rise
    assert overoptimization.turn([0.0, 0.2, 0.5], [0.3, 0.4, 0.2]) == (2, 0.5, 0.0, False)
    assert overoptimization.turn([0.7], [0.2]) == (0, 0.7, 0.0, False)     # one step: pi0


def test_turn_by_enumeration():
    """Every path of up to four steps with rewards in {0, 1, 2}, against the definition read
    step by step (the first step with the largest r*; the proxy rose past both values)."""
    for n in range(1, 5):
        for true in itertools.product((0, 1, 2), repeat=n):
            for proxy in itertools.product((0, 1, 2), repeat=n):
                peak = next(i for i in range(n) if all(true[i] >= x for x in true))
                rose = proxy[-1] > proxy[peak] and proxy[-1] > proxy[0]
                assert overoptimization.turn(true, proxy) == (
                    peak, true[peak], true[peak] - true[-1], rose), (true, proxy)


@pytest.mark.parametrize("true, proxy", [([], []), ([1.0, 2.0], [1.0]), ([[1.0]], [[1.0]]),
                                         ([1.0, float("nan")], [0.0, 1.0])])
def test_turn_refuses_what_is_not_a_path(true, proxy):
    with pytest.raises(ValueError):
        overoptimization.turn(true, proxy)
