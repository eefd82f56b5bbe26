"""Several devices on a skewed graph (issue 31 item 2): the device queue puts the costliest
tasks in pieces below the first level (cumbe.prepare.split, spread) and deals them out one to
a shard; a pipeline shard ("i/n") splits the same way.  With 2 and 4 fake devices
(``MBEBENCH_SIM_DEVICES``, numba's simulator) counts and fingerprints must equal the
brute-force oracle's on a union of crowns and a random graph, with pieces below the first
level really run."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.test_cumbe_devices import _child

CHILD = textwrap.dedent("""
    import json
    import numpy as np
    from mbebench.csr import from_edges
    from mbebench.oracle import count_and_fingerprint
    from cumbe.devices import DevicePool

    MASK = (1 << 64) - 1
    P = dict(threads=32, blocks=1, k=2)

    def union(ns):
        l, r, off = [], [], 0
        for n in ns:
            i, j = np.nonzero(~np.eye(n, dtype=bool))
            l.append(i + off)
            r.append(j + off)
            off += n
        return from_edges(np.concatenate(l), np.concatenate(r), off, off)

    if __name__ == "__main__":
        rng = np.random.default_rng(5)
        l, r = np.nonzero(rng.random((7, 8)) < 0.55)
        graphs = {"crowns6-4-3": union([6, 4, 3]), "random": from_edges(l, r, 7, 8)}
        out = []
        with DevicePool("all") as pool:
            for name, g in graphs.items():
                want = list(count_and_fingerprint(g))
                rec = {"graph": name, "want": want, "runs": []}
                for devices in (4, 2):
                    r = pool.run(g, P, devices=devices, shards_per_device=2)
                    rec["runs"].append({"devices": devices, "got": [r.count, r.fingerprint],
                                        "deep": r.stats["deep_pieces"],
                                        "shards": r.stats["shards"]})
                # a pipeline shard of 2, each on 2 devices
                c = f = deep = 0
                for i in range(2):
                    r = pool.run(g, P, devices=2, shards_per_device=2, shard=f"{i}/2")
                    c += r.count
                    f = (f + r.fingerprint) & MASK
                    deep += r.stats["deep_pieces"]
                rec["outer"] = [c, f]
                rec["outer_deep"] = deep
                out.append(rec)
        print(json.dumps(out))
""")


@pytest.mark.cudasim
def test_pieces_below_the_first_level_on_two_and_four_devices(tmp_path):
    (tmp_path / "deep_child.py").write_text(CHILD)
    p = _child([str(tmp_path / "deep_child.py")], {"MBEBENCH_SIM_DEVICES": "4"}, timeout=1200)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out[0]["want"][0] == (2**6 - 2) + (2**4 - 2) + (2**3 - 2)
    for o in out:
        for r in o["runs"]:
            assert r["got"] == o["want"], (o["graph"], r)
            assert r["deep"] > 0, (o["graph"], r)  # pieces below the first level ran
        assert [r["shards"] for r in o["runs"]] == [8, 4]
        assert o["outer"] == o["want"], o["graph"]
        assert o["outer_deep"] > 0
