"""The catalogue of deliberate breaks (tools/mutations.toml) still applies to the code: a
break whose text is gone would replay nothing and count as not caught."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _mutate():
    spec = importlib.util.spec_from_file_location("mutate_tool", REPO / "tools" / "mutate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # (dataclasses look their module up)
    spec.loader.exec_module(mod)
    return mod


def test_every_break_changes_one_place_and_names_real_tests():
    breaks = _mutate().BREAKS
    assert len(breaks) >= 20 and len({b.name for b in breaks}) == len(breaks)
    for b in breaks:
        text = (REPO / b.path).read_text()
        assert text.count(b.old) == 1, (b.name, b.path)
        assert b.old != b.new and b.why, b.name
        files = [t.split("::")[0] for t in b.tests if t.startswith("tests/")]
        assert files and all((REPO / f).is_file() for f in files), (b.name, b.tests)
