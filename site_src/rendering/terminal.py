"""What an explainer printed, as a terminal would show it, as safe HTML.

Colours and styles (ANSI SGR sequences) become ``<span style=...>`` through rich, as Jupyter shows
them; a carriage return overwrites its line and a backspace the character before it, as on a
terminal; every other control sequence (cursor moves, OSC titles and links, bells) and every other
control character is dropped. The text is HTML-escaped, so printed ``<script>`` stays text.
"""

from __future__ import annotations

import io
import re

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
