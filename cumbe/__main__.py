"""``python -m cumbe run <graph.csr> [--variant ...] [--simulate] [--json out.json]``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from mbebench import envvars

DESCRIPTION = """\
cuMBE: maximal biclique enumeration on an NVIDIA GPU (Numba CUDA, one cooperative kernel),
with the cuMBE paper's ablations noRS, noES and noWS.  Prints the number of maximal bicliques,
their order-free fingerprint and the kernel time.  Without a CUDA device, --simulate runs
Numba's CUDA simulator (slow: tiny graphs only; its time is not a GPU time)."""

GRAPH_HELP = """\
the graph: an mbe-bench binary CSR file (.csr), as the pipeline writes to
results/csr/<dataset>.csr; 'python -m mbebench convert --dataset NAME --edges out.NAME
--out-csr NAME.csr --out-meta NAME.json' makes one from a KONECT edge list"""

EPILOG = """\
example: python -m cumbe run results/csr/Marvel.csr --variant noWS --json marvel.json
exit status: 0 done, 1 error (one line naming the file or device), 2 skipped (no CUDA device)"""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mbe-bench")
    except PackageNotFoundError:
        from mbebench import __version__

        return __version__


class _Version(argparse.Action):
    """``--version``, looked up only when asked for (the metadata lookup is not free)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings, dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog} (mbe-bench) {_version()}")
        parser.exit()


def _needs_driver(argv) -> bool:
    """Whether the command line is a GPU run of one device, read without the full parser
    (which imports numpy): a wrong guess costs at most a driver started for nothing."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("cmd", nargs="?")
    ap.add_argument("--simulate", action="store_true")
    ap.add_argument("--devices")
    try:
        a, _ = ap.parse_known_args(argv)
    except SystemExit:  # left to the full parser to explain
        return False
    sim = envvars.simulating()
    return a.cmd == "run" and not (a.simulate or sim) and a.devices is None


