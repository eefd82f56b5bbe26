"""The crown graph S_n (K_{n,n} minus a perfect matching): exactly 2**n - 2 maximal
bicliques, for every engine; and counts above 2**32 (S_33: 8,589,934,590) kept exactly on
the whole count path (runner row, rows, tables, agreement), where a 32-bit truncation
would show.  The GPU check of S_33 itself, on 1 and 2 GPUs: benchmarks/multi-gpu/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from rowfactory import cumbe, imbea, parmbe

from baselines import imbea as imbea_engine
from baselines import parmbe as parmbe_engine
from mbebench import runner
from mbebench.csr import write_csr
from mbebench.oracle import count_and_fingerprint
from mbebench.report import write_tables
from mbebench.rows import load_rows

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import standins  # noqa: E402

S33 = 2**33 - 2


def test_crown_graph():
    for n in range(2, 10):
        g = standins.crown(n)
        assert (g.n_left, g.n_right, g.n_edges) == (n, n, n * (n - 1))
        left, right = g.edges()
        assert not np.any(left == right)
        assert np.all(np.diff(g.left_offsets) == n - 1)
        assert np.all(np.diff(g.right_offsets) == n - 1)
        assert count_and_fingerprint(g)[0] == standins.crown_bicliques(n) == 2**n - 2
    assert standins.crown_bicliques(33) == S33 > 2**32
    with pytest.raises(ValueError, match="n >= 2"):
        standins.crown(1)


def test_a_crown_union_is_disjoint_crowns():
    for n, copies in ((2, 1), (3, 4), (5, 3)):
        g = standins.crown_union(n, copies)
        assert (g.n_left, g.n_right, g.n_edges) == (n * copies, n * copies, copies * n * (n - 1))
        left, right = g.edges()
        assert np.all(left // n == right // n) and not np.any(left == right)
        assert count_and_fingerprint(g)[0] == copies * standins.crown_bicliques(n)
    with pytest.raises(ValueError, match="one copy"):
        standins.crown_union(4, 0)
    # crowns of different sizes, one after another on both sides
    sizes = [5, 2, 4]
    g = standins.crowns(sizes)
    left, right = g.edges()
    first = np.repeat(np.cumsum([0] + sizes[:-1]), sizes)  # each vertex's crown's first id
    assert g.n_edges == sum(n * (n - 1) for n in sizes)
    assert np.all(first[left] == first[right]) and not np.any(left == right)
    assert count_and_fingerprint(g)[0] == sum(standins.crown_bicliques(n) for n in sizes)
    with pytest.raises(ValueError, match="n >= 2"):
        standins.crowns([3, 1])


@pytest.mark.slow  # crown graphs up to S_16 through both CPU engines and a pool
def test_cpu_engines_count_the_crown_graph():
    for n in (6, 9, 13):
        g = standins.crown(n)
        want = count_and_fingerprint(g) if n <= 9 else None
        got = [imbea_engine.run(g), parmbe_engine.run_serial(g, processes=3)]
        for shard in ("0/2", "1/2"):  # the first task holds half the bicliques
            got.append(imbea_engine.run(g, shard=shard))
        assert [r.count for r in got[:2]] == [2**n - 2] * 2, n
        assert got[2].count + got[3].count == 2**n - 2
        if want:
            assert (got[0].count, got[0].fingerprint) == want
            assert (got[1].count, got[1].fingerprint) == want
    with parmbe_engine.ParMBEPool(2) as pool:
        r = parmbe_engine.run(standins.crown(16), pool=pool)
    assert r.count == 2**16 - 2


CUMBE_CHILD = textwrap.dedent("""
    import json
    import standins
    from cumbe.engine import run
    from mbebench.oracle import count_and_fingerprint
    out = []
    for n, variant in ((5, "cuMBE"), (7, "cuMBE"), (6, "noRS"), (6, "noWS")):
        g = standins.crown(n)
        r = run(g, variant=variant, threads=64, blocks=1, k=3)
        out.append([n, variant, r.count, r.fingerprint, list(count_and_fingerprint(g))])
    print(json.dumps(out))
""")


@pytest.mark.cudasim
def test_cumbe_simulator_counts_the_crown_graph():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["NUMBA_ENABLE_CUDASIM"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "benchmarks"),
                                         env.get("PYTHONPATH", "")])
    p = subprocess.run([sys.executable, "-c", CUMBE_CHILD], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    for n, variant, count, fp, want in json.loads(p.stdout.strip().splitlines()[-1]):
        assert count == 2**n - 2 and [count, fp] == want, (n, variant)


# --- counts above 2**32 on the count path ---------------------------------------------


def test_a_count_above_2_32_survives_the_row(tmp_path):
    path = tmp_path / "s.csr"
    write_csr(standins.crown(4), path)
    env = {"PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests"),
                                          os.environ.get("PYTHONPATH", "")])}
    row = runner.run(dataset="S33", run_id="x", engine="fake_engines:crown_count", graph=path,
                     params={}, repeats=2, timeout_s=120, env=env)
    assert row["status"] == "ok", row
    assert row["count"] == S33 and row["fingerprint"] == "0xffffffffffffffff"
    out = tmp_path / "x.json"
    out.write_text(json.dumps(row))
    (back,) = load_rows([out])
    assert back["count"] == S33 and type(back["count"]) is int


@pytest.mark.parametrize("big", [S33, 2**53 + 1, 2**63 - 5])
def test_tables_keep_counts_above_2_32_and_see_a_truncated_one(tmp_path, big):
    g = {"n_left": 33, "n_right": 33, "n_edges": 33 * 32}
    fp = "0x00000000000000aa"
    rows = [imbea("S33", algo_s=[100.0], count=big, fingerprint=fp, graph=g),
            cumbe("S33", "cuMBE", algo_s=[10.0], count=big, fingerprint=fp, graph=g)]
    write_tables(rows, ["S33"], tmp_path)
    for name in ("summary.csv", "speedup.csv"):
        assert str(big) in (tmp_path / name).read_text(), name
    md = (tmp_path / "summary.md").read_text()
    assert (str(big) in md or f"{big:,}" in md) and "MISMATCH" not in md
    # a count that lost its bit 32 somewhere is a mismatch, not an equal count
    rows.append(parmbe("S33", 16, algo_s=[5.0], count=big - 2**32, fingerprint=fp, graph=g))
    write_tables(rows, ["S33"], tmp_path / "t")
    assert "MISMATCH" in (tmp_path / "t" / "summary.md").read_text()
