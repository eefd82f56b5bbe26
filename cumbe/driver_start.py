"""The CUDA driver started in a thread at the very top of ``python -m cumbe run``.

Starting the driver (``cuInit`` and the device's primary context: 0.2-0.26 s on an H100
machine) needs nothing from the run but the device, and ``cuda.bindings`` releases the GIL
in those calls.  So the command starts them before it imports numpy (0.35 s there) and reads
the graph, in a thread that imports only ``cuda.bindings.driver``; this module imports
nothing heavy, so the thread starts first.  The primary context it retains is the one
:class:`cumbe.cubin.Driver` (and numba) retain again: that second retain, after
:func:`wait`, is cheap.  A failure here is silent: the run's own driver start says why."""

from __future__ import annotations

import threading

NAME = "cumbe-driver-start"
_thread: threading.Thread | None = None
_ok = False  # the thread retained the device's primary context


def start() -> None:
    """Start the driver and device 0's primary context in a thread (once)."""
    global _thread, _ok
    if _thread is None:
        _ok = False
        _thread = threading.Thread(target=_start_driver, name=NAME, daemon=True)
        _thread.start()


def _drv():
    from cuda.bindings import driver

    return driver


def _start_driver() -> None:
    global _ok
    try:
        d = _drv()
        (err,) = d.cuInit(0)
        if int(err) == 0:
            err, dev = d.cuDeviceGet(0)
            if int(err) == 0:
                err, _ctx = d.cuDevicePrimaryCtxRetain(dev)
                _ok = int(err) == 0
    except Exception:  # noqa: BLE001 - no bindings, no driver: the run says why
        pass


def pending() -> bool:
    """Whether a driver is starting in the thread, or has started there (a thread that found
    no device is not pending)."""
    return _thread is not None and (_thread.is_alive() or _ok)


def wait() -> None:
    """Wait for the thread :func:`start` started, if any."""
    global _thread
    t, _thread = _thread, None
    if t is not None:
        t.join()
