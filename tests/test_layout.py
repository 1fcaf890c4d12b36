"""Shared page furniture that needs no page: CSV text and number formats (issue 10; the
formats themselves are klrl_app/fmt.py, tests/test_fmt.py)."""

import pandas as pd

from klrl_app import fmt, layout
from klrl_app.controls import beta_text, kappa_label, kappa_text


def test_csv_has_no_float_noise_and_keeps_small_values():
    df = pd.DataFrame(
        {"p": [0.1 + 0.1 + 1e-17 * 7, 0.30000000000000004, 1.7412e-05, 2.0], "n": [1, 2, 3, 4]}
    )
    lines = layout.csv_text(df).splitlines()
    assert lines[0] == "p,n"
    assert lines[1:] == ["0.2,1", "0.3,2", "1.7412e-05,3", "2,4"]


def test_kappa_and_beta_are_written_out():
    assert kappa_text(10_000) == "10,000" and kappa_text(2500) == "2,500"
    assert kappa_text(33.333333333333336) == "33.33" and kappa_text(0.1) == "0.1"
    assert beta_text(10_000) == "0.0001" and beta_text(0) == "∞" and beta_text(5) == "0.2"
    assert "e+" not in kappa_label(10_000) and "e-" not in kappa_label(10_000)


def test_readout_numbers_use_a_true_minus_sign():
    assert fmt.fixed(-0.381, 2) == "−0.38" and fmt.fixed(2.6458, signed=True) == "+2.65"
    assert fmt.pct(0.4305) == "43%"
