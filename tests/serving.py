"""`fairsite serve` in a process of its own, for the tests that talk to it (a module of its own, as
built_sites.py is: two conftest.py files share a name).

Every wait is for something the server says or serves, never for a time: the tests polled a page
for up to 60 s, which a first build on a loaded machine could exceed (issue 47, item 8). Only a
server that is stuck meets `GUARD_S`, the default timeout of one explainer's run.
"""

from __future__ import annotations

import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

GUARD_S = 600  # a serve that says nothing for as long as a run may take is stuck, not slow

# What the server prints when a rebuild has ended, either way (`site_src.cli._serve`).
REBUILT = ("rebuilt ok", "build failed; still serving the previous site")


class Served:
    """``fairsite --root ROOT serve --port PORT [args]``: its stderr read line by line (`said`),
    its pages fetched (`page`, `page_when`); `stop` ends it with Ctrl-C and returns what it said."""

    def __init__(self, root: Path, *args: str):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/"
        self.proc = subprocess.Popen([sys.executable, "-m", "site_src.cli", "--root", str(root), "serve", "--port",
                                      str(port), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.said: list[str] = []
        self._ended = False  # its stderr has been read to the end
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.wait_for("serving the site on")

    def _read(self) -> None:
        with self.proc.stderr:
            for line in self.proc.stderr:
                self._lines.put(line)
        self._lines.put(None)

    def wait_for(self, *markers: str) -> str:
        """The next line the server prints that holds one of ``markers`` (lines before it are kept in `said`)."""
        while True:
            try:
                line = self._lines.get(timeout=GUARD_S)
            except queue.Empty:
                raise AssertionError(f"the server said nothing of {markers} for {GUARD_S} s:\n{''.join(self.said)[-3000:]}")
            if line is None:
                self._ended = True
                raise AssertionError(f"the server ended before saying any of {markers}:\n{''.join(self.said)[-3000:]}")
            self.said.append(line)
            if any(m in line for m in markers):
                return line

    def page(self, path: str = "") -> str:
        """The page at ``path`` as served now. The server listens just after it says it serves: a
        refused connection is tried again while the server lives."""
        while True:
            try:
                with urllib.request.urlopen(self.url + path, timeout=GUARD_S) as response:
                    return response.read().decode()
            except urllib.error.URLError as err:
                if not isinstance(err.reason, ConnectionRefusedError) or self.proc.poll() is not None:
                    raise
            time.sleep(0.05)

    def page_when(self, path: str, holds: Callable[[str], bool]) -> str:
        """The page at ``path`` once ``holds(page)``: fetched again after each rebuild the server reports."""
        body = self.page(path)
        while not holds(body):
            self.wait_for(*REBUILT)
            body = self.page(path)
        return body

    def stop(self) -> str:
        """Ctrl-C, then everything it said."""
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=GUARD_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        while not self._ended and (line := self._lines.get()) is not None:
            self.said.append(line)
        self._ended = True
        return "".join(self.said)
