"""Every number the app shows, written one way (issue 23).

Pages, tables, captions, alt texts and the layout call these functions; none of them writes
its own rounding, minus sign or power of ten.

Common to all of them

* A true minus sign (U+2212), and never a signed zero: a value that rounds to zero is written
  without a sign ("0.000", not "−0.000").
* No e-notation: a power of ten is written a × 10ⁿ with a superscript exponent.
* nan is written "–" (no value), ±inf as "∞" and "−∞".
* Numbers from 1,000 on that are written as whole numbers have thousands separators.

The one switching rule (``sig``, ``pow10`` and the small-number fall-back of ``fixed``,
``prob``): a number is first rounded to its significant figures, then written

* as a plain decimal when 10⁻³ ≤ |x| < 10³: 0.00123, 0.0620, 4.85, 172;
* as a whole number when 10³ ≤ |x| < 10⁶: 4,530 and 172,044 (every digit to the units, so at
  least the figures asked for, never zeros standing in for dropped digits);
* as a × 10ⁿ otherwise: 1.74 × 10⁻⁵, 2.06 × 10⁻⁹, 4.85 × 10⁸.

Rounding comes first, so a value that rounds up to the next power of ten is written in that
decade: 9.996 to three figures is "10.0", 9.9996 × 10⁻⁵ is "1.00 × 10⁻⁴", 999.96 is "1,000".
A plain or whole number is never rounded to the left of its units digit: 123.4 to two figures
is "123", not "120".

A Monte Carlo mean and its standard error (``mean_se``): the standard error is rounded to one
significant figure and the mean to the same decimal place, so the mean shows exactly the
digits its standard error supports: 0.13712 ± 0.00081 is "0.1371 ± 0.0008".
"""

from __future__ import annotations

import math

MINUS = "\u2212"
NO_VALUE = "–"
PLAIN_FROM = 1e-3  # the switching rule's plain decimals: PLAIN_FROM <= |x| < WHOLE_FROM
WHOLE_FROM = 1e3  # whole numbers with separators: WHOLE_FROM <= |x| < SCI_FROM
SCI_FROM = 1e6  # a × 10ⁿ below PLAIN_FROM and from SCI_FROM on
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
SHARED_POWER_PLACES = 6  # mean_se: more decimals than this and mean and error share a 10ⁿ
_LOG10_FLOAT = 300  # |log10 x| below this: x is an ordinary double


# ----------------------------------------------------------------------------- helpers
def _special(x: float) -> str | None:
    """The text of nan and ±inf, None for a finite number."""
    if math.isnan(x):
        return NO_VALUE
    if math.isinf(x):
        return "∞" if x > 0 else MINUS + "∞"
    return None


def _signed(text: str, negative: bool, signed: bool) -> str:
    """``text`` (unsigned, not zero) with its sign: − when negative, + when asked for."""
    return (MINUS if negative else "+" if signed else "") + text


def _trim(text: str) -> str:
    """Trailing zeros of a decimal dropped, and its point if nothing follows it."""
    return text.rstrip("0").rstrip(".") if "." in text else text


def _mantissa(x: float, digits: int) -> tuple[str, int]:
    """|x| > 0 rounded to ``digits`` significant figures, as (mantissa text, exponent):
    the decimal rounding of Python's e-format, so 9.9996e-5 gives ("1.00", -4)."""
    m, e = f"{abs(x):.{digits - 1}e}".split("e")
    return m, int(e)


def _count_sig(text: str) -> int:
    """Significant digits a fixed-point text shows: "0.0010" shows 2, "0.000" none."""
    return len(text.replace(",", "").replace(".", "").lstrip("0"))


def _check_digits(digits: int) -> None:
    if int(digits) != digits or digits < 1:
        raise ValueError(f"digits must be a whole number >= 1, got {digits!r}")


def power(n: int) -> str:
    """A power of ten: power(-5) is "10⁻⁵"."""
    return "10" + str(int(n)).translate(_SUPERSCRIPT)


def _sci_text(mantissa: str, exponent: int, trim: bool) -> str:
    if trim:
        mantissa = _trim(mantissa)
        if mantissa == "1":
            return power(exponent)
    return f"{mantissa} × {power(exponent)}"


