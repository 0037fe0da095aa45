# SPDX-License-Identifier: GPL-3.0-or-later
"""The verify report as one self-contained HTML page (no bpy; the
rendering is in ``operators/report.py``).

The page names no network resource: the style is inline, the plots are
inline SVG, the pictures are PNG files beside the page (relative links), so
it opens offline and the folder can be moved or mailed as it is.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

#: the plot's size in CSS pixels and its margins (left, right, top, bottom)
WIDTH, HEIGHT = 760, 260
MARGIN = (64, 16, 14, 36)
#: where an error of exactly 0 is drawn: this many decades below the smallest error drawn
FLOOR_DECADES = 1

STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 800px;
       color: #1d1d1f; background: #fff; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 36px 0 4px; }
.verdict { font-size: 17px; padding: 10px 14px; border-radius: 6px; margin: 12px 0 18px; }
.PASS { background: #e3f5e6; border-left: 6px solid #2e8b3d; }
.FAIL { background: #fbe4e2; border-left: 6px solid #c0392b; }
.badge { font-weight: 700; padding: 1px 7px; border-radius: 4px; color: #fff; }
.badge.PASS { background: #2e8b3d; border: 0; } .badge.FAIL { background: #c0392b; border: 0; }
table.facts td { padding: 1px 10px 1px 0; vertical-align: top; }
table.facts td:first-child { color: #555; white-space: nowrap; }
code, .mono { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: 13px; }
.summary { margin: 2px 0 10px; }
svg { display: block; margin: 6px 0; }
.strip { display: flex; gap: 0; margin: 8px 0 2px; }
.strip figure { margin: 0; flex: 1; text-align: center; font-size: 13px; color: #333; }
.strip img { width: 100%; display: block; }
.legend { font-size: 13px; color: #555; margin: 2px 0 6px; }
details { margin: 6px 0; } details table { border-collapse: collapse; }
details td, details th { padding: 0 10px; text-align: right; font-family: ui-monospace, Menlo, Consolas, monospace;
                         font-size: 12px; }
tr.over td { color: #c0392b; font-weight: 600; }
"""


@dataclass
class Section:
    """One animation (or the layer stack, or the default pose) of the report."""

    title: str
    summary: str              # the command line's summary line
    ok: bool
    frames: list[float]
    max_error: list[float]    # per frame, as fractions of the model size
    mean_error: list[float]
    tolerance: float          # as a fraction of the model size
    size: float               # the model size (its units)
    image: str = ""           # the strip's file name, beside the page
    captions: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)    # more lines of information (plain text)

    @property
    def worst(self) -> int:
        """Index of the worst frame (the first of equals)."""
        return max(range(len(self.max_error)), key=lambda i: self.max_error[i]) if self.max_error else 0


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _decades(values: list[float], tolerance: float) -> tuple[int, int]:
    """The plot's y range in whole decades: the errors drawn and the tolerance."""
    positive = [v for v in values if v > 0 and math.isfinite(v)] + ([tolerance] if tolerance > 0 else [])
    if not positive:
        return -8, 0
    lo = math.floor(math.log10(min(positive))) - (FLOOR_DECADES if any(v <= 0 for v in values) else 0)
    hi = math.floor(math.log10(max(positive))) + 1
    if hi - lo < 2:
        lo, hi = lo - 1, hi + 1
    return lo, hi


def _x_ticks(a: float, b: float, n: int = 7) -> list[float]:
    if b <= a:
        return [a]
    raw = (b - a) / n
    step = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * step:
            step *= m
            break
    step = max(step, 1.0)
    first = math.ceil(a / step) * step
    return [first + i * step for i in range(int((b - first) / step + 1e-9) + 1)]