def build_parser() -> argparse.ArgumentParser:
    from cumbe.spec import IDLE_FRACTION_ROUNDS, SIDES, SPEC, VARIANTS

    d = SPEC.defaults()
    ap = argparse.ArgumentParser(prog="python -m cumbe", description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action=_Version)
    sub = ap.add_subparsers(dest="cmd", required=True, title="commands")
    r = sub.add_parser("run", help="enumerate the maximal bicliques of a CSR graph on the GPU",
                       description=DESCRIPTION, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("graph", help=GRAPH_HELP)
    r.add_argument("--variant", default=d["variant"], choices=VARIANTS,
                   help="cuMBE, or the paper's ablation without reverse scanning (noRS), "
                   "early stop (noES) or work stealing (noWS)")
    r.add_argument("--k", type=int, default=d["k"], help="work-stealing stages")
    r.add_argument("--blocks", type=int, default=d["blocks"],
                   help="0 = the largest cooperative grid that fits the memory")
    r.add_argument("--threads", type=int, default=d["threads"], help="CUDA threads per block")
    r.add_argument("--idle-fraction", type=float, default=None, metavar="F",
                   help="a work-stealing stage ends once this share of the workers is out of "
                        f"work (default: {IDLE_FRACTION_ROUNDS:g} with the check in rounds, 0, "
                        "the first one, with the paper's check; a tuning switch)")
    r.add_argument("--blocks-per-sm", type=int, default=d["blocks_per_sm"], metavar="B",
                   help="compile the kernel for B blocks an SM (fewer registers a thread; "
                        "default 0: 768 threads an SM); 8 of 128 threads was 3-5 %% faster on "
                        "large tiles, slower on small graphs and on a dense-core grade "
                        "(docs/gpu.md, Performance)")
    r.add_argument("--rounds", action=argparse.BooleanOptionalAction, default=None,
                   help="the maximality check in rounds with hub bit rows (R' out of the "
                        "running intersection, several lists a round; docs/gpu.md): the "
                        "default of the variants that check by reverse scan; 0.39-1.02x the "
                        "paper's time on the graphs measured (H200); --no-rounds: the "
                        "paper's check, as the pipeline's cuMBE row")
    r.add_argument("--hub-divisor", type=int, default=d["hub_divisor"], metavar="D",
                   help="with --rounds: bit rows for the other side's vertices whose row is "
                        "at most D times their list (0: none; cumbe/hubs.py)")
    r.add_argument("--device-memory-gib", type=float, default=d["device_memory_gib"],
                   help="use at most this much device memory (default: $MBEBENCH_DEVICE_MEMORY_GIB,"
                        " else all that is free)")
    r.add_argument("--side", default=d["side"], choices=SIDES,
                   help="the side the candidates come from (auto: the larger sum of squared "
                   "degrees, not the smaller side)")
    r.add_argument("--shard", default=d["shard"], metavar="I/N",
                   help="only shard I of N of the first-level tasks, balanced by estimated cost "
                        "(the N shards' counts and fingerprints sum to the whole run's; "
                        "default 0/1: all)")
    r.add_argument("--devices", default=d["devices"], metavar="all|N|IDS",
                   help="run on several GPUs of this node: 'all', a count N (the first N), or "
                        "device ids '0,1'; shards of the first-level tasks go to the devices "
                        "from one queue, and the time printed is the wall time of the whole "
                        "computation (default: the current device, one kernel)")
    r.add_argument("--shards-per-device", type=int, default=d["shards_per_device"], metavar="S",
                   help="with --devices: shards per device in the queue (default %(default)s)")
    r.add_argument("--instrument", action="store_true",
                   help="the instrumented build: per-warp busy time and per-phase cycles")
    r.add_argument("--simulate", action="store_true",
                   help="Numba's CUDA simulator instead of a GPU (sets NUMBA_ENABLE_CUDASIM=1)")
    r.add_argument("--json", dest="json_out", help="also write the result to this JSON file")
    return ap


def main(argv=None) -> int:
    started = time.perf_counter()
    if _needs_driver(sys.argv[1:] if argv is None else argv):
        from cumbe import driver_start

        driver_start.start()  # while numpy is imported and the graph is read
    a = build_parser().parse_args(argv)
    a.started = started
    if a.simulate:
        # read by numba when numba.cuda is first imported, which is below
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

    from mbebench.csr import CSRError, read_csr, verified
    from mbebench.shard import parse as parse_shard

    from cumbe.spec import parse_devices

    try:
        parse_shard(a.shard)  # before the graph is read: a typo fails at once
        parse_devices(a.devices)
        if a.shards_per_device < 1:
            raise ValueError(f"--shards-per-device must be >= 1, not {a.shards_per_device}")
    except ValueError as e:  # one line naming the string
        print(f"error: {e}", file=sys.stderr)
        return 1
    try:
        # one device: the payload's checksum is checked only if the preparation's cache
        # misses (cumbe.prepare.prepare_cached), since a hit uses none of the file's arrays
        g = read_csr(a.graph, verify=a.devices is not None)
    except CSRError as e:  # its message names the file
        print(f"error: {e}", file=sys.stderr)
        return 1

    from cumbe.engine import run
    from cumbe.launch import DeviceError, DeviceMemoryError, LaunchError
    from cumbe.variants import ABLATIONS
    from mbebench.engine import EngineSkipped
    from mbebench.fingerprint_sum import to_hex

    try:
        res = run(g, variant=a.variant, k=a.k, blocks=a.blocks, threads=a.threads,
                  blocks_per_sm=a.blocks_per_sm, side=a.side, instrument=a.instrument,
                  device_memory_gib=a.device_memory_gib, shard=a.shard, devices=a.devices,
                  shards_per_device=a.shards_per_device,
                  rounds=ABLATIONS[a.variant][0] if a.rounds is None else a.rounds,
                  hub_divisor=a.hub_divisor,
                  idle_fraction=a.idle_fraction)
    except EngineSkipped as e:
        try:  # a corrupt file is an error with or without a GPU
            verified(g)
        except CSRError as bad:
            print(f"error: {bad}", file=sys.stderr)
            return 1
        print(f"skipped: {e} (--simulate runs the CUDA simulator)", file=sys.stderr)
        return 2
    except (DeviceMemoryError, LaunchError, DeviceError, ValueError) as e:  # one line
        print(f"error: {e}", file=sys.stderr)
        if "unusable until the process exits" in str(e):
            # numba would free the run's device arrays at exit, and every cuMemFree on the
            # dead context prints a traceback after our one line
            sys.stderr.flush()
            os._exit(1)
        return 1
    out = {"graph": a.graph, "count": res.count, "fingerprint": to_hex(res.fingerprint),
           "kernel_s": None if res.stats.get("device_count") else res.algo_seconds,
           "algo_s": res.algo_seconds, "compile_s": res.compile_seconds, "stats": res.stats,
           "simulated": bool(a.simulate or envvars.simulating())}
    head = f"count {res.count}  fingerprint {to_hex(res.fingerprint)}"
    if res.stats.get("device_count"):  # several devices: the wall time of them all
        busy = ", ".join(f"{x['id']}: {x['shards']} shards {x['busy_s']:.3f} s"
                         for x in res.stats["devices"])
        print(f"{head}  wall {res.algo_seconds:.6f} s  ({res.stats['device']}, "
              f"{res.stats['shards']} shards; busy {busy})")
    else:
        print(f"{head}  kernel {res.algo_seconds:.6f} s"
              f"  (setup {res.stats.get('setup_s', 0.0):.2f} s, compile "
              f"{res.compile_seconds:.2f} s, {res.stats.get('blocks')} blocks"
              f" x {res.stats.get('threads')}, {res.stats.get('device')})")
    if res.stats.get("grid_reason"):
        # a smaller grid than the device allows is slower: say why, and what lifts it
        print(f"note: {res.stats['grid_reason']}; more device memory gives a larger grid "
              f"(benchmarks/memory-caps/README.md)", file=sys.stderr)
    if a.json_out:
        # seconds from main's start (imports, graph, run) to here: the rest of the
        # process's time is the interpreter's start and exit
        out["main_s"] = time.perf_counter() - a.started
        with open(a.json_out, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    code = main()
    # Leave without the interpreter's teardown: numba would free every device array and
    # the CUDA context one call at a time, which the driver does at once when the process
    # ends; the output is written and flushed by then.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