# ----------------------------------------------------------------------------- the forms
def fixed(
    x: float,
    places: int = 2,
    *,
    signed: bool = False,
    min_sig: int = 0,
    sig_from: float | None = None,
    digits: int | None = None,
    trim: bool = False,
) -> str:
    """``x`` to ``places`` decimals: fixed(-0.381) is "−0.38", fixed(2.6458, signed=True)
    "+2.65", fixed(-0.0001) "0.00"; thousands separated (1,234.50).

    ``min_sig``: a nonzero x whose fixed form would show fewer than this many significant
    digits is written with ``digits`` significant figures instead (default max(min_sig, 2)),
    by the switching rule: fixed(3.2e-5, 3, min_sig=1) is "3.2 × 10⁻⁵", never "0.000".
    ``sig_from``: an x this large or larger (in size, after rounding) is written with
    ``digits`` significant figures by the switching rule instead, so a large value carries
    no decimals that mean nothing: fixed(1.245e6, 4, sig_from=1000, digits=4) is
    "1.245 × 10⁶", fixed(150.237, 4, sig_from=100, digits=3) "150".
    ``trim``: trailing zeros dropped (0.050 → "0.05", 5.0 → "5").
    """
    x = float(x)
    special = _special(x)
    if special is not None:
        return special
    text = f"{abs(x):,.{int(places)}f}"
    if sig_from is not None and float(text.replace(",", "")) >= sig_from:
        return sig(x, digits or 3, signed=signed, trim=trim)
    if min_sig and x != 0 and _count_sig(text) < min_sig:
        return sig(x, digits or max(min_sig, 2), signed=signed, trim=trim)
    if _count_sig(text) == 0:
        return _trim(text) if trim else text  # a zero has no sign
    return _signed(_trim(text) if trim else text, x < 0, signed)


def sig(x: float, digits: int = 3, *, signed: bool = False, trim: bool = False) -> str:
    """``x`` to ``digits`` significant figures by the switching rule (module notes):
    sig(0.06204, 2) is "0.062", sig(172.04) "172", sig(4530.4) "4,530", sig(1.7412e-5, 2)
    "1.7 × 10⁻⁵". Trailing zeros are kept ("0.0100") unless ``trim``, which also writes
    1 × 10⁻¹² as "10⁻¹²" (for labels on a log axis or slider)."""
    return _significant(x, digits, signed, trim, switch=True)


def short(x: float) -> str:
    """A setting or constant as it would be written: up to 6 significant figures, trailing
    zeros dropped, by the switching rule (short(2.5) "2.5", short(100.0) "100", short(5e-4)
    "5 × 10⁻⁴", short(1e-5) "10⁻⁵"); fixed(x, places) keeps 0.0005 as it is."""
    return sig(x, 6, trim=True)


def standard_form(x: float, digits: int = 3, *, signed: bool = False, trim: bool = False) -> str:
    """``x`` as a × 10ⁿ (scientific notation) whatever its size, a to ``digits`` significant
    figures: standard_form(1.7412e-5, 3) is "1.74 × 10⁻⁵", standard_form(9.9996e-5)
    "1.00 × 10⁻⁴", standard_form(0) "0"."""
    return _significant(x, digits, signed, trim, switch=False)


def _significant(x: float, digits: int, signed: bool, trim: bool, switch: bool) -> str:
    """sig (``switch``: by the switching rule) and standard_form (always a × 10ⁿ)."""
    _check_digits(digits)
    x = float(x)
    special = _special(x)
    if special is not None:
        return special
    if x == 0:
        return "0"
    m, e = _mantissa(x, digits)
    if switch and PLAIN_FROM <= float(f"{m}e{e}") < WHOLE_FROM:
        text = f"{abs(x):.{max(digits - 1 - e, 0)}f}"
        text = _trim(text) if trim else text
    elif switch and WHOLE_FROM <= float(f"{m}e{e}") < SCI_FROM:
        text = f"{round(abs(x)):,}"
    else:
        text = _sci_text(m, e, trim)
    return _signed(text, x < 0, signed)


def pow10(log10_x: float, digits: int = 3, *, trim: bool = False) -> str:
    """10 to the power ``log10_x``, written as ``sig`` writes numbers, for values no double
    holds: pow10(-400) is "1.00 × 10⁻⁴⁰⁰", pow10(-3.5) "3.16 × 10⁻⁴", pow10(2) "100";
    -inf gives "0". For e^y pass y / ln 10."""
    _check_digits(digits)
    v = float(log10_x)
    if math.isnan(v):
        return NO_VALUE
    if v == -math.inf:
        return "0"
    if v == math.inf:
        return "∞"
    if abs(v) < _LOG10_FLOAT:
        return sig(10.0**v, digits, trim=trim)
    e = math.floor(v)
    m = f"{10.0 ** (v - e):.{digits - 1}f}"
    if float(m) >= 10:  # 9.996 rounds up to 10.0
        e += 1
        m = f"{10.0 ** (v - e):.{digits - 1}f}"
    return _sci_text(m, e, trim)


