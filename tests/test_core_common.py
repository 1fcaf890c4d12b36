"""klrl_core._common: the one integer check and the one logistic function the core modules share."""

import math
import warnings

import numpy as np
import pytest

from klrl_core._common import check_beta, check_int, sigmoid


@pytest.mark.parametrize("x", [0, 3, 10, np.int64(7), np.uint32(10), np.int8(0)])
def test_whole_numbers_in_range_pass_as_python_ints(x):
    out = check_int(x, "n", 0, 10)
    assert out == int(x) and type(out) is int


@pytest.mark.parametrize("x", [-1, 11, 3.0, np.float64(2.0), True, False, "3", None, math.nan])
def test_anything_else_is_refused_with_the_name_and_the_range(x):
    with pytest.raises(ValueError, match=r"^n must be a whole number from 0 to 10, got "):
        check_int(x, "n", 0, 10)


def test_no_upper_bound_and_thousands_separators():
    assert check_int(10**30, "seed", 0) == 10**30
    with pytest.raises(ValueError, match=r"^seed must be a whole number of at least 0, got -1$"):
        check_int(-1, "seed", 0)
    with pytest.raises(ValueError, match=r"from 1 to 1,024, got 1025$"):
        check_int(1025, "N", 1, 1024)
    assert check_int(1024, "N", 1, 1024) == 1024 and check_int(1, "N", 1, 1024) == 1


def test_check_beta_takes_positive_numbers_and_inf():
    out = check_beta([0.05, 1, math.inf])
    assert out.dtype == float and out.tolist() == [0.05, 1.0, math.inf]
    assert check_beta(2).shape == () and float(check_beta(2)) == 2.0
    for bad in (0.0, -1.0, math.nan, [1.0, 0.0], [math.nan, 2.0]):
        with pytest.raises(ValueError, match=r"^beta must be a positive number"):
            check_beta(bad)


def test_sigmoid_hand_values():
    # sigma(0) = 1/2, sigma(log 3) = 3/4, sigma(-log 3) = 1/4, sigma(x) + sigma(-x) = 1
    assert sigmoid(np.float64(0.0)) == 0.5
    assert sigmoid(np.log([3.0, 1 / 3])) == pytest.approx([0.75, 0.25], rel=1e-15)
    x = np.linspace(-30, 30, 61)
    np.testing.assert_allclose(sigmoid(x) + sigmoid(-x), 1.0, rtol=1e-15)
    np.testing.assert_allclose(sigmoid(x), [1 / (1 + math.exp(-v)) for v in x], rtol=1e-14)


def test_sigmoid_far_tails_keep_their_digits_and_stay_quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = sigmoid(np.array([-1000.0, -40.0, 40.0, 1000.0, np.nan]))
    assert out[0] == 0.0 and out[3] == 1.0 and out[2] == 1.0
    assert out[1] == pytest.approx(math.exp(-40) / (1 + math.exp(-40)), rel=1e-15)  # 4.2e-18
    assert math.isnan(out[4])
