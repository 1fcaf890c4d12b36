"""klrl_app/fmt.py, the one module that writes the app's numbers (issue 23).

Every expected string below is typed by hand from the rules in the module's docstring, never
computed with the module (or with Python's own formatting)."""

import math

import pytest

from klrl_app import fmt

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    "call, expected",
    [
        # fixed decimals: a true minus sign, no signed zero, thousands separated
        (lambda: fmt.fixed(0), "0.00"),
        (lambda: fmt.fixed(-0.0), "0.00"),
        (lambda: fmt.fixed(-0.0, 3, signed=True), "0.000"),
        (lambda: fmt.fixed(-0.0001), "0.00"),
        (lambda: fmt.fixed(0.0001, signed=True), "0.00"),
        (lambda: fmt.fixed(-0.381), "−0.38"),
        (lambda: fmt.fixed(2.6458, signed=True), "+2.65"),
        (lambda: fmt.fixed(-2.6458, signed=True), "−2.65"),
        (lambda: fmt.fixed(0.1371, 4), "0.1371"),
        (lambda: fmt.fixed(9.996, 2), "10.00"),
        (lambda: fmt.fixed(1234.5, 2), "1,234.50"),
        (lambda: fmt.fixed(0.05, 6, trim=True), "0.05"),
        (lambda: fmt.fixed(5.0, 3, trim=True), "5"),
        (lambda: fmt.fixed(NAN), "–"),
        (lambda: fmt.fixed(INF), "∞"),
        (lambda: fmt.fixed(-INF), "−∞"),
        # fixed with a floor on significant figures: never 0.000 for a nonzero value
        (lambda: fmt.fixed(3.2e-5, 3, signed=True, min_sig=1), "+3.2 × 10⁻⁵"),
        (lambda: fmt.fixed(-3.2e-5, 3, signed=True, min_sig=1), "−3.2 × 10⁻⁵"),
        (lambda: fmt.fixed(0.0007, 3, signed=True, min_sig=1), "+0.001"),
        (lambda: fmt.fixed(0.0012, 4, min_sig=2), "0.0012"),
        (lambda: fmt.fixed(0.0005, 4, min_sig=2), "5.0 × 10⁻⁴"),
        (lambda: fmt.fixed(0.0483123, 4, min_sig=3), "0.0483"),
        (lambda: fmt.fixed(0.00483123, 4, min_sig=3), "0.00483"),
        (lambda: fmt.fixed(0.0, 4, min_sig=2), "0.0000"),
        # ... and significant figures, not decimals, for a large value
        (lambda: fmt.fixed(150.237, 4, sig_from=100, digits=3), "150"),
        (lambda: fmt.fixed(99.99996, 4, sig_from=100, digits=3), "100"),  # rounds up to 100
        (lambda: fmt.fixed(99.9, 4, sig_from=100, digits=3), "99.9000"),
        (lambda: fmt.fixed(2500.4, 4, sig_from=1000, digits=4), "2,500"),
        (lambda: fmt.fixed(1.2449e6, 4, sig_from=1000, digits=4), "1.245 × 10⁶"),
        (lambda: fmt.fixed(-15.3, 2, sig_from=10, digits=2), "−15"),
        # significant figures, by the one switching rule
        (lambda: fmt.sig(0), "0"),
        (lambda: fmt.sig(-0.0), "0"),
        (lambda: fmt.sig(0.06204, 2), "0.062"),
        (lambda: fmt.sig(0.1, 2), "0.10"),
        (lambda: fmt.sig(-0.06204, 2), "−0.062"),
        (lambda: fmt.sig(0.06204, 2, signed=True), "+0.062"),
        (lambda: fmt.sig(0.001, 3), "0.00100"),
        (lambda: fmt.sig(0.00099996, 3), "0.00100"),  # rounds up into the plain range
        (lambda: fmt.sig(0.000999, 2), "0.0010"),
        (lambda: fmt.sig(0.00098, 2), "9.8 × 10⁻⁴"),
        (lambda: fmt.sig(172.04, 3), "172"),
        (lambda: fmt.sig(123.4, 2), "123"),  # never rounded left of the units
        (lambda: fmt.sig(99.6, 2), "100"),
        (lambda: fmt.sig(9.996, 3), "10.0"),  # not "9.996" or "10.00"
        (lambda: fmt.sig(999.96, 3), "1,000"),
        (lambda: fmt.sig(4530.4, 3), "4,530"),
        (lambda: fmt.sig(172044.4, 3), "172,044"),
        (lambda: fmt.sig(-4530.4, 3), "−4,530"),
        (lambda: fmt.sig(999999.7, 3), "1.00 × 10⁶"),
        (lambda: fmt.sig(1.7412e-5, 2), "1.7 × 10⁻⁵"),
        (lambda: fmt.sig(-1.7412e-5, 3), "−1.74 × 10⁻⁵"),
        (lambda: fmt.sig(9.9996e-5, 3), "1.00 × 10⁻⁴"),
        (lambda: fmt.sig(1e-300, 3), "1.00 × 10⁻³⁰⁰"),
        (lambda: fmt.sig(1e300, 3), "1.00 × 10³⁰⁰"),
        (lambda: fmt.sig(5e-324, 2), "4.9 × 10⁻³²⁴"),  # the smallest double
        (lambda: fmt.sig(NAN), "–"),
        (lambda: fmt.sig(INF), "∞"),
        (lambda: fmt.sig(-INF), "−∞"),
        # the short form for slider and axis labels
        (lambda: fmt.sig(0.5, 3, trim=True), "0.5"),
        (lambda: fmt.sig(20.0, 3, trim=True), "20"),
        (lambda: fmt.sig(1e-12, 3, trim=True), "10⁻¹²"),
        (lambda: fmt.sig(2e-9, 3, trim=True), "2 × 10⁻⁹"),
        (lambda: fmt.sig(2.5e-9, 3, trim=True), "2.5 × 10⁻⁹"),
        (lambda: fmt.sig(1e-4, 1, trim=True), "10⁻⁴"),
        # always a × 10ⁿ (standard form)
        (lambda: fmt.standard_form(1.7412e-5, 3), "1.74 × 10⁻⁵"),
        (lambda: fmt.standard_form(9.9996e-5, 3), "1.00 × 10⁻⁴"),  # not "10.00 × 10⁻⁵"
        (lambda: fmt.standard_form(9.96e-5, 2), "1.0 × 10⁻⁴"),
        (lambda: fmt.standard_form(0.25, 2), "2.5 × 10⁻¹"),
        (lambda: fmt.standard_form(-120.0, 2), "−1.2 × 10²"),
        (lambda: fmt.standard_form(3e-17, 1), "3 × 10⁻¹⁷"),
        (lambda: fmt.standard_form(0), "0"),
        (lambda: fmt.standard_form(-0.0), "0"),
        (lambda: fmt.standard_form(1e300, 2), "1.0 × 10³⁰⁰"),
        (lambda: fmt.power(-5), "10⁻⁵"),
        (lambda: fmt.power(12), "10¹²"),
        # a power of ten from its log10, for numbers no double holds
        (lambda: fmt.pow10(-400), "1.00 × 10⁻⁴⁰⁰"),
        (lambda: fmt.pow10(400.5), "3.16 × 10⁴⁰⁰"),
        (lambda: fmt.pow10(-3.5), "3.16 × 10⁻⁴"),
        (lambda: fmt.pow10(-2.5), "0.00316"),
        (lambda: fmt.pow10(2), "100"),
        (lambda: fmt.pow10(0), "1.00"),
        (lambda: fmt.pow10(3.5), "3,162"),
        (lambda: fmt.pow10(-1000 / math.log(10)), "5.08 × 10⁻⁴³⁵"),  # e^-1000
        (lambda: fmt.pow10(1000 / math.log(10)), "1.97 × 10⁴³⁴"),  # e^1000
        (lambda: fmt.pow10(-399.99999), "1.00 × 10⁻⁴⁰⁰"),  # mantissa 9.99998 rounds to 10
        (lambda: fmt.pow10(-12, trim=True), "10⁻¹²"),
        (lambda: fmt.pow10(-math.inf), "0"),
        (lambda: fmt.pow10(math.inf), "∞"),
        (lambda: fmt.pow10(NAN), "–"),
        # percentages
        (lambda: fmt.pct(0.4305), "43%"),
        (lambda: fmt.pct(-0.17), "−17%"),
        (lambda: fmt.pct(0.4316, 1), "43.2%"),
        (lambda: fmt.pct(-0.001), "0%"),
        (lambda: fmt.pct(0.125, 1, signed=True), "+12.5%"),
        (lambda: fmt.pct(0.004, max_places=1), "0.4%"),
        (lambda: fmt.pct(1e-5, max_places=1), "< 0.1%"),
        (lambda: fmt.pct(0.0, max_places=1), "0%"),
        (lambda: fmt.pct(0.0, max_places=1, positive=True), "< 0.1%"),  # underflowed share
        (lambda: fmt.pct(-1e-5, max_places=1), "> −0.1%"),
        (lambda: fmt.pct(NAN), "–"),
        # settings and constants as written
        (lambda: fmt.short(2.5), "2.5"),
        (lambda: fmt.short(100.0), "100"),
        (lambda: fmt.short(0.0005), "5 × 10⁻⁴"),  # below 0.001: the switching rule
        (lambda: fmt.short(-0.05), "−0.05"),
        (lambda: fmt.short(1e-5), "10⁻⁵"),
        (lambda: fmt.short(0.0), "0"),
        # probabilities: never 0.000 for p > 0, never 1.000 for p < 1 when asked
        (lambda: fmt.prob(0.4511), "0.451"),
        (lambda: fmt.prob(0.0), "0.000"),
        (lambda: fmt.prob(1.0), "1.000"),
        (lambda: fmt.prob(1.74e-5), "1.7 × 10⁻⁵"),
        (lambda: fmt.prob(0.0003), "3.0 × 10⁻⁴"),
        (lambda: fmt.prob(0.0024, min_sig=2), "0.0024"),
        (lambda: fmt.prob(2.4e-4, min_sig=2), "2.4 × 10⁻⁴"),
        (lambda: fmt.prob(2.06e-9, digits=3), "2.06 × 10⁻⁹"),
        (lambda: fmt.prob(0.0, log10=-400, digits=3), "1.00 × 10⁻⁴⁰⁰"),
        (lambda: fmt.prob(0.0, log10=-math.inf), "0.000"),
        (lambda: fmt.prob(0.99996, 2, max_places=3), "> 0.999"),
        (lambda: fmt.prob(0.9972, 2, max_places=3), "0.997"),
        (lambda: fmt.prob(0.994, 2, max_places=3), "0.99"),
        (lambda: fmt.prob(1.0, 2, max_places=3, below_one=True), "> 0.999"),  # 1 − 2⁻¹⁰²³
        (lambda: fmt.prob(1.0, 2, max_places=3), "1.00"),
        # near 1 by default too: never "1.00" for a p below 1 (issue 31, groups at p 0.37, k 16)
        (lambda: fmt.prob(0.99938, 2), "0.999"),
        (lambda: fmt.prob(0.99938), "0.999"),
        (lambda: fmt.prob(0.99996), "0.99996"),
        (lambda: fmt.prob(1 - 1e-9), "> 0.999999"),
        (lambda: fmt.prob(0.995), "0.995"),
        (lambda: fmt.prob(1.0 - 2.0**-53, below_one=True), "> 0.999999"),
        (lambda: fmt.prob(1.0), "1.000"),
        (lambda: fmt.prob(NAN), "–"),
    ],
)
def test_the_table(call, expected):
    assert call() == expected


