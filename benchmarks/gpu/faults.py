"""cuMBE's GPU fault paths on a real GPU (run on a GPU machine).

    python3 benchmarks/gpu/faults.py --out results/faults [--csr-dir .csr] [--dataset Marvel]
    python3 benchmarks/gpu/faults.py --simulate --out /tmp/faults   # dry run, no GPU

Nothing in the CUDA layer is patched: memory is really taken, launches really fail.
Checks (docs/reliability.md, "cuMBE on the GPU"):

  baseline         engine on the dataset: count and fingerprint equal reference.json
  oom-engine       a second process (this script, --hog) holds all but ~64 MiB of device
                   memory; engine.run -> DeviceMemoryError naming the file and the bytes
  oom-runner       the same, through the pipeline's command (python -m mbebench run, as
                   workflow/rules/engines.smk calls it) -> `error` row, no count
  oom-tight        the hog leaves the estimate + 4 MiB: the check passes; an allocation
                   (or the launch) fails -> memory/launch error naming the file; if the run
                   fits after all, its count must be right
  launch-runner    cooperative grid of max+1 blocks (test hook MBEBENCH_TEST_UNCLAMPED_GRID=1)
                   through the runner -> `error` row naming grid and driver error, no count
  launch-engine    the same in this process -> LaunchError, no result
  launch-invalid   a tiny kernel through checked_launch with 2048 threads per block -> LaunchError
  kernel-fault     child process: a tiny kernel writes out of bounds -> LaunchError "failed while
                   running ... ILLEGAL_ADDRESS"; a cuMBE run afterwards in that process must
                   not return a wrong count (the context is poisoned; the runner gives every run
                   its own process)
  after-engine     engine again in this process after all the faults: right count
  after-runner     the runner again: `ok` row with the right count

Writes OUT/faults.json and prints a PASS/FAIL table last; exit status 1 on a FAIL.
With --simulate (numba's CUDA simulator, a small built-in graph) only the logic is
exercised: low memory is simulated and the faults that need a GPU are n/a.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

MiB = 2**20
SIM_PARAMS = dict(threads=32)


# numba.cuda, imported only after --simulate has set NUMBA_ENABLE_CUDASIM; a module
# global because the simulator swaps in its fake ``cuda`` through the kernels' globals
cuda = None


def _import_cuda():
    global cuda
    from numba import cuda as _cuda

    cuda = _cuda
    return cuda


def _wild(a):
    i = cuda.threadIdx.x
    a[i + (1 << 40)] = 1  # ~4 TiB past the array: no bounds checks on a GPU


def _touch(x):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < x.size:
        x[i] = 1


def _device_name(cuda) -> str:
    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


# ---------------------------------------------------------------- hog (child process)


def hog(leave: int) -> int:
    """Allocate device memory until about ``leave`` bytes are free, report, hold until stdin closes."""
    import numpy as np

    cuda = _import_cuda()
    ctx = cuda.current_context()
    held, chunk = [], 1 << 30
    while True:
        free, total = ctx.get_memory_info()
        excess = free - leave
        while chunk > 2 * MiB and chunk > excess:
            chunk //= 2
        if excess < 2 * MiB:
            break
        try:
            held.append(cuda.device_array(chunk, dtype=np.uint8))
        except Exception:  # noqa: BLE001 - fragmentation: try smaller pieces
            if chunk <= 2 * MiB:
                break
            chunk //= 2
    free, total = ctx.get_memory_info()
    print(f"READY {free} {total} {len(held)}", flush=True)
    sys.stdin.read()
    return 0


class Hog:
    def __init__(self, leave: int):
        self.proc = subprocess.Popen([sys.executable, __file__, "--hog", str(leave)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().split()
        if not line or line[0] != "READY":
            self.close()
            raise RuntimeError(f"memory hog did not start: {line}")
        self.free, self.total, self.chunks = (int(x) for x in line[1:])

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=20)
        except Exception:  # noqa: BLE001
            self.proc.kill()
            self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---------------------------------------------------------------- kernel fault (child process)


def fault_child(csr_path: str, params: dict, out: str) -> int:
    """A kernel that faults, then a cuMBE run in the same (now poisoned) process."""
    import numpy as np

    cuda = _import_cuda()
    from cumbe import launch as L
    from cumbe.engine import run
    from mbebench.csr import read_csr
    from mbebench.fingerprint import to_hex

    wild = cuda.jit(_wild)
    res: dict = {}
    arr = cuda.to_device(np.zeros(32, dtype=np.int32))
    from mbebench import envvars
    sim = envvars.simulating()
    device = "simulator" if sim else _device_name(cuda)
    try:
        L.checked_launch(wild, 1, 32, (arr,), cuda=cuda, what=csr_path, device=device,
                         events=not sim)
        res["fault"] = {"raised": None}
    except Exception as e:  # noqa: BLE001
        res["fault"] = {"raised": type(e).__name__, "message": str(e)}
    try:
        r = run(read_csr(csr_path), **params)
        res["after"] = {"count": r.count, "fingerprint": to_hex(r.fingerprint)}
    except Exception as e:  # noqa: BLE001
        res["after"] = {"raised": type(e).__name__, "message": str(e)}
    Path(out).write_text(json.dumps(res))
    return 0


# ---------------------------------------------------------------- checks


class Checks:
    def __init__(self, out: Path, info: dict):
        self.out, self.info, self.rows = out, info, []

    def add(self, name, ok, detail, **extra):
        self.rows.append({"check": name, "ok": ok, "detail": detail, **extra})
        tag = {True: "PASS", False: "FAIL", None: "n/a"}[ok]
        print(f"[{tag}] {name}: {detail}", flush=True)
        self.save()

    def save(self):
        self.info["checks"] = self.rows
        (self.out / "faults.json").write_text(json.dumps(self.info, indent=1))

    def table(self):
        print("\n| check | result | detail |\n|---|---|---|")
        for r in self.rows:
            tag = {True: "PASS", False: "FAIL", None: "n/a"}[r["ok"]]
            d = r["detail"] if len(r["detail"]) <= 150 else r["detail"][:147] + "..."
            print(f"| {r['check']} | {tag} | {d} |")


def one_line_naming(msg: str, name: str) -> bool:
    return "\n" not in msg and name.lower() in msg.lower()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="faults-out")
    ap.add_argument("--csr-dir", default=str(REPO / ".csr"))
    ap.add_argument("--dataset", default="Marvel")
    ap.add_argument("--config", default=str(REPO / "config" / "config.yaml"))
    ap.add_argument("--leave-mib", type=int, default=64, help="device memory the hog leaves free")
    ap.add_argument("--simulate", action="store_true", help="dry run in numba's CUDA simulator")
    ap.add_argument("--hog", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--fault-child", nargs=3, metavar=("CSR", "PARAMS", "OUT"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.hog is not None:
        return hog(a.hog)
    if a.fault_child:
        return fault_child(a.fault_child[0], json.loads(a.fault_child[1]), a.fault_child[2])
    if a.simulate:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    warnings.simplefilter("ignore")
    t_start = time.time()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)

    import numba
    import numpy as np

    cuda = _import_cuda()

    from cumbe import launch as L
    from cumbe.engine import run
    from mbebench.csr import from_edges, read_csr, write_csr
    from mbebench.fingerprint import to_hex

    sim = a.simulate
    ds = a.dataset
    # the pipeline's parameters for this run (config/config.yaml via mbebench.plan)
    params = {"variant": "cuMBE", "k": 2, "threads": 512, "blocks": 0, "instrument": False}
    konect = ds
    try:
        import yaml

        from mbebench import plan
        from mbebench.engine import call_params

        cfg = yaml.safe_load(Path(a.config).read_text())
        params = call_params(plan.plan_runs(cfg, 1)["cumbe-cuMBE"].params)
        konect = cfg["datasets"].get(ds, {}).get("konect", ds)
    except Exception as e:  # noqa: BLE001
        print(f"config not read ({type(e).__name__}: {e}); defaults {params}", flush=True)
    refs = json.loads((REPO / "benchmarks" / "gpu" / "reference.json").read_text())
    ref = refs.get(konect) or refs.get(ds)

    tmp = Path(tempfile.mkdtemp(prefix="faults-"))
    if sim:
        from mbebench.oracle import count_and_fingerprint

        rng = np.random.default_rng(7)
        g0 = from_edges(rng.integers(0, 9, 30), rng.integers(0, 7, 30), 9, 7)
        csr_path = tmp / f"{ds}.csr"
        write_csr(g0, csr_path)
        c, fp = count_and_fingerprint(g0)
        ref = {"count": c, "fingerprint": to_hex(fp)}
        params = {**params, **SIM_PARAMS}
    else:
        csr_path = next((p for p in (Path(a.csr_dir) / f"{ds}.csr", Path(a.csr_dir) / f"{konect}.csr")
                         if p.is_file()), Path(a.csr_dir) / f"{ds}.csr")
    graph = read_csr(csr_path)
    name = csr_path.stem  # what every message must name

    if sim:
        dev_name = "simulator"
    else:
        dev_name = _device_name(cuda)
    info = {
        "device": dev_name, "simulated": sim, "dataset": ds, "csr": str(csr_path), "params": params,
        "reference": ref, "numba": numba.__version__, "numpy": np.__version__,
        "python": platform.python_version(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    checks = Checks(out, info)

    def right(count, fp):
        return ref is not None and count == ref["count"] and fp == ref["fingerprint"]

    def engine(**over):
        """(result, None) or (None, exception message); the exception's type in front."""
        try:
            r = run(graph, **{**params, **over})
            return r, None
        except Exception as e:  # noqa: BLE001
            return None, f"{type(e).__name__}: {e}"

    def flush_device_memory():
        # dead arrays of earlier runs, held by numba until its next flush
        gc.collect()
        L.device_memory(cuda)

    # the recipe's PYTHONPATH (carried numpy first), then the repo
    child_env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p] + [str(REPO)])}

    def runner_row(tag, extra_env=None, **over):
        """The pipeline's command for one run (workflow/rules/engines.smk); returns the row."""
        row_path = out / "rows" / ds / f"{tag}.json"
        cmd = [sys.executable, "-m", "mbebench", "run", "--dataset", ds, "--run-id", "cumbe-cuMBE",
               "--graph", str(csr_path), "--out", str(row_path),
               # the simulator's small blocks need tuning knobs the spec does not take: call
               # the function (NUMBA_ENABLE_CUDASIM is already set for --simulate)
               "--engine", "cumbe.engine:run" if sim else "cumbe",
               "--params", json.dumps({**params, **over}), "--repeats", "1", "--timeout", "90"]
        p = subprocess.run(cmd, cwd=REPO, env={**child_env, **(extra_env or {})},
                           capture_output=True, text=True, timeout=150)
        log = [ln for ln in p.stderr.splitlines() if ln.startswith(f"{ds} ")]
        row = json.loads(row_path.read_text()) if row_path.is_file() else {}
        return row, p.returncode, (log[-1] if log else p.stderr.strip()[-300:])

    def error_row_ok(row, rc, must):
        msg = row.get("message") or ""
        return (rc == 0 and row.get("status") == "error" and row.get("count") is None
                and row.get("fingerprint") is None and one_line_naming(msg, name)
                and any(m in msg for m in must))

    def attempt(names, check):
        """Run one check; a crash of the check itself is a FAIL of the rows it owed."""
        try:
            check()
        except Exception as e:  # noqa: BLE001
            done = {r["check"] for r in checks.rows}
            for n in names:
                if n not in done:
                    checks.add(n, False, f"the check crashed: {type(e).__name__}: {e}")

    # ---- baseline (also compiles the kernel) ----
    t = time.time()
    r, err = engine()
    if r is None:
        checks.add("baseline", False, err)
        checks.table()
        return 1
    checks.add("baseline", right(r.count, to_hex(r.fingerprint)),
               f"count {r.count} {to_hex(r.fingerprint)} (reference {ref}), {r.stats.get('blocks')}"
               f" blocks x {r.stats.get('threads')}, kernel {r.algo_seconds:.4f} s,"
               f" compile {r.compile_seconds:.1f} s", seconds=round(time.time() - t, 1))
    max_blocks = r.stats.get("max_cooperative_blocks", 1)
    threads = r.stats["threads"]
    # the engine's own graph term is a little smaller: the tight check still passes
    graph_bytes = 8 * (graph.n_left + graph.n_right + 2) + 8 * graph.n_edges \
        + 8 * max(graph.n_left, graph.n_right)
    need = int(r.stats["memory_bytes"]) + graph_bytes
    info.update(max_cooperative_blocks=max_blocks, memory_estimate_bytes=need)
    del r

    def oom_before_launch():
        t = time.time()
        if sim:
            from numba.cuda.simulator.cudadrv import devices

            real_info = devices.FakeCUDAContext.get_memory_info
            devices.FakeCUDAContext.get_memory_info = lambda self: devices._MemoryInfo(64, 1 << 20)
            try:
                r, err = engine()
            finally:
                devices.FakeCUDAContext.get_memory_info = real_info
            hog_free = None
        else:
            flush_device_memory()
            with Hog(a.leave_mib * MiB) as h:
                hog_free = h.free
                r, err = engine()
                row, rc, line = runner_row("oom")
        ok = r is None and err.startswith("DeviceMemoryError: ") and one_line_naming(err, name) \
            and "bytes" in err
        checks.add("oom-engine", ok, err or f"returned count {r.count}", free_during=hog_free,
                   seconds=round(time.time() - t, 1))
        if sim:
            checks.add("oom-runner", None, "needs a real second process holding device memory")
        else:
            checks.add("oom-runner", error_row_ok(row, rc, ("memory", "OUT_OF_MEMORY")),
                       f"exit {rc}; status {row.get('status')}, count {row.get('count')}: {line}",
                       row_message=row.get("message"))

    def oom_while_allocating():
        # the hog leaves the estimate and a little more: the check passes, the allocations
        # (rounded up by the driver) or the launch do not fit
        if sim:
            checks.add("oom-tight", None, "needs real device memory")
            return
        t = time.time()
        flush_device_memory()
        with Hog(need + 4 * MiB) as h:
            r, err = engine()
            hog_free = h.free
        if r is not None:
            ok = right(r.count, to_hex(r.fingerprint))
            detail = f"fitted after all: count {r.count} (free {hog_free}, estimate {need})"
        else:
            ok = one_line_naming(err, name) and (
                err.startswith("DeviceMemoryError: ")
                or (err.startswith("LaunchError: ") and "OUT_OF_MEMORY" in err))
            detail = err
        checks.add("oom-tight", ok, detail, free_during=hog_free, estimate=need,
                   seconds=round(time.time() - t, 1))

    def grid_too_large():
        if sim:
            checks.add("launch-runner", None, "the simulator runs one block whatever is asked")
            checks.add("launch-engine", None, "the simulator runs one block whatever is asked")
            return
        over = max_blocks + 1
        must = (f"grid {over} x {threads} threads",)
        # the child first: a launch the driver accepted would hang in grid.sync, and the
        # runner's timeout kills a child, not this process
        t = time.time()
        row, rc, line = runner_row("launch", {L.UNCLAMPED_ENV: "1"}, blocks=over)
        checks.add("launch-runner",
                   error_row_ok(row, rc, must) and "LaunchError" in row.get("message", ""),
                   f"exit {rc}; status {row.get('status')}, count {row.get('count')}: {line}",
                   row_message=row.get("message"), seconds=round(time.time() - t, 1))
        if row.get("status") == "timeout":
            checks.add("launch-engine", False, "not run: the runner's launch hung")
            return
        t = time.time()
        os.environ[L.UNCLAMPED_ENV] = "1"
        try:
            r, err = engine(blocks=over)
        finally:
            del os.environ[L.UNCLAMPED_ENV]
        ok = r is None and err.startswith("LaunchError: ") and all(m in err for m in must) \
            and one_line_naming(err, name) and dev_name in err
        checks.add("launch-engine", ok, err or f"returned count {r.count}",
                   seconds=round(time.time() - t, 1))

    def launch_refused():
        if sim:
            checks.add("launch-invalid", None, "the simulator has no launch limits")
            return
        touch = cuda.jit(_touch)
        x = cuda.to_device(np.zeros(64, dtype=np.int32))
        try:
            L.checked_launch(touch, 1, 2048, (x,), cuda=cuda, what=name, device=dev_name)
        except L.LaunchError as e:
            msg = str(e)
        else:
            checks.add("launch-invalid", False, "2048 threads per block launched without an error")
            return
        L.checked_launch(touch, 2, 32, (x,), cuda=cuda, what=name, device=dev_name)
        ok = "launch failed" in msg and "grid 1 x 2048" in msg and "\n" not in msg \
            and int(x.copy_to_host().sum()) == 64
        checks.add("launch-invalid", ok, msg + "; then a 2 x 32 launch ran")

    def kernel_fault():
        # in a child: the fault leaves its CUDA context unusable
        t = time.time()
        res_path = tmp / "fault.json"
        p = subprocess.run([sys.executable, __file__, "--fault-child", str(csr_path),
                            json.dumps(params), str(res_path)], cwd=REPO, env=child_env,
                           capture_output=True, text=True, timeout=150)
        if not res_path.is_file():
            checks.add("kernel-fault", False,
                       f"child exited {p.returncode}: {p.stderr.strip()[-300:]}")
            return
        fr = json.loads(res_path.read_text())
        fault, after = fr["fault"], fr["after"]
        fmsg = fault.get("message", "")
        ok_fault = fault["raised"] == "LaunchError" and one_line_naming(fmsg, name) and (
            sim or ("failed while running" in fmsg and "unusable until the process exits" in fmsg))
        ok_after = "raised" in after or right(after["count"], after["fingerprint"])
        what_after = (f"then cuMBE raised {after['raised']}: {after['message']}"
                      if "raised" in after else f"then cuMBE returned count {after['count']}")
        checks.add("kernel-fault", ok_fault and ok_after, f"{fault['raised']}: {fmsg}; {what_after}",
                   child=fr, seconds=round(time.time() - t, 1))

    def still_works():
        t = time.time()
        flush_device_memory()
        r, err = engine()
        checks.add("after-engine", r is not None and right(r.count, to_hex(r.fingerprint)),
                   err or f"count {r.count} {to_hex(r.fingerprint)}",
                   seconds=round(time.time() - t, 1))
        t = time.time()
        row, rc, line = runner_row("after")
        checks.add("after-runner", rc == 0 and row.get("status") == "ok"
                   and right(row.get("count"), row.get("fingerprint")), line,
                   seconds=round(time.time() - t, 1))

    attempt(["oom-engine", "oom-runner"], oom_before_launch)
    attempt(["oom-tight"], oom_while_allocating)
    attempt(["launch-runner", "launch-engine"], grid_too_large)
    attempt(["launch-invalid"], launch_refused)
    attempt(["kernel-fault"], kernel_fault)
    attempt(["after-engine", "after-runner"], still_works)

    info["elapsed_s"] = round(time.time() - t_start, 1)
    checks.save()
    checks.table()
    print(f"\n{sum(r['ok'] is True for r in checks.rows)} PASS, "
          f"{sum(r['ok'] is False for r in checks.rows)} FAIL, "
          f"{sum(r['ok'] is None for r in checks.rows)} n/a; {info['elapsed_s']} s;"
          f" {out / 'faults.json'}")
    return 1 if any(r["ok"] is False for r in checks.rows) else 0


if __name__ == "__main__":
    sys.exit(main())
