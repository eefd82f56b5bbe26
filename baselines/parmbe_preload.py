"""Imported by the forkserver of ParMBE's pool (:mod:`baselines.parmbe_pool`), once: it
imports ParMBE and loads every kernel there (the ahead-of-time compiled ones,
:mod:`baselines.parmbe_aot`, else numba's, compiled or loaded from its cache), so that each
worker, a fork of the server, starts with them loaded instead of loading them again, once
per worker."""

from baselines.parmbe_plan import warm_up

try:
    WARM_S = warm_up(shard=False)
except Exception:  # noqa: BLE001 - each worker warms up again and reports what failed
    WARM_S = None
