"""Produce the pipeline's result rows without Snakemake, within a time budget.

For a machine where Snakemake is not installed (the lent GPU machine): the same
run plan (mbebench.plan), the same runner and row format as the pipeline's
``run_engine`` rule, on CSR files the pipeline's ``convert`` rule already wrote.
Tables and plots are then made from the rows with ``python -m mbebench tables``
/ ``plots`` as usual.  GPU runs and CPU runs go in two lanes side by side (the
GPU lane needs one host core); runs that would not fit the budget are left out
and listed.

    python benchmarks/run_rows.py --csr-dir results/csr --out rows/ \\
        --config config/config.yaml --config overrides.yaml --cores 16 --budget 450
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

import yaml

from mbebench import export, plan, runner
from mbebench.csr import read_csr


def merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def lane(jobs, args, deadline, log):
    for ds, spec in jobs:
        left = deadline - time.monotonic()
        if left < 5:
            log.append(f"not run (budget): {ds} {spec.run_id}")
            continue
        out = Path(args.out) / "runs" / ds / f"{spec.run_id}.json"
        csr_path = Path(args.csr_dir) / f"{ds}.csr"
        input_path = None
        if spec.input != "csr":  # what the pipeline's export_graph rule writes
            input_path = Path(args.out) / "graphs" / f"{ds}.{spec.input}"
            if not input_path.is_file():
                export.write(read_csr(csr_path), spec.input, input_path)
        t0 = time.monotonic()
        row = runner.run_and_write(
            out,
            dataset=ds,
            run_id=spec.run_id,
            engine=spec.engine,
            graph=csr_path,
            params=spec.params,
            repeats=spec.repeats,
            timeout_s=min(spec.timeout_s, left),
            env=spec.env or None,
            label=spec.label,
            variant=spec.variant,
            timed=spec.timed,
            simulated=spec.simulate,
            entry=spec.entry,
            command=list(spec.command) if spec.command else None,
            input_path=input_path,
        )
        msg = f"{ds} {spec.run_id}: {row['status']} count={row['count']} algo={row['algo_s_median']}"
        print(f"{msg} ({time.monotonic() - t0:.1f} s)", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--csr-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--config", action="append", required=True)
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    ap.add_argument("--budget", type=float, default=450)
    ap.add_argument("--engines", default="", help="comma list: only these engines' runs")
    args = ap.parse_args()
    cfg: dict = {}
    for path in args.config:
        cfg = merge(cfg, yaml.safe_load(Path(path).read_text()))
    datasets = [d for d in plan.selected_datasets(cfg) if (Path(args.csr_dir) / f"{d}.csr").is_file()]
    # small graphs first, so a budget cut loses the fewest datasets
    datasets.sort(key=lambda d: (Path(args.csr_dir) / f"{d}.csr").stat().st_size)
    runs = plan.plan_runs(cfg, args.cores)
    only = {e for e in args.engines.split(",") if e}
    runs = {k: v for k, v in runs.items() if not only or v.engine in only}
    gpu = [(d, s) for d in datasets for s in runs.values() if s.gpu and s.applies_to(d)]
    cpu = [(d, s) for d in datasets for s in runs.values() if not s.gpu and s.applies_to(d)]
    deadline = time.monotonic() + args.budget
    log: list[str] = []
    lanes = [threading.Thread(target=lane, args=(jobs, args, deadline, log)) for jobs in (gpu, cpu)]
    for t in lanes:
        t.start()
    for t in lanes:
        t.join()
    (Path(args.out) / "not_run.json").write_text(json.dumps(log, indent=1))
    print("\n".join(log) or "every planned run finished", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
