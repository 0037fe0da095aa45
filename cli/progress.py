# SPDX-License-Identifier: GPL-3.0-or-later
"""Progress of a long command-line operation, on stderr (no bpy).

Blender's window shows an operator's progress (``progress_begin`` /
``progress_update``); on the command line :class:`Progress` does:

* on a terminal, one line redrawn in place (``label: 120/319 (38%), 12 s``),
  first drawn after :data:`DELAY` seconds (a short operation shows nothing)
  and erased when the operation ends, so it never mixes with the output;
* otherwise (a log, a pipe), one plain line every :data:`EVERY` seconds at
  most (nothing at all for an operation shorter than that), so a log gets
  a sign of life and never a flood.

A background thread keeps the elapsed time moving while the caller is busy
in a single long call (reading a large file). It also answers to Blender's
window-manager names (``progress_begin``, ``progress_update``,
``progress_end``), so code written for the window drives it unchanged.
"""
from __future__ import annotations

import os
import shutil
import sys
import threading
import time

#: seconds before a terminal shows the line
DELAY = 0.5
#: seconds between two plain lines when stderr is not a terminal
EVERY = 30.0
#: seconds between two redraws on a terminal
TICK = 0.2


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Progress:
    """``with Progress("verify 'Walk'", total=319) as p: ... p.update(k)``.

    ``total`` 0 shows the elapsed time only; :meth:`update` sets how much is
    done and an optional ``note`` (the current step). ``LSIO_PROGRESS=0`` in
    the environment turns it off, ``=1`` forces the terminal form."""

    def __init__(self, label: str, total: int = 0, *, note: str = "", stream=None):
        self.label = label
        self.total = int(total)
        self.done = 0
        self.note = note
        self.stream = stream if stream is not None else sys.stderr
        mode = os.environ.get("LSIO_PROGRESS", "")
        self.enabled = mode != "0"
        self.terminal = mode == "1" or (mode != "0" and _is_terminal(self.stream))
        self._start = time.monotonic()
        self._shown = False
        self._last_plain = self._start
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._offset = 0

    # -- the context manager ------------------------------------------------

    def __enter__(self) -> Progress:
        self._start = time.monotonic()
        self._last_plain = self._start
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="lsio-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            if self._shown and self.terminal:
                self._write("\r\033[K")
            self._shown = False

    # -- what the caller reports ---------------------------------------------

    def update(self, done: int | None = None, note: str | None = None, total: int | None = None) -> None:
        if done is not None:
            self.done = int(done)
        if note is not None:
            self.note = note
        if total is not None:
            self.total = int(total)

    # Blender's window-manager names (operators/pipeline.py calls them)
    def progress_begin(self, lo: float = 0, hi: float = 0) -> None:
        self._offset = int(lo)
        self.update(0, note="", total=int(hi - lo))

    def progress_update(self, value: float) -> None:
        self.update(int(value) - self._offset)

    def progress_end(self) -> None:
        pass

    # -- drawing -------------------------------------------------------------

    def text(self) -> str:
        """The current line: ``label: done/total (pct%), note, N s``."""
        bits = []
        if self.total > 0:
            bits.append(f"{self.done}/{self.total} ({100 * self.done // self.total}%)")
        if self.note:
            bits.append(self.note)
        bits.append(f"{time.monotonic() - self._start:.0f} s")
        return f"{self.label}: {', '.join(bits)}"

    def _write(self, s: str) -> None:
        try:
            self.stream.write(s)
            self.stream.flush()
        except (OSError, ValueError):      # a closed pipe: progress is not worth a failure
            self.enabled = False

    def _run(self) -> None:
        while not self._stop.wait(TICK):
            now = time.monotonic()
            with self._lock:
                if not self.enabled:
                    return
                if self.terminal:
                    if now - self._start >= DELAY:
                        width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
                        self._write("\r\033[K" + self.text()[:width])
                        self._shown = True
                elif now - self._last_plain >= EVERY:
                    self._last_plain = now
                    self._write(self.text() + "\n")


def counted(label: str, items, total: int):
    """``items``, with a :class:`Progress` counting them (``for x in
    counted("verify", frames, len(frames))``); the line goes when the loop
    ends, however it ends."""
    with Progress(label, total) as p:
        for k, x in enumerate(items):
            p.update(k)
            yield x
        p.update(total)
