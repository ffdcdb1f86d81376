"""``fairsite serve``'s server: MkDocs' live-reload server, plus a banner on every page it serves
while the last rebuild failed (the previous site stays served, and the browser says so: the
explainer and the error, as the terminal prints them). The next good rebuild clears it; the
files in ``site/`` are never touched, the banner is added as a page is sent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from mkdocs.livereload import LiveReloadServer

from site_src.errors import BuildFailed, SiteError

_MAX_LINES = 60  # of the error in the banner; the terminal has all of it


class ServeState:
    """What the last rebuild left to say, shared by the rebuild thread and the server's:
    ``banner`` is None after a rebuild that succeeded, else the failure's banner (UTF-8 HTML)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._banner: bytes | None = None

    def failed(self, err: SiteError) -> None:
        with self._lock:
            self._banner = failure_banner(err).encode()

    def succeeded(self) -> None:
        with self._lock:
            self._banner = None

    @property
    def banner(self) -> bytes | None:
        with self._lock:
            return self._banner


def failure_banner(err: SiteError) -> str:
    """The banner's HTML for a failed rebuild (``templates/serve-failed.html.j2``).

    Parameters
    ----------
    err : SiteError
        What the rebuild raised; a ``BuildFailed`` lists every problem, each with its explainer.

    Returns
    -------
    str
        A Material "danger" admonition naming the explainers the errors name, in order, and the
        error's text as the terminal prints it (its first ``_MAX_LINES`` lines), HTML-escaped.
    """
    from site_src.rendering.environment import make_environment

    errors = err.errors if isinstance(err, BuildFailed) else [err]
    explainers = list(dict.fromkeys(e.explainer for e in errors if e.explainer))
    lines = str(err).splitlines()
    if len(lines) > _MAX_LINES:
        lines = [*lines[:_MAX_LINES], f"... ({len(lines) - _MAX_LINES} more lines in the terminal)"]
    template = make_environment([]).get_template("serve-failed.html.j2")
    return template.render(explainers=explainers, message="\n".join(lines))


def with_banner(html: bytes, banner: bytes) -> bytes:
    """``html`` (a page as MkDocs wrote it) with ``banner`` inserted at the top of its content:
    inside Material's article, so the theme styles it; at the top of the body on a page without
    one (the 404 page); first, if the page has no body tag."""
    for anchor in (b'<article class="md-content__inner md-typeset">', b"<body"):
        at = html.find(anchor)
        if at >= 0:
            end = html.index(b">", at) + 1
            return html[:end] + banner + html[end:]
    return banner + html


def live_server(*, builder: Callable[[], None], state: ServeState, **kwargs) -> LiveReloadServer:
    """MkDocs' live-reload server whose HTML pages carry ``state``'s banner while it has one.

    Parameters
    ----------
    builder : callable
        The rebuild, run on every change; it reports its outcome to ``state`` and must not raise
        (MkDocs' server would stop reloading the browsers).
    state : ServeState
        Read as each page is sent, so the banner comes and goes with the rebuilds.
    **kwargs
        ``host``, ``port``, ``root`` (the ``site/`` folder): as ``LiveReloadServer`` takes them.
    """

    class _Server(LiveReloadServer):
        def _inject_js_into_html(self, content, epoch):
            banner = state.banner
            return super()._inject_js_into_html(content if banner is None else with_banner(content, banner), epoch)

    return _Server(builder=builder, **kwargs)