@pytest.mark.parametrize(
    "mean, se, places, expected",
    [
        # the standard error to one significant figure, the mean to the same decimal place
        (0.13712, 0.00081, None, "0.1371 ± 0.0008"),  # kl-penalty's k1 at the default
        (0.13712, 0.00096, None, "0.137 ± 0.001"),  # the error rounds up to 0.001
        (0.7321, 0.0057, None, "0.732 ± 0.006"),
        (12.13, 0.24, None, "12.1 ± 0.2"),
        (2.0836, 0.035, None, "2.08 ± 0.04"),
        (1234.5, 37.0, None, "1,230 ± 40"),
        (-0.38112, 0.0149, None, "−0.38 ± 0.01"),
        (-0.00004, 0.0008, None, "0.0000 ± 0.0008"),  # no "−0.0000"
        (0.5, 0.26, None, "0.5 ± 0.3"),
        (3.2e-7, 5e-8, None, "(3.2 ± 0.5) × 10⁻⁷"),
        (1.234e7, 3e4, None, "(1.234 ± 0.003) × 10⁷"),
        (2.0, 0.0, None, "2.000 ± 0"),
        # at most `places` decimals: a finer error is rounded up to that place, never to zero
        (0.7321, 0.0057, 2, "0.73 ± 0.01"),
        (0.7321, 0.0011, 2, "0.73 ± 0.01"),
        (0.7321, 0.04, 2, "0.73 ± 0.04"),
        (0.7321, 0.3, 2, "0.7 ± 0.3"),
    ],
)
def test_mean_and_standard_error(mean, se, places, expected):
    assert fmt.mean_se(mean, se, places=places) == expected


