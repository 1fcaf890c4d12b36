"""A response the reference never writes gets nothing, and does not cost the others precision
(the tilt measures rewards from the top reward pi0 can write)."""

import numpy as np
import pytest

from klrl_core import tilt


@pytest.mark.parametrize("gap", [8.0, 1e3, 2e6])
@pytest.mark.parametrize("kappa", [1.0, 100.0, 10_000.0])
def test_a_zero_probability_response_changes_nothing(gap, kappa):
    pi0 = np.array([0.7, 0.2, 0.1])
    r = np.array([0.0, 1.0, 2.0])
    with np.errstate(divide="ignore"):
        with_zero = tilt.tilt(np.log(np.append(pi0, 0.0)), np.append(r, r.max() + gap), kappa)
    without = tilt.tilt(np.log(pi0), r, kappa)
    assert with_zero.pi[-1] == 0.0
    np.testing.assert_allclose(with_zero.pi[:-1], without.pi, rtol=1e-13, atol=1e-300)
    assert with_zero.kl == pytest.approx(float(without.kl), rel=1e-12, abs=1e-15)
    assert with_zero.log_z == pytest.approx(float(without.log_z), rel=1e-14)
    # and by hand at kappa = 1: Z = 0.7 + 0.2 e + 0.1 e^2
    if kappa == 1.0:
        assert with_zero.log_z == pytest.approx(np.log(0.7 + 0.2 * np.e + 0.1 * np.e**2), rel=1e-14)
