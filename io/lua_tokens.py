# SPDX-License-Identifier: GPL-3.0-or-later
"""A small Lua tokenizer of our own, for :mod:`.lua_scan`: comments and
long brackets skipped, strings decoded, numbers read as Lua reads them
(decimal and hexadecimal, floats with exponents); no Lua is run.
"""
from __future__ import annotations

import re

LUA_KEYWORDS = frozenset("and break do else elseif end false for function goto if in local nil not or repeat "
                         "return then true until while".split())

NAME, NUM, STR, OP = "name", "num", "str", "op"

#: the tokens between comments and strings: a newline, a name, a number, an operator, any other character
_TOKEN = re.compile(r"""\n|[A-Za-z_\u0080-\U0010ffff][A-Za-z0-9_\u0080-\U0010ffff]*"""
                    r"|0[xX][0-9A-Fa-f]*(?:\.[0-9A-Fa-f]*)?(?:[pP][+-]?[0-9]+)?"
                    r"|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                    r"|\.\.\.|\.\.|==|~=|<=|>=|<<|>>|//|::|[^ \t\f\v]")
#: where a comment or a string starts
_SPECIAL = re.compile(r"--|\[=*\[|[\"']")
_KIND = {**{c: NAME for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"}, **{c: NUM for c in "0123456789"}}
_STRING_BODY = {'"': re.compile(r'[^"\\\n]*'), "'": re.compile(r"[^'\\\n]*")}
_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, '"': 34, "'": 39, "\n": 10}
_HEX = frozenset("0123456789abcdefABCDEF")


def _long_open(text: str, i: int) -> int | None:
    """The level of a long bracket ``[==[`` opening at ``i``, else None."""
    if not text.startswith("[", i):
        return None
    j = i + 1
    while j < len(text) and text[j] == "=":
        j += 1
    return j - i - 1 if text.startswith("[", j) else None


def _number(s: str):
    try:
        if s[:2] in ("0x", "0X"):
            return float.fromhex(s) if "." in s or "p" in s or "P" in s else int(s[2:], 16)
        return float(s) if "." in s or "e" in s or "E" in s else int(s)
    except (ValueError, OverflowError):
        return None         # malformed (or too many digits): not a number literal


def _short_string(text: str, i: int):
    """The value of the quoted string at ``i``, where it ends, and the
    newlines it spans. An unfinished string ends at its line's end."""
    quote, body, n = text[i], _STRING_BODY[text[i]], len(text)
    out, j, lines = bytearray(), i + 1, 0
    while True:
        m = body.match(text, j)
        out += m.group().encode("utf-8")
        j = m.end()
        if j >= n or text[j] == "\n":
            break
        if text[j] == quote:
            j += 1
            break
        j += 1                               # a backslash
        e = text[j:j + 1]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            lines += e == "\n"
            j += 1
        elif e == "z":
            k = j + 1
            while k < n and text[k] in " \t\n\f\v":
                k += 1
            lines += text.count("\n", j, k)
            j = k
        elif e == "x" and len(text[j + 1:j + 3]) == 2 and set(text[j + 1:j + 3]) <= _HEX:
            out.append(int(text[j + 1:j + 3], 16))
            j += 3
        elif e.isdigit() and e.isascii():
            k = j
            while k < j + 3 and k < n and text[k].isascii() and text[k].isdigit():
                k += 1
            out.append(min(int(text[j:k]), 255))
            j = k
        elif e == "u" and text.startswith("{", j + 1) and text.find("}", j + 3, j + 11) > 0 \
                and set(text[j + 2:text.find("}", j + 3, j + 11)]) <= _HEX:
            k = text.find("}", j + 3, j + 11)
            code = int(text[j + 2:k], 16)
            out += (chr(code) if code <= 0x10FFFF else "\ufffd").encode("utf-8", "surrogatepass")
            j = k + 1
        else:                                # an unknown escape: the character itself
            out += e.encode("utf-8")
            j += len(e)
    return out.decode("utf-8", "replace"), j, lines


def tokens(text: str):
    """(kind, value, line) for each token of Lua source ``text`` (newlines
    already ``\\n``): comments skipped, strings decoded, numbers as int or
    float (None when malformed); any other character is an OP of its own."""
    i, n, line = 0, len(text), 1
    while i < n:
        m = _SPECIAL.search(text, i)
        stop = n if m is None else m.start()
        for s in _TOKEN.findall(text, i, stop):
            if s == "\n":
                line += 1
                continue
            kind = _KIND.get(s[0])
            if kind is None:
                kind = NUM if s[0] == "." and s[1:2].isdigit() else NAME if s[0] >= "\x80" else OP
            yield kind, _number(s) if kind == NUM else s, line
        if m is None:
            return
        start = m.group()
        if start == "--":
            level = _long_open(text, stop + 2)
            if level is not None:
                end = text.find("]" + "=" * level + "]", stop + level + 4)
                i = n if end < 0 else end + level + 2
            else:
                end = text.find("\n", stop)
                i = n if end < 0 else end
        elif start[0] == "[":
            level = len(start) - 2
            end = text.find("]" + "=" * level + "]", stop + level + 2)
            i = n if end < 0 else end + level + 2
            body = text[stop + level + 2:n if end < 0 else end]
            yield STR, body[1:] if body.startswith("\n") else body, line
        else:
            value, i, spanned = _short_string(text, stop)
            yield STR, value, line
            line += spanned
            continue
        line += text.count("\n", stop, i)