def pct(
    x: float,
    places: int = 0,
    *,
    signed: bool = False,
    max_places: int | None = None,
    positive: bool = False,
) -> str:
    """A share as a percentage: pct(0.4305) is "43%", pct(-0.17) "−17%".

    ``max_places``: a nonzero share that would read 0% gets decimals, up to this many, and
    below that "< 0.1%" (for max_places=1), so a positive share never reads 0%; likewise a
    share below 1 that would read 100% ("> 99.9%"), so only a sure thing reads 100%.
    ``positive``: the caller knows the share is above 0 even where it underflowed to 0.0
    (0.9¹⁰²⁴ is 10⁻⁴⁷, p¹⁰²⁴ for p = 0.01 is no double), so it too reads "< 0.1%"."""
    x = float(x)
    special = _special(x)
    if special is not None:
        return special
    text = fixed(100 * x, places, signed=signed)
    if max_places is not None and (x != 0 or positive) and _count_sig(text) == 0:
        for p in range(places + 1, max_places + 1):
            text = fixed(100 * x, p, signed=signed)
            if _count_sig(text) > 0:
                return text + "%"
        bound = fixed(10.0**-max_places, max_places)
        return f"> {MINUS}{bound}%" if x < 0 else f"< {bound}%"
    if max_places is not None and x < 1 and text == fixed(100.0, places):
        for p in range(places + 1, max_places + 1):
            text = fixed(100 * x, p)
            if text != fixed(100.0, p):
                return text + "%"
        return f"> {fixed(100 - 10.0**-max_places, max_places)}%"
    return text + "%"


def prob(
    p: float,
    places: int = 3,
    *,
    min_sig: int = 1,
    digits: int | None = None,
    log10: float | None = None,
    max_places: int | None = None,
    below_one: bool = False,
) -> str:
    """A probability: ``places`` decimals, prob(0.4511) is "0.451".

    Near 0: a p > 0 whose fixed form would show fewer than ``min_sig`` significant digits is
    written with ``digits`` significant figures (default max(min_sig, 2)) by the switching
    rule, from ``log10`` (its base-10 log) when given, so a probability too small for a
    double still reads right: prob(1.74e-5) is "1.7 × 10⁻⁵", prob(0, log10=-400, digits=3)
    "1.00 × 10⁻⁴⁰⁰".
    Near 1: a p < 1 that would read 1.000 gets decimals, up to ``max_places`` (by default
    ``places`` + 3), and "> 0.999" (as many nines) when even those round to 1, so only a sure
    thing reads 1 (issue 31: "1.00" beside a readout of 0.999 reads as certain);
    ``below_one``: the caller knows p < 1 even where it rounded to 1.0 in floating point.
    """
    if max_places is None:
        max_places = places + 3
    p = float(p)
    if math.isnan(p):
        return NO_VALUE
    text = fixed(p, places)
    tiny = p != 0 or (log10 is not None and math.isfinite(log10))
    if tiny and _count_sig(text) < min_sig:
        d = digits or max(min_sig, 2)
        return pow10(log10, d) if log10 is not None else sig(p, d)
    if (p < 1 or below_one) and text == fixed(1.0, places):
        for q in range(places + 1, max_places + 1):
            if fixed(p, q) != fixed(1.0, q):
                return fixed(p, q)
        return "> 0." + "9" * max_places
    return text


def apart(x: float, y: float, places: int = 2, max_places: int | None = None) -> tuple[str, str]:
    """Two values that differ, each to the same decimals: ``places``, or more (up to
    ``max_places``, by default ``places`` + 3) until their texts differ, so 0.3125 beside
    0.3100 reads "0.312" against "0.310", not "0.31" twice; equal values (to 10⁻¹² relative)
    keep ``places``."""
    if max_places is None:
        max_places = places + 3
    q = places
    differ = abs(x - y) > 1e-12 * max(1.0, abs(x), abs(y))  # not rounding noise
    while differ and q < max_places and fixed(x, q) == fixed(y, q):
        q += 1
    return fixed(x, q), fixed(y, q)


