"""Shared helpers for the page tests (streamlit.testing.v1.AppTest)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
BAD_TEXT = re.compile(r"\b(nan|inf|NaN|Infinity)\b|Traceback")


def run_page(file: str, timeout: float = 60, **params: str) -> AppTest:
    """Run one page script as a fresh session opened with the given query parameters."""
    at = AppTest.from_file(str(ROOT / "pages" / file), default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def charts(at: AppTest) -> list[dict]:
    """The figures the page draws (plotly JSON: data and layout), in page order."""
    live = [json.loads(json.loads(c.proto.json)["figure"]) for c in at.get("bidi_component")
            if c.proto.component_name == "klrl_live_chart"]
    return live + [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def notices(at: AppTest) -> list[str]:
    return [w.value for w in at.warning]


def all_text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [m.label + " " + m.value for m in at.metric]
    parts += [c.value for c in at.caption] + [w.value for w in at.warning]
    parts += [e.value for e in at.error] + [i.value for i in at.info]
    return "\n".join(str(p) for p in parts)


def assert_clean(at: AppTest) -> None:
    """No exception element, and no nan/inf/traceback anywhere in the page's text."""
    assert not at.exception, [e.value for e in at.exception]
    found = BAD_TEXT.search(all_text(at))
    assert found is None, f"page shows {found.group(0)!r}"


@pytest.fixture
def page():
    return run_page
