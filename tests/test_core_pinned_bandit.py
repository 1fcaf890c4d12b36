"""klrl_core.bandit pinned where the other tests left room (issue 15): the standard errors of
final_summary by hand, including a case where sd/n and sd/sqrt(n) cannot agree."""

import math
import statistics

import numpy as np
import pytest

from klrl_core import bandit


def test_standard_error_of_the_mean_by_hand():
    finals = [0.1, 0.6, 0.9, 0.4]
    s = bandit.final_summary(np.array(finals))
    sd = statistics.pstdev(finals)  # population sd, as documented
    assert s["std"] == pytest.approx(sd, rel=1e-14)
    assert s["se_mean"] == pytest.approx(sd / 2.0, rel=1e-14)  # sqrt(4) = 2
    assert s["se_share"] == pytest.approx(math.sqrt(0.5 * 0.5 / 4), rel=1e-14)


@pytest.mark.parametrize("n", [2, 9, 100, 4000])
def test_standard_errors_scale_as_one_over_root_n(n):
    # half the runs end at 0.2, half at 0.8 (n even) or as close as n allows
    finals = np.where(np.arange(n) % 2 == 0, 0.2, 0.8)
    s = bandit.final_summary(finals)
    k = int(np.count_nonzero(finals < 0.5))
    mean = (0.2 * k + 0.8 * (n - k)) / n
    sd = math.sqrt((k * (0.2 - mean) ** 2 + (n - k) * (0.8 - mean) ** 2) / n)
    assert s["mean"] == pytest.approx(mean, rel=1e-13)
    assert s["se_mean"] == pytest.approx(sd / math.sqrt(n), rel=1e-12)
    q = k / n
    assert s["se_share"] == pytest.approx(math.sqrt(q * (1 - q) / n), rel=1e-12)


def test_a_single_run_has_zero_spread():
    s = bandit.final_summary(np.array([[0.2, 0.7]]))
    assert (s["n_runs"], s["mean"], s["std"], s["se_mean"], s["n_below"]) == (1, 0.7, 0.0, 0.0, 0)
