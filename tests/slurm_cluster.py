"""A throwaway one-node SLURM cluster on 127.0.0.1, for tests/test_slurm.py.

``LocalSlurm`` writes ``/etc/slurm/slurm.conf`` (the only place every SLURM
tool finds it: the executor plugin's job step drops ``SLURM_CONF``), starts
``slurmctld`` and ``slurmd`` as root in the foreground as our own child
processes, and on exit stops exactly those processes (by PID) and removes the
config again.  A config that is not ours (no ``MARKER`` line) is never
touched: the tests skip instead.

The node has the machine's CPUs and one fake GPU (``Gres=gpu:1`` backed by
``/dev/null``), so a ``--gpus=1`` job is scheduled like on a GPU cluster, while
the engine inside still finds no usable CUDA device.  No accounting database:
Snakemake must query job states with ``squeue`` (``--slurm-status-command
squeue``), which sees finished jobs for ``MinJobAge`` seconds.

Authentication is ``auth/none`` where the plugin exists (Slurm <= 23.02, e.g.
Debian 12's 22.05), else munge with a throwaway key (``MBEBENCH_SLURM_AUTH=munge``
forces munge).  Everything listens on loopback only.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from mbebench import envvars

MARKER = "# mbe-bench test cluster: written by tests/slurm_cluster.py, removed after the tests"
ETC = Path("/etc/slurm")
CONF = ETC / "slurm.conf"
GRES_CONF = ETC / "gres.conf"
BINARIES = ("slurmctld", "slurmd", "sbatch", "srun", "squeue", "sinfo", "scontrol", "scancel")
MIN_JOB_AGE_S = 300  # >= 3 x the executor's status interval, or squeue forgets finished jobs


def _plugin_dirs() -> list[str]:
    return glob.glob("/usr/lib/*/slurm-wlm") + glob.glob("/usr/lib*/slurm") + glob.glob(
        "/usr/local/lib/slurm"
    )


def _has_plugin(name: str) -> bool:
    return any(Path(d, f"{name}.so").exists() for d in _plugin_dirs())


def _auth() -> str:
    forced = envvars.get("MBEBENCH_SLURM_AUTH")
    if forced:
        return forced
    return "none" if _has_plugin("auth_none") and _has_plugin("cred_none") else "munge"


def unavailable_reason() -> str | None:
    """Why the local cluster cannot run here, or None."""
    missing = [b for b in BINARIES if shutil.which(b) is None]
    if missing:
        return (
            f"SLURM is not installed ({', '.join(missing)} not found);"
            " .ci/install-slurm.sh installs it (Debian/Ubuntu, as root)"
        )
    if os.geteuid() != 0:
        return "the local SLURM test cluster runs its daemons as root"
    for path in (CONF, GRES_CONF):
        if path.exists() and MARKER not in path.read_text(errors="replace"):
            return f"{path} belongs to a real SLURM installation; the test leaves it alone"
    if _auth() == "munge" and shutil.which("munged") is None:
        return "this SLURM has no auth/none plugin and munged is not installed"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _mem_mb() -> int:
    with open("/proc/meminfo") as f:
        kib = next(int(ln.split()[1]) for ln in f if ln.startswith("MemTotal:"))
    return kib // 1024


class LocalSlurm:
    """``with LocalSlurm(workdir) as cluster:`` one node "localhost", partition "debug"."""

    def __init__(self, workdir: Path):
        self.dir = Path(workdir)
        self.cpus = os.cpu_count() or 1
        self.procs: dict[str, subprocess.Popen] = {}
        self._run_dir: Path | None = None

    # -- config ------------------------------------------------------------------------
    def _conf_text(self, auth: str) -> str:
        d = self.dir
        ctld_port, slurmd_port = _free_port(), _free_port()
        lines = [
            MARKER,
            "ClusterName=mbetest",
            "SlurmctldHost=localhost(127.0.0.1)",
            f"SlurmctldPort={ctld_port}",
            f"SlurmdPort={slurmd_port}",
            "CommunicationParameters=NoInAddrAny,NoCtldInAddrAny",
            "SlurmUser=root",
            "SlurmdUser=root",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/backfill",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none",
            # report the configured node (memory, CPUs) instead of draining it on a mismatch
            "SlurmdParameters=config_overrides",
            "ReturnToService=2",
            f"MinJobAge={MIN_JOB_AGE_S}",
            "GresTypes=gpu",
            f"StateSaveLocation={d / 'state'}",
            f"SlurmdSpoolDir={d / 'spool'}",
            f"SlurmctldPidFile={d / 'slurmctld.pid'}",
            f"SlurmdPidFile={d / 'slurmd.pid'}",
            f"SlurmctldLogFile={d / 'slurmctld.log'}",
            f"SlurmdLogFile={d / 'slurmd.log'}",
        ]
        if auth == "none":
            lines += ["AuthType=auth/none", "CredType=cred/none"]
        else:
            sock = self._run_dir / "munge.socket"
            lines += [
                "AuthType=auth/munge",
                "CredType=cred/munge",
                f"AuthInfo=socket={sock}",
            ]
        mem = max(16000, int(_mem_mb() * 0.9))
        lines += [
            f"NodeName=localhost NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={mem}"
            " Gres=gpu:1 State=UNKNOWN",
            "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP",
        ]
        return "\n".join(lines) + "\n"

    def _write_conf(self, auth: str) -> None:
        ETC.mkdir(parents=True, exist_ok=True)
        CONF.write_text(self._conf_text(auth))
        GRES_CONF.write_text(f"{MARKER}\nNodeName=localhost Name=gpu File=/dev/null\n")

    @staticmethod
    def _remove_conf() -> None:
        for path in (CONF, GRES_CONF):
            if path.exists() and MARKER in path.read_text(errors="replace"):
                path.unlink()

    # -- daemons -----------------------------------------------------------------------
    def _start(self, name: str, cmd: list[str]) -> None:
        log = open(self.dir / f"{name}.out", "wb")
        self.procs[name] = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()

    def _start_munge(self) -> None:
        # munged wants every directory above its socket to be world-searchable
        self._run_dir = Path(tempfile.mkdtemp(prefix="mbe-munge-"))
        self._run_dir.chmod(0o755)
        key_dir = self.dir / "munge"
        key_dir.mkdir(mode=0o700)
        key = key_dir / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self._start(
            "munged",
            [
                "munged", "--foreground", "--force",
                f"--key-file={key}",
                f"--socket={self._run_dir / 'munge.socket'}",
                f"--pid-file={self._run_dir / 'munged.pid'}",
                f"--log-file={key_dir / 'munged.log'}",
                f"--seed-file={key_dir / 'munged.seed'}",
            ],
        )
        self._wait_for(lambda: (self._run_dir / "munge.socket").exists(), "munged", 15)

    def _wait_for(self, ready, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited with {proc.returncode}:\n{self.logs()}")
            if ready():
                return
            time.sleep(0.3)
        raise RuntimeError(f"{what} not ready after {timeout:g} s:\n{self.logs()}")

    def _node_idle(self) -> bool:
        res = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True, timeout=10
        )
        return res.returncode == 0 and res.stdout.strip().startswith("idle")

    def logs(self) -> str:
        out = []
        for f in sorted(self.dir.glob("*.log")) + sorted(self.dir.glob("*.out")):
            out.append(f"--- {f.name}\n" + "\n".join(f.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(out)

    def __enter__(self) -> LocalSlurm:
        reason = unavailable_reason()
        if reason:
            raise RuntimeError(reason)
        for sub in ("state", "spool"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        auth = _auth()
        try:
            if auth == "munge":
                self._start_munge()
            self._write_conf(auth)
            self._start("slurmctld", ["slurmctld", "-D", "-i"])
            self._start("slurmd", ["slurmd", "-D", "-N", "localhost"])
            self._wait_for(self._node_idle, "the SLURM node", 60)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            # our cluster, our jobs: nothing of a failed test may keep running
            subprocess.run(["scancel", "--full", "--user=root"], capture_output=True, timeout=30)
            time.sleep(1)
        for name in ("slurmd", "slurmctld", "munged"):
            proc = self.procs.get(name)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self._remove_conf()
        if self._run_dir is not None:
            shutil.rmtree(self._run_dir, ignore_errors=True)

    # -- queries -----------------------------------------------------------------------
    def jobs(self) -> list[dict[str, str]]:
        """Every job the controller still remembers (``MinJobAge``), as key=value dicts."""
        res = subprocess.run(
            ["scontrol", "-o", "show", "job"], capture_output=True, text=True, timeout=30
        )
        jobs = []
        for line in res.stdout.splitlines():
            fields = {}
            for tok in line.split():
                if "=" in tok:
                    k, v = tok.split("=", 1)
                    fields[k] = v
            if fields:
                jobs.append(fields)
        return jobs