@pytest.mark.parametrize(
    "mean, se, places, expected",
    [
        (0.7321, 0.0057, 2, "0.73"),  # bandit's 4,000 runs: two decimals are supported
        (0.7321, 0.04, 2, "0.73"),
        (0.7321, 0.3, 2, "0.7"),  # a few runs: the second decimal would be noise
        (12.13, 0.24, 1, "12.1"),
        (12.13, 2.4, 1, "12"),
        (1234.5, 37.0, 1, "1,230"),
        (0.9871, NAN, 2, "0.99"),  # one run: no error, the page's precision
        (0.9871, 0.0, 2, "0.99"),
    ],
)
def test_only_the_supported_digits(mean, se, places, expected):
    assert fmt.supported(mean, se, places) == expected


@pytest.mark.parametrize("bad", [-0.1, NAN, INF])
def test_a_standard_error_is_finite_and_not_negative(bad):
    with pytest.raises(ValueError):
        fmt.mean_se(0.5, bad)


def test_digits_are_whole_and_positive():
    for call in (
        lambda: fmt.sig(1.0, 0),
        lambda: fmt.standard_form(1.0, 1.5),
        lambda: fmt.pow10(1.0, 0),
    ):
        with pytest.raises(ValueError):
            call()


# ---- one place for number formats (issue 23, item 1) -----------------------------------------
def test_no_page_formats_a_number_itself():
    """Pages and klrl_app write numbers with klrl_app/fmt.py: no f-string or str.format spec
    such as {x:.2f}, {x:.0%}, {x:.3g} or "{:.3f}" outside fmt.py (plotly's own %{y:.3f} in
    hover texts is plotly.js's, drawn in the browser, and allowed; so is a number written
    into a link, which must read back as typed). A spec of its own writes −0.00 as "-0.00"
    and a minus as a hyphen."""
    import pathlib
    import re

    spec = re.compile(r"(?<![{%])\{[^{}]*:[+,]?\.?\d*[efg%]\}|\{:[^{}]*\}|\{[^{}%]*:[+,]?\.\d+f\}")
    link = re.compile(r"link=|[?&][a-z0-9_]+=")
    root = pathlib.Path(__file__).resolve().parents[1]
    files = sorted(root.glob("pages/*.py")) + sorted(root.glob("klrl_app/**/*.py"))
    found = []
    for path in files:
        if path.name == "fmt.py":
            continue
        lines = path.read_text().splitlines()
        for n, line in enumerate(lines, 1):
            for m in spec.finditer(line):
                if line[max(0, m.start() - 1)] in "%{" or link.search(line + lines[n - 2]):
                    continue
                found.append(f"{path.relative_to(root)}:{n}: {m.group(0)}")
    assert files and found == []


