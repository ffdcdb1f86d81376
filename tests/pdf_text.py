"""The pages and text of a PDF that Chromium printed (``page.pdf()``), for the tests of a printed
report (tests/e2e/test_reports.py).

No PDF library is in the lock, and what Chromium (Skia) writes needs little of PDF: objects not
in object streams, each page's content one Flate-compressed stream, text in Type0 fonts with
Identity-H encoding (two-byte glyph codes) and a ToUnicode CMap per font. So: the page objects
in the page tree's order, and on each page the strings shown by ``Tj`` and ``TJ`` in the font
``Tf`` chose, decoded by that font's CMap. Enough to say what text is on which page; not a
general reader (a PDF of another writer may not read).
"""

from __future__ import annotations

import re
import zlib

_OBJECT = re.compile(rb"(\d+) 0 obj\s*(.*?)\s*endobj", re.S)
_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.S)
_REF = rb"(\d+) 0 R"


def _objects(data: bytes) -> dict[int, bytes]:
    return {int(m[1]): m[2] for m in _OBJECT.finditer(data)}


def _stream(body: bytes) -> bytes:
    m = _STREAM.search(body)
    if m is None:
        return b""
    raw = m[1]
    return zlib.decompress(raw) if b"/FlateDecode" in body[:m.start()] else raw


def _cmap(text: bytes) -> dict[int, str]:
    """A ToUnicode CMap's glyph codes -> text (``bfchar`` and ``bfrange`` sections)."""
    out: dict[int, str] = {}
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", text, re.S):
        for src, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            out[int(src, 16)] = bytes.fromhex(dst.decode()).decode("utf-16-be")
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", text, re.S):
        for lo, hi, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            start = int(dst, 16)
            for i, code in enumerate(range(int(lo, 16), int(hi, 16) + 1)):
                out[code] = chr(start + i)
    return out


def _page_numbers(objects: dict[int, bytes]) -> list[int]:
    """The page objects in reading order: the page tree from the catalog's ``/Pages``, depth first."""
    catalog = next(body for body in objects.values() if re.search(rb"/Type\s*/Catalog", body))

    def walk(number: int) -> list[int]:
        body = objects[number]
        if re.search(rb"/Type\s*/Pages\b", body):
            kids = re.search(rb"/Kids\s*\[(.*?)\]", body, re.S)[1]
            return [page for kid in re.findall(_REF, kids) for page in walk(int(kid))]
        return [number]

    return walk(int(re.search(rb"/Pages\s+" + _REF, catalog)[1]))


def _fonts(objects: dict[int, bytes], page: bytes) -> dict[bytes, dict[int, str]]:
    resources = re.search(rb"/Resources\s+" + _REF, page)
    resources = objects[int(resources[1])] if resources else page
    fonts = re.search(rb"/Font\s*<<(.*?)>>", resources, re.S)
    out = {}
    for name, number in re.findall(rb"/(\w+)\s+" + _REF, fonts[1] if fonts else b""):
        unicode = re.search(rb"/ToUnicode\s+" + _REF, objects[int(number)])
        out[name] = _cmap(_stream(objects[int(unicode[1])])) if unicode else {}
    return out


def _shown(content: bytes, fonts: dict[bytes, dict[int, str]]) -> str:
    """The text a content stream shows: each string in its font, a new line at the end of each
    text object (``ET``). Skia places runs, even single glyphs, one by one: the spaces between
    them are not all there, so compare text without white space (`squeezed`)."""
    text, cmap = [], {}
    for m in re.finditer(rb"/(\w+)\s+[\d.]+\s+Tf|<([0-9A-Fa-f]*)>|\[([^\]]*)\]\s*TJ|(ET)\b", content):
        if m[1]:
            cmap = fonts.get(m[1], {})
        elif m[2] is not None:
            codes = bytes.fromhex(m[2].decode())
            text.append("".join(cmap.get(int.from_bytes(codes[i:i + 2], "big"), "") for i in range(0, len(codes), 2)))
        elif m[3] is not None:
            continue  # a TJ array: its strings were read one by one above
        else:
            text.append("\n")
    return "".join(text)


def squeezed(text: str) -> str:
    """``text`` without white space: how a PDF's text and the text expected in it are compared."""
    return "".join(text.split())


def pdf_pages(data: bytes) -> list[str]:
    """The text of each page of a PDF that Chromium printed, in order."""
    objects = _objects(data)
    pages = []
    for number in _page_numbers(objects):
        page = objects[number]
        contents = re.search(rb"/Contents\s+(?:\[(.*?)\]|" + _REF + rb")", page, re.S)
        refs = re.findall(_REF, contents[1]) if contents[1] else [contents[2]]
        fonts = _fonts(objects, page)
        pages.append("".join(_shown(_stream(objects[int(r)]), fonts) for r in refs))
    return pages
