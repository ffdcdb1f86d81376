"""What an explainer printed, as a terminal would show it, as safe HTML.

Colours and styles (ANSI SGR sequences) become ``<span style=...>`` through rich, as Jupyter shows
them; a carriage return overwrites its line and a backspace the character before it, as on a
terminal; every other control sequence (cursor moves, OSC titles and links, bells) and every other
control character is dropped. The text is HTML-escaped, so printed ``<script>`` stays text.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from rich.console import Console
from rich.text import Text

# ESC-prefixed sequences: CSI (ESC [ ... final byte), OSC / DCS / APC / PM / SOS strings (ended by BEL or
# ESC \), and two-byte escapes. Their 8-bit C1 forms too (0x9b CSI, 0x9d OSC, ...).
_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
_STRING = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_CONTROL_SEQUENCE = re.compile(f"{_CSI}|{_STRING}|\\x1b[ -/]*[0-~]?")
_CONTROL_CHAR = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline


def terminal_text(text: str) -> str:
    """``text`` with only SGR colour sequences left: overwrites applied, other controls dropped."""
    lines = []
    for line in text.replace("\r\n", "\n").split("\n"):
        line = _CONTROL_SEQUENCE.sub(lambda m: m.group(0) if _SGR.fullmatch(m.group(0)) else "", line)
        line = line.rstrip("\r").rsplit("\r", 1)[-1]  # what a terminal leaves: the last overwrite
        while True:  # backspace erases the character before it (not an escape sequence)
            line, n = re.subn(r"[^\x08\x1b](?:\x1b\[[0-9;:]*m)*\x08", lambda m: m.group(0)[1:-1], line)
            if not n:
                break
        # Keep ESC only as the start of an SGR sequence; drop every other control character.
        parts = _SGR.split(line)
        sgrs = _SGR.findall(line)
        line = "".join(_CONTROL_CHAR.sub("", p) + (sgrs[i] if i < len(sgrs) else "") for i, p in enumerate(parts))
        lines.append(line)
    return "\n".join(lines)


def terminal_html(text: str) -> str:
    """The HTML inside a ``<pre>`` that shows ``text`` as a terminal would (escaped, coloured)."""
    console = Console(file=io.StringIO(), record=True, width=100_000, color_system="truecolor",
                      force_terminal=True, legacy_windows=False)
    console.print(Text.from_ansi(terminal_text(text), no_wrap=True, end=""), soft_wrap=True, end="")
    html = console.export_html(inline_styles=True, code_format="{code}")
    return _CONTROL_CHAR.sub("", html.replace("\x1b", ""))


# What one cell's output may put on the page (and so in the site-wide search index, which every
# page loads) and in the notebook: a cell printing more shows its first and last lines, a line
# saying how much is not shown, and a link to the whole output. 200 lines is four screens of a
# laptop; 20 kB keeps a page light whatever the line lengths (a normal page's output is 1-5 kB).
OUTPUT_MAX_LINES = 200
OUTPUT_MAX_CHARS = 20_000


@dataclass(frozen=True)
class BoundedOutput:
    """A cell's output cut to the bound (``OUTPUT_MAX_LINES`` lines and ``OUTPUT_MAX_CHARS``
    characters): ``streams`` are ``(name, text)`` in order, "stdout" or "stderr", with one
    ``("cut", "")`` where lines were left out; ``hidden_lines`` and ``hidden_chars`` say how
    much was (0 when the whole output fits)."""

    streams: list[tuple[str, str]]
    hidden_lines: int = 0
    hidden_chars: int = 0
    total_lines: int = 0
    total_chars: int = 0

    @property
    def cut(self) -> bool:
        return self.hidden_lines > 0 or self.hidden_chars > 0


def bound_output(streams: list[tuple[str, str]]) -> BoundedOutput:
    """A cell's output cut to what a page shows, as mkdocs-jupyter#232 asked of a flood of output.

    Parameters
    ----------
    streams : list of (str, str)
        The cell's ``(name, text)`` stretches in the order written, name "stdout" or "stderr".

    Returns
    -------
    BoundedOutput
        The whole output when it has at most ``OUTPUT_MAX_LINES`` lines and
        ``OUTPUT_MAX_CHARS`` characters; else its first and its last lines, at most half of each
        bound either way (a single line longer than half the characters is cut with " …"), with
        one ``("cut", "")`` stretch between them and the counts of what was left out.
    """
    items = [(name, line) for name, text in streams for line in text.splitlines(keepends=True)]
    total_chars = sum(len(line) for _, line in items)
    if len(items) <= OUTPUT_MAX_LINES and total_chars <= OUTPUT_MAX_CHARS:
        return BoundedOutput([(n, t) for n, t in streams if t], total_lines=len(items), total_chars=total_chars)
    half_lines, half_chars = OUTPUT_MAX_LINES // 2, OUTPUT_MAX_CHARS // 2

    def take(seq):
        kept, chars = [], 0
        for name, line in seq:
            if len(kept) == half_lines or chars >= half_chars:
                break
            if chars + len(line) > half_chars:
                line = line[: half_chars - chars].rstrip("\n") + " …\n"  # a cut line says so
            kept.append((name, line))
            chars += len(line)
        return kept

    head = take(items)
    tail = take(reversed(items[len(head):]))[::-1]
    shown_chars = sum(len(line) for _, line in head + tail)
    hidden_lines = len(items) - len(head) - len(tail)
    out: list[tuple[str, str]] = []
    for name, line in [*head, ("cut", ""), *tail]:
        if out and out[-1][0] == name and name != "cut":
            out[-1] = (name, out[-1][1] + line)
        else:
            out.append((name, line))
    return BoundedOutput(out, hidden_lines=hidden_lines, hidden_chars=max(0, total_chars - shown_chars),
                         total_lines=len(items), total_chars=total_chars)


def plain_text(text: str) -> str:
    """``text`` as a terminal shows it, without colours: what the full-output download holds."""
    return _SGR.sub("", terminal_text(text))


def format_size(chars: int) -> str:
    """``8_400_000`` -> ``"8.4 MB"`` (characters, counted as bytes of text)."""
    for unit, size in (("MB", 1e6), ("kB", 1e3)):
        if chars >= size:
            return f"{chars / size:.1f} {unit}"
    return f"{chars} bytes"


def download_name(slug: str, cell: int, n_cells: int) -> str:
    """The file beside a page's notebook holding cell ``cell``'s whole output when it was cut."""
    return f"{slug}-cell-{cell}-output.txt" if n_cells > 1 else f"{slug}-output.txt"