def plot(section: Section) -> str:
    """Inline SVG: the worst and mean error per frame (log scale, fractions of
    the model size) against the tolerance, the worst frame marked."""
    left, right, top, bottom = MARGIN
    w, h = WIDTH - left - right, HEIGHT - top - bottom
    frames = section.frames or [0.0]
    f0, f1 = min(frames), max(frames)
    lo, hi = _decades(section.max_error + section.mean_error, section.tolerance)

    def x(f: float) -> float:
        return left + (w / 2 if f1 == f0 else (f - f0) / (f1 - f0) * w)

    def y(v: float) -> float:
        d = math.log10(v) if v > 0 and math.isfinite(v) else lo
        d = min(max(d, lo), hi)
        return top + (hi - d) / (hi - lo) * h

    out = [f'<svg class="plot" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
           f'aria-label="error per frame">',
           f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="#fafafa" stroke="#bbb"/>']
    for d in range(lo, hi + 1):
        yy = y(10.0 ** d)
        out.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{left + w}" y2="{yy:.1f}" stroke="#e4e4e4"/>')
        out.append(f'<text x="{left - 6}" y="{yy + 4:.1f}" font-size="11" text-anchor="end" fill="#555">'
                   f'1e{d}</text>')
    for t in _x_ticks(f0, f1):
        xx = x(t)
        out.append(f'<line x1="{xx:.1f}" y1="{top + h}" x2="{xx:.1f}" y2="{top + h + 4}" stroke="#888"/>')
        out.append(f'<text x="{xx:.1f}" y="{top + h + 16}" font-size="11" text-anchor="middle" fill="#555">'
                   f'{t:g}</text>')
    out.append(f'<text x="{left + w / 2:.0f}" y="{HEIGHT - 4}" font-size="11" text-anchor="middle" fill="#555">'
               f'frame</text>')
    out.append(f'<text x="12" y="{top + h / 2:.0f}" font-size="11" text-anchor="middle" fill="#555" '
               f'transform="rotate(-90 12 {top + h / 2:.0f})">error / model size</text>')
    if section.tolerance > 0:
        ty = y(section.tolerance)
        out.append(f'<line class="tolerance" x1="{left}" y1="{ty:.1f}" x2="{left + w}" y2="{ty:.1f}" '
                   f'stroke="#2e8b3d" stroke-width="1.5" stroke-dasharray="6 4"/>')
        out.append(f'<text x="{left + w - 4}" y="{ty - 5:.1f}" font-size="11" text-anchor="end" fill="#2e8b3d">'
                   f'tolerance {section.tolerance:.0e}</text>')
    for cls, values, colour in (("mean", section.mean_error, "#3a6fb0"), ("worst", section.max_error, "#c0392b")):
        pts = " ".join(f"{x(f):.1f},{y(v):.1f}" for f, v in zip(frames, values))
        if len(values) == 1:
            out.append(f'<circle class="{cls}" cx="{x(frames[0]):.1f}" cy="{y(values[0]):.1f}" r="3" '
                       f'fill="{colour}"/>')
        out.append(f'<polyline class="{cls}" points="{pts}" fill="none" stroke="{colour}" stroke-width="1.4" '
                   f'stroke-linejoin="round"/>')
    if section.max_error:
        i = section.worst
        wx, wy = x(frames[i]), y(section.max_error[i])
        anchor = "end" if wx > left + w * 0.7 else "start"
        dx = -8 if anchor == "end" else 8
        out.append(f'<line x1="{wx:.1f}" y1="{top}" x2="{wx:.1f}" y2="{top + h}" stroke="#c0392b" '
                   f'stroke-dasharray="2 3"/>')
        out.append(f'<circle class="worst-frame" cx="{wx:.1f}" cy="{wy:.1f}" r="5" fill="none" stroke="#c0392b" '
                   f'stroke-width="2"/>')
        out.append(f'<text x="{wx + dx:.1f}" y="{max(wy - 8, top + 12):.1f}" font-size="12" '
                   f'text-anchor="{anchor}" fill="#c0392b">worst: frame {frames[i]:g}, '
                   f'{section.max_error[i]:.2e}</text>')
    lx = left + 10
    out.append(f'<line x1="{lx}" y1="{top + 12}" x2="{lx + 22}" y2="{top + 12}" stroke="#c0392b" stroke-width="2"/>'
               f'<text x="{lx + 28}" y="{top + 16}" font-size="11" fill="#333">worst vertex</text>'
               f'<line x1="{lx + 112}" y1="{top + 12}" x2="{lx + 134}" y2="{top + 12}" stroke="#3a6fb0" '
               f'stroke-width="2"/><text x="{lx + 140}" y="{top + 16}" font-size="11" fill="#333">mean</text>')
    out.append("</svg>")
    return "\n".join(out)


def _table(section: Section) -> str:
    rows = [f"<tr{' class=over' if m > section.tolerance else ''}><td>{f:g}</td><td>{m:.3e}</td><td>{a:.3e}</td>"
            f"</tr>" for f, m, a in zip(section.frames, section.max_error, section.mean_error)]
    return ("<details><summary>every frame (errors as fractions of the model size)</summary><table>"
            "<tr><th>frame</th><th>worst vertex</th><th>mean</th></tr>" + "".join(rows) + "</table></details>")


def _section(section: Section, n: int) -> str:
    word = "PASS" if section.ok else "FAIL"
    parts = [f'<section id="part{n}"><h2>{_e(section.title)} <span class="badge {word}">{word}</span></h2>',
             f'<p class="summary mono">{_e(section.summary)}</p>', plot(section)]
    for line in section.extra:
        parts.append(f'<p class="summary">{_e(line)}</p>')
    if section.image:
        figs = "".join(f"<figure><figcaption>{_e(c)}</figcaption></figure>" for c in section.captions)
        parts.append(f'<div class="strip"><img src="{_e(section.image)}" alt="{_e(section.title)}: '
                     f'{_e(", ".join(section.captions))}"></div>')
        parts.append(f'<div class="strip">{figs}</div>')
        parts.append('<p class="legend">Left in each picture: Blender\'s evaluated mesh (Armature modifier, its '
                     'own materials). Right: the core\'s evaluation of the file, each vertex coloured by its '
                     'distance to Blender\'s: <b style="color:#2e7d3a">green</b> within a tenth of the tolerance, '
                     '<b style="color:#d08a00">amber</b> at the tolerance, <b style="color:#c0392b">red</b> over '
                     'it.</p>')
    parts.append(_table(section))
    parts.append("</section>")
    return "\n".join(parts)


def page(title: str, verdict: str, ok: bool, facts: list[tuple[str, str]], sections: list[Section]) -> str:
    """The whole page: ``title``, the verdict line, ``facts`` (label, value:
    files, options, versions) and the sections."""
    word = "PASS" if ok else "FAIL"
    rows = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in facts)
    toc = "".join(f'<li><a href="#part{i}">{_e(s.title)}</a>: <span class="badge {"PASS" if s.ok else "FAIL"}">'
                  f'{"PASS" if s.ok else "FAIL"}</span></li>' for i, s in enumerate(sections, 1))
    body = "\n".join(_section(s, i) for i, s in enumerate(sections, 1))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{_e(title)}</title><style>{STYLE}</style></head><body>\n'
            f'<h1>{_e(title)}</h1>\n<div class="verdict {word}"><span class="badge {word}">{word}</span> '
            f'<span class="mono">{_e(verdict)}</span></div>\n'
            f'<table class="facts">{rows}</table>\n<ul>{toc}</ul>\n{body}\n</body></html>\n')
