"""The multi-GPU benchmark's report (benchmarks/multi-gpu/bench.py): ``results.md``, one line
per graph (1 and 2 GPUs, the ratio against the issue's target, rates, busy time per GPU, the
ParMBE comparison, whether the counts agree), and the checks."""

from __future__ import annotations

import json
from pathlib import Path

TARGET = 0.55  # 2-GPU time / 1-GPU time, on graphs where one GPU takes >= MIN_T1_S
MIN_T1_S = 10.0


def _cell(x, f="{:.2f}") -> str:
    return "–" if x is None else f.format(x)


def report(res, out: Path, a) -> int:
    """results.md: one line per graph; and the checks, printed last."""
    rows = [r for r in res.rows if r.get("kind") not in ("meta", "error")]
    pm_rows = []
    if (out / "parmbe.jsonl").is_file():
        pm_rows = [json.loads(x) for x in (out / "parmbe.jsonl").read_text().splitlines() if x]
    names = list(dict.fromkeys(r["graph"] for r in rows))
    meta = next(r for r in res.rows if r.get("kind") == "meta")
    lines = [
        f"cuMBE, 1 GPU (devices=[0] or [1], one kernel) and 2 GPUs (devices=all, "
        f"{a.spd} shards per device from one queue); time = wall time of the whole computation "
        "from the moment the devices were ready; commit " + str(meta.get("commit")) +
        (" — TINY dry run in the CUDA simulator: times mean nothing" if a.tiny else ""), "",
        "| graph | \\|E\\| | maximal bicliques | 1 GPU s | 2 GPUs s | 2 GPUs / 1 GPU | "
        f"target <= {TARGET} | bicliques/s 1 GPU | bicliques/s 2 GPUs | busy s per GPU (2 GPUs) "
        f"| ParMBE {min(a.parmbe, 2) if a.tiny else a.parmbe} s | counts equal |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---|---:|---|"]
    problems = []
    for name in names:
        rs = [r for r in rows if r["graph"] == name]
        ok = [r for r in rs if r.get("status") == "ok"]
        r1 = next((r for r in ok if r["n_devices"] == 1), None)
        multi = [r for r in ok if r["n_devices"] >= 2]
        main2 = [r for r in multi if r["shards"] == a.spd * r["n_devices"]] or multi[:1]
        pmr = next((r for r in pm_rows if r["graph"] == name), None)
        seen = {(r["bicliques"], r["fingerprint"]) for r in ok}
        if pmr and pmr.get("status") == "ok":
            seen.add((pmr["bicliques"], pmr["fingerprint"]))
        exp = next((r.get("expected") for r in rs if r.get("expected")), None)
        equal = len(seen) == 1 and (exp is None or next(iter(seen))[0] == exp)
        if len(seen) > 1 or (exp is not None and seen and not equal):
            problems.append(f"{name}: counts differ: {sorted(seen)} (expected {exp})")
        count = next(iter(seen))[0] if len(seen) == 1 else (
            " / ".join(str(s[0]) for s in sorted(seen)) or "–")
        pmc = (_cell(pmr["time_s"]) if pmr and pmr["status"] == "ok" else
               (f"{pmr['status']} ({pmr.get('message', '')})" if pmr else "–"))
        n_e = (r1 or (multi[0] if multi else None) or {}).get("n_edges")

        def cell(r, many):
            if r is not None:
                return _cell(r["time_s"])
            other = [x for x in rs if (x.get("n_devices", 1) >= 2) == many]
            return other[-1].get("status", "–") if other else "–"

        for j, r2 in enumerate(main2 + [r for r in multi if r not in main2] or [None]):
            ratio = r2["time_s"] / r1["time_s"] if r1 and r2 else None
            if ratio is not None and a.tiny:
                verdict = "n/a (simulator)"
            elif ratio is not None and r1["time_s"] >= MIN_T1_S:
                verdict = "PASS" if ratio <= TARGET else "FAIL"
                if verdict == "FAIL" and j == 0:
                    problems.append(f"{name}: 2 GPUs / 1 GPU = {ratio:.3f} > {TARGET}")
            elif ratio is not None:
                verdict = f"(1 GPU < {MIN_T1_S:g} s)"
            else:
                verdict = "–"
            label = name if j == 0 else (
                f"{name}, {r2['shards'] // r2['n_devices']} shards per GPU")
            lines.append(
                f"| {label} | {'–' if n_e is None else f'{n_e:,}'} | "
                f"{count if isinstance(count, str) else f'{count:,}'} | {cell(r1, False)} | "
                f"{cell(r2, True)} | {_cell(ratio, '{:.3f}')} | {verdict} | "
                f"{_cell(r1 and r1['rate_per_s'], '{:.3g}')} | "
                f"{_cell(r2 and r2['rate_per_s'], '{:.3g}')} | "
                f"{' / '.join(f'{v:.2f}' for v in r2['busy_s'].values()) if r2 else '–'} | "
                f"{pmc if j == 0 else ''} | "
                f"{'yes' if equal and seen else ('**NO**' if seen else '–')} |")
    lines += ["", "Checks: " + ("all passed" if not problems else "; ".join(problems))]
    other = [f"{r['graph']} on {r.get('n_devices', '?')} GPU(s): {r['status']}"
             + (f" ({r.get('message')})" if r.get("message") else "")
             for r in rows if r.get("status") not in (None, "ok")]
    other += [f"{r['graph']}: {r['message']}" for r in res.rows if r.get("kind") == "error"]
    if "parmbe" in a.parts.split(",") and a.parmbe and not pm_rows:
        other.append("ParMBE: no result at all (its process failed or never started: bench.log)")
    if other:
        lines += ["", "Not run to the end: " + "; ".join(other)]
    text = "\n".join(lines) + "\n"
    (out / "results.md").write_text(text)
    print(text, flush=True)
    return len(problems)
