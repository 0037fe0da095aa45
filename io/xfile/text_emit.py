# SPDX-License-Identifier: GPL-3.0-or-later
"""Text .X output: members separated the way Microsoft's templates spell them
(``;`` after struct members, ``,`` between array elements)."""
from __future__ import annotations

import re

import numpy as np

_SAFE = re.compile(r"[^A-Za-z0-9_.\-]")
_NUMERIC = re.compile(r"^[-+.0-9]")


def text_name(name: str) -> str:
    """A name every text reader accepts: [A-Za-z0-9_.-], not starting like a number."""
    name = _SAFE.sub("_", name)
    if _NUMERIC.match(name):
        name = "_" + name
    return name


def format_floats(values, float_size: int) -> list[str]:
    """Shortest-exact positional spellings: '%.6f' where that reproduces the value
    (at float32 precision for 32-bit files), the exact shortest form otherwise."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    if flat.size == 0:
        return []
    strs = ["%.6f" % x for x in flat.tolist()]
    back = np.array(strs, dtype=np.float64)
    if float_size == 32:
        target = flat.astype(np.float32)
        bad = np.flatnonzero(back.astype(np.float32) != target)
        for i in bad.tolist():
            strs[i] = np.format_float_positional(target[i], unique=True, trim="0")
    else:
        bad = np.flatnonzero(back != flat)
        for i in bad.tolist():
            strs[i] = np.format_float_positional(flat[i], unique=True, trim="0")
    return strs


class TextEmitter:
    def __init__(self, float_size: int):
        self.float_size = float_size
        self.out: list[str] = []
        self.indent = ""

    def _line(self, text: str) -> None:
        self.out.append(self.indent + text + "\n")

    def getvalue(self) -> str:
        return "".join(self.out)

    def templates(self, names) -> None:
        from .templates import text

        self.out.append(text(names))

    def begin(self, ident: str, name: str | None = None) -> None:
        if name:
            self._line(f"{ident} {text_name(name)} {{")
        else:
            self._line(f"{ident} {{")
        self.indent += " "

    def end(self) -> None:
        self.indent = self.indent[:-1]
        self._line("}")

    def blank(self) -> None:
        self.out.append("\n")

    def reference(self, name: str) -> None:
        self._line(f"{{ {text_name(name)} }}")

    def string(self, value: str) -> None:
        self._line('"' + value.replace("\\", "\\\\").replace('"', "'") + '";')

    def dwords(self, values) -> None:
        """Consecutive DWORD members: ``a;`` each on its own line."""
        for v in np.asarray(values, dtype=np.int64).reshape(-1).tolist():
            self._line(f"{v};")

    def floats(self, values) -> None:
        """One struct of floats on a line: ``a;b;c;;`` (a color, a vector)."""
        self._line(";".join(format_floats(values, self.float_size)) + ";;")

    def float_member(self, value: float) -> None:
        self._line(format_floats([value], self.float_size)[0] + ";")

    def dword_array(self, values) -> None:
        """``array DWORD x[n];`` as ``a,b,c;`` (10 per line)."""
        vals = [str(v) for v in np.asarray(values, dtype=np.int64).reshape(-1).tolist()]
        self._array_lines(vals, ",", ";")

    def float_array(self, values) -> None:
        vals = format_floats(values, self.float_size)
        self._array_lines(vals, ",", ";")

    def _array_lines(self, vals: list[str], sep: str, last: str) -> None:
        if not vals:
            self._line(last)
            return
        for start in range(0, len(vals), 10):
            chunk = sep.join(vals[start:start + 10])
            end = last if start + 10 >= len(vals) else sep
            self._line(chunk + end)

    def matrix(self, matrix) -> None:
        self._line(",".join(format_floats(matrix, self.float_size)) + ";;")

    def struct_array(self, table, int_columns: int = 0) -> None:
        """Array of structs, one per line: ``a;b;c;,`` and ``;;`` after the last.
        The first ``int_columns`` columns are written as integers."""
        table = np.asarray(table)
        rows, cols = table.shape if table.ndim == 2 else (0, 0)
        if rows == 0:
            self._line(";")
            return
        parts = []
        if int_columns:
            parts.append([[str(v) for v in row] for row in
                          table[:, :int_columns].astype(np.int64).tolist()])
        if cols > int_columns:
            fl = format_floats(table[:, int_columns:], self.float_size)
            k = cols - int_columns
            parts.append([fl[i * k:(i + 1) * k] for i in range(rows)])
        ind = self.indent
        lines = []
        for r in range(rows):
            cells = [c for part in parts for c in part[r]]
            lines.append(ind + ";".join(cells) + (";," if r < rows - 1 else ";;"))
        self.out.append("\n".join(lines) + "\n")

    def faces(self, sizes, indices) -> None:
        sizes = np.asarray(sizes, dtype=np.int64)
        if len(sizes) == 0:
            self._line(";")
            return
        ind = self.indent
        flat = [str(v) for v in np.asarray(indices, dtype=np.int64).tolist()]
        lines = []
        pos = 0
        last = len(sizes) - 1
        for f, n in enumerate(sizes.tolist()):
            lines.append(f"{ind}{n};{','.join(flat[pos:pos + n])};" + ("," if f < last else ";"))
            pos += n
        self.out.append("\n".join(lines) + "\n")

    def timed_keys(self, times, values) -> None:
        times = np.asarray(times, dtype=np.float64)
        values = np.asarray(values, dtype=np.float64)
        if len(times) == 0:
            self._line(";")
            return
        n = values.shape[1]
        tstr = format_floats(times, 64) if np.any(times != np.round(times)) else \
            [str(v) for v in times.astype(np.int64).tolist()]
        vstr = format_floats(values, self.float_size)
        ind = self.indent
        last = len(times) - 1
        lines = [f"{ind}{tstr[k]};{n};{','.join(vstr[k * n:(k + 1) * n])};;" +
                 ("," if k < last else ";") for k in range(len(times))]
        self.out.append("\n".join(lines) + "\n")
