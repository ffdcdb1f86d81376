"""Fixtures for the end-to-end tests: the real site, built once in a copy of the repository,
served on localhost, and driven by Debian's Chromium through Playwright (no browser download).

Each page a test opens is guarded: a request for anything but the local server is aborted and
recorded, console errors and uncaught exceptions are recorded, and ``open_page`` asserts both
lists are empty when the test ends.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import http.server
import os
import shutil
import subprocess
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
_CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"]
# What a fresh clone would hold: no caches, no previous output, no virtualenv.
_NOT_COPIED = shutil.ignore_patterns(".git", ".cache", "site", "docs", ".venv", ".fairsite-stage", ".fairsite.lock",
                                     ".hypothesis", ".pytest_cache", "__pycache__", "*.egg-info", "artifacts")


def pytest_collection_modifyitems(config, items):
    if not CHROMIUM.exists():
        reason = f"{CHROMIUM} is missing: install Debian's chromium (`apt-get install -y chromium`, as .ci/run does)"
        for item in items:
            if "e2e" in item.nodeid:
                item.add_marker(pytest.mark.skip(reason=reason))


def _in_ci() -> bool:
    # CI services set CI=true (GitHub Actions, GitLab, .ci/run); "0", "false" and "" mean a local run.
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI a skipped browser test is a failure: a missing Chromium or Playwright must not
    leave the suite green with the browser tests quietly not run."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and _in_ci() and "e2e" in item.nodeid and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"browser test skipped under CI (CI={os.environ['CI']}): {reason}"


@pytest.fixture(scope="session")
def site_root(request, tmp_path_factory) -> Path:
    """A copy of the repository with the real site built in it (``site/``), once per test run.

    Under pytest-xdist the browser test files run on several workers; the first to ask builds the
    site in the run's shared temporary folder while holding a lock, and the others wait and read
    the same build (the pattern pytest-xdist documents for a session fixture made once). The tests
    only read it.
    """
    if getattr(request.config, "workerinput", None) is None:  # one process: this session's own
        return _build_real_site(tmp_path_factory.mktemp("e2e"))
    shared = tmp_path_factory.getbasetemp().parent / "e2e-real-site"  # one folder per run, all workers
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        done = shared / "built"
        if not done.exists():
            shutil.rmtree(shared / "repo", ignore_errors=True)  # a build that failed half-way
            _build_real_site(shared)
            done.write_text("ok")
    return shared / "repo"


def _build_real_site(folder: Path) -> Path:
    """Copy the repository into ``folder/repo`` as a fresh clone would hold it, commit it and build the site."""
    from site_src.build import BuildOptions, build

    root = folder / "repo"
    shutil.copytree(REPO, root, ignore=_NOT_COPIED)
    # A clone has a commit: the pages name it (footer, "Source and verify"), so make one.
    git = ["git", "-C", str(root), "-c", "user.name=e2e", "-c", "user.email=e2e@localhost", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "e2e"], check=True)
    os.environ.setdefault("MPLBACKEND", "Agg")
    build(BuildOptions(root=root, jobs=2))
    return root


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextlib.contextmanager
def serve(handler_class, directory: Path):
    """Serve ``directory`` with ``handler_class`` on a free localhost port; yields the base URL (no slash)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler_class, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="session")
def base_url(site_root):
    """The built site served on a free localhost port for the whole session."""
    with serve(_QuietHandler, site_root / "site") as url:
        yield url + "/"


@pytest.fixture(scope="session")
def pages(site_root) -> list[str]:
    """Every page of the built site, as paths relative to its root ("" for the home page)."""
    site = site_root / "site"
    paths = sorted(p.relative_to(site).parent.as_posix() + "/" for p in site.rglob("index.html"))
    return ["" if p == "./" else p for p in paths]


PREFIX = "/fair-code/"  # the path of the default site_url: where project pages serve the site


def prefixed_handler(prefix: str):
    """A handler serving the site under ``prefix`` (its directory given to `serve`), as project
    pages serve it: anything else, or a missing file, gets the site's 404.html with status 404."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format, *args):  # noqa: A002 - the base class's name
            pass

        def send_head(self):
            path = urlsplit(self.path).path
            if path.startswith(prefix):
                self.path = "/" + path[len(prefix):]
                target = Path(self.translate_path(self.path))
                if target.is_file() or (target / "index.html").is_file():
                    return super().send_head()
            body = (Path(self.directory) / "404.html").read_bytes()
            self.send_response(404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return None

    return Handler


_PrefixHandler = prefixed_handler(PREFIX)


@pytest.fixture
def prefixed_url(site_root):
    """The built site served under PREFIX, with GitHub-Pages-style 404s; the URL has no slash."""
    with serve(_PrefixHandler, site_root / "site") as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=_CHROMIUM_ARGS)
        yield browser
        browser.close()


class Guard:
    """What went wrong on the pages of one test: requests that left localhost, console errors."""

    def __init__(self):
        self.outside: list[str] = []
        self.errors: list[str] = []

    def route(self, route):
        host = urlsplit(route.request.url).hostname
        if host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()

    def console(self, msg):
        if msg.type == "error":
            self.errors.append(f"console: {msg.text} ({msg.location.get('url', '')})")


@pytest.fixture
def open_page(browser, base_url):
    """``open_page(path, color_scheme="light")`` -> a Playwright page at ``base_url + path``, guarded."""
    guard = Guard()
    contexts = []

    def _open(path: str = "", *, color_scheme: str = "light"):
        context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=color_scheme,
                                      accept_downloads=True, service_workers="block")
        contexts.append(context)
        context.route("**/*", guard.route)
        page = context.new_page()
        page.on("console", guard.console)
        page.on("pageerror", lambda exc: guard.errors.append(f"uncaught: {exc}"))
        response = page.goto(base_url + path, wait_until="load")
        assert response is not None and response.ok, f"{path}: HTTP {response.status if response else 'no response'}"
        return page

    yield _open
    for context in contexts:
        context.close()
    assert not guard.outside, f"requests left localhost: {guard.outside}"
    assert not guard.errors, f"errors in the browser: {guard.errors}"