def sig_apart(x: float, y: float, digits: int = 2, max_digits: int = 6) -> tuple[str, str] | None:
    """Two values that differ, each to the same significant figures: ``digits``, or two more
    at a time up to ``max_digits`` until their texts differ, so 0.066420 beside 0.065999
    reads "0.06642" against "0.06600"; None when they read alike at ``max_digits``."""
    if sig(x, max_digits) == sig(y, max_digits):
        return None
    d = digits
    while d < max_digits and sig(x, d) == sig(y, d):
        d += 2
    return sig(x, d), sig(y, d)


def count(n: int, noun: str, plural: str | None = None) -> str:
    """A whole count with its noun agreeing: count(1, "response") is "1 response",
    count(1200, "pair") "1,200 pairs"; ``plural`` for a noun that does not just add s."""
    n = int(n)
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


# ----------------------------------------------------------------- a mean and its error
def _se_place(se: float) -> int:
    """The decimal place of a standard error rounded to one significant figure: 3 for
    0.0057 (0.006), 2 for 0.0096 (0.01), -1 for 37 (40)."""
    _, e = _mantissa(se, 1)
    return -e


def _check_se(se: float) -> float:
    se = float(se)
    if not (math.isfinite(se) and se >= 0):
        raise ValueError(f"a standard error is a finite number >= 0, got {se!r}")
    return se


def mean_se(mean: float, se: float, *, places: int | None = None) -> str:
    """A Monte Carlo mean with its standard error, showing only the digits the error
    supports: the error to one significant figure, the mean to the same decimal place.
    mean_se(0.13712, 0.00081) is "0.1371 ± 0.0008", mean_se(0.13712, 0.00096)
    "0.137 ± 0.001", mean_se(1234.5, 37) "1,230 ± 40".

    ``places``: at most this many decimals (a readout printed at the chapter's precision);
    an error finer than that is then rounded up to that place, never down to 0:
    mean_se(0.7321, 0.0057, places=2) is "0.73 ± 0.01".
    When the error needs more than six decimals, or the mean or error reaches 10⁶, both share
    one power of ten: "(3.2 ± 0.5) × 10⁻⁷". An error of exactly 0 reads "± 0".
    """
    mean, se = float(mean), _check_se(se)
    special = _special(mean)
    if special is not None:
        return special
    if se == 0:
        return f"{fixed(mean, places) if places is not None else sig(mean, 4)} ± 0"
    d = _se_place(se)
    if places is not None and d > places:
        d = int(places)
        s = math.ceil(se * 10**d - 1e-9) / 10**d  # rounded up to that place
    else:
        s = float(f"{se:.0e}")
    big = max(abs(mean), s)
    if places is None and (d > SHARED_POWER_PLACES or big >= SCI_FROM):
        _, n = _mantissa(big, 1)
        dd = max(d + n, 0)
        return f"({fixed(mean / 10.0**n, dd)} ± {fixed(s / 10.0**n, dd)}) × {power(n)}"
    if d >= 0:
        return f"{fixed(mean, d)} ± {fixed(s, d)}"
    step = 10**-d
    return f"{fixed(round(mean / step) * step, 0)} ± {fixed(round(s / step) * step, 0)}"


def supported(mean: float, se: float, places: int | None = None) -> str:
    """The mean alone, with the digits its standard error supports (the decimal place of the
    error to one significant figure, as in ``mean_se``), at most ``places`` decimals: for a
    readout kept at the chapter's precision that never shows a digit the runs cannot back.
    supported(0.7321, 0.0057, 2) is "0.73"; supported(0.7321, 0.04, 2) "0.73";
    supported(0.7321, 0.3, 2) "0.7". An error of 0 or nan (one run) leaves ``places``."""
    mean = float(mean)
    se = float(se)
    if math.isnan(se) or se == 0:
        return fixed(mean, places) if places is not None else sig(mean, 3)
    se = _check_se(se)
    d = _se_place(se)
    if places is not None:
        d = min(d, int(places))
    if d >= 0:
        return fixed(mean, d)
    step = 10**-d
    return fixed(round(mean / step) * step, 0)


# ----------------------------------------------------------------- words that agree with a count
def agree(n: int, one: str, many: str) -> str:
    """The form of a word (a verb, a pronoun) that agrees with a count, beside ``count``:
    ``one`` when n is 1, ``many`` otherwise; agree(1, "loses", "lose") is "loses",
    agree(0, "it", "they") "they"."""
    return one if int(n) == 1 else many
