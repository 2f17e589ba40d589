"""Time-box a call (SymPy's simplify can hang): SIGALRM in the main thread, else a plain call."""
from __future__ import annotations

import signal
import threading


class SymbolicTimeout(TimeoutError):
    pass


def timeboxed(func, seconds: float | None):
    if not seconds or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "SIGALRM"):
        return func()

    def _alarm(signum, frame):
        raise SymbolicTimeout(f"symbolic check exceeded its time box of {seconds:g} s")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return func()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