def test_a_small_table_writes_its_decimals_with_fmt(monkeypatch):
    import pandas as pd
    from klrl_app import layout

    shown = {}
    monkeypatch.setattr(layout.st, "table", lambda df, **kw: shown.setdefault("df", df))
    layout.small_table(
        pd.DataFrame({"name": ["a", "b", "c"], "x": [-0.12345, -0.0001, 1234.5]}), {"x": 3}
    )
    assert shown["df"]["x"].tolist() == ["−0.123", "0.000", "1,234.500"]


def test_count_agrees_its_noun_with_the_number():
    assert fmt.count(1, "response") == "1 response"
    assert fmt.count(0, "response") == "0 responses"
    assert fmt.count(1200, "pair") == "1,200 pairs"
    assert fmt.count(2, "entry", "entries") == "2 entries"


def test_apart_adds_decimals_until_two_different_values_differ():
    assert fmt.apart(0.3146, 0.3122, 2) == ("0.315", "0.312")
    assert fmt.apart(0.31221, 0.31221 + 1e-17, 2) == ("0.31", "0.31")  # rounding noise
    assert fmt.apart(0.312210, 0.312211, 2) == ("0.31221", "0.31221")  # capped at +3
    assert fmt.apart(0.45, 0.31, 2) == ("0.45", "0.31")


def test_sig_apart_adds_two_figures_at_a_time_until_two_values_differ():
    assert fmt.sig_apart(0.066420, 0.065999) == ("0.06642", "0.06600")  # alike to 2 figures
    assert fmt.sig_apart(0.31, 0.45) == ("0.31", "0.45")
    assert fmt.sig_apart(0.1234561, 0.1234569) == ("0.123456", "0.123457")  # 6 figures
    assert fmt.sig_apart(0.12345671, 0.12345674) is None  # alike to 6 figures
    # alike to 6 figures though apart to 2 (0.0125 rounds both ways): read alike
    assert fmt.sig_apart(0.0125000001, 0.0124999999) is None
    assert fmt.sig_apart(4.4, 4.6, digits=1, max_digits=3) == ("4", "5")


def test_pct_never_writes_a_share_below_one_as_100_percent():
    assert fmt.pct(0.9965, max_places=1) == "99.7%"
    assert fmt.pct(0.99999, max_places=1) == "> 99.9%"
    assert fmt.pct(1.0, max_places=1) == "100%"
    assert fmt.pct(0.9965) == "100%"  # without max_places: as before


def test_agree_picks_the_form_for_the_count():
    assert fmt.agree(1, "loses", "lose") == "loses"
    assert [fmt.agree(n, "it", "they") for n in (0, 2, 17)] == ["they"] * 3
    assert fmt.agree(1.0, "it", "they") == "it"  # a count held as a float
