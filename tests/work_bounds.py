# SPDX-License-Identifier: GPL-3.0-or-later
"""Bounds on the work and memory of a piece of code, for the tests that
guard against hangs and quadratic blow-ups. Wall-clock time is no such
bound: a loaded machine stretches it, and a generous one lets a slow
regression through.

Work is the number of function calls the code makes on this thread:
Python functions, and the C functions they call (numpy's, the builtins),
counted by a profile hook. It does not depend on the machine, grows with
every Python loop and every numpy call, and a loop that never ends runs
into the budget: the code is stopped there with :class:`WorkExceeded`.
Memory is tracemalloc's peak, which sees numpy's arrays as well.
"""
from __future__ import annotations

import sys
import tracemalloc
from contextlib import contextmanager
from dataclasses import dataclass, field


class WorkExceeded(BaseException):
    """The code made more calls than its budget (a BaseException, so that no
    ``except Exception`` of the code under test swallows it)."""


@dataclass
class Work:
    calls: int = 0       # function calls made (Python and C)
    peak: int = 0        # traced memory peak, bytes (when memory was bounded)
    named: dict = field(default_factory=dict)   # calls of each watched Python function, by name


@contextmanager
def bounded(calls: float, memory: float | None = None, watch: tuple[str, ...] = ()):
    """``with bounded(calls=1e5, memory=32e6) as work: ...``: the body may
    make at most ``calls`` function calls and, when ``memory`` is given,
    hold at most ``memory`` bytes of traced memory at its peak. Yields the
    :class:`Work` it measured; the bounds are asserted on leaving. The calls
    of the Python functions named in ``watch`` are counted in
    ``work.named`` (for work a call count cannot see: one C call that scans
    the whole input, say)."""
    work = Work(named=dict.fromkeys(watch, 0))
    limit = int(calls)

    def count(frame, event, _arg):
        if event == "call" or event == "c_call":
            work.calls += 1
            if work.calls > limit:
                raise WorkExceeded(f"more than {limit} calls")
            if event == "call" and frame.f_code.co_name in work.named:
                work.named[frame.f_code.co_name] += 1

    started = memory is not None and not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    elif memory is not None:
        tracemalloc.reset_peak()
    previous = sys.getprofile()
    sys.setprofile(count)
    try:
        yield work
    finally:
        sys.setprofile(previous)
        if memory is not None:
            work.peak = tracemalloc.get_traced_memory()[1]
            if started:
                tracemalloc.stop()
    assert work.calls <= limit, f"{work.calls} calls, the budget is {limit}"
    if memory is not None:
        assert work.peak <= memory, f"{work.peak} bytes at the peak, the budget is {int(memory)}"
