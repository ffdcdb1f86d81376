"""Issue 26's changes to the runs: what a run records is what it recorded before, found with less work."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_project_modules_are_what_resolving_every_module_gives(tmp_path):
    # Oracle: resolve every imported module's file, as the runner did before issue 26. The project
    # has a package folder, a module reached through a symbolic link to a file, a folder reached
    # through a symbolic link, and a module outside it; the process first remembers the folders
    # of what it imported (as the fork server does), then imports more (as a run does).
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "a.py").write_text("")
    (root / "real").mkdir()
    (root / "real" / "b.py").write_text("")
    (root / "pkg" / "b_link.py").symlink_to(root / "real" / "b.py")
    (root / "linked").symlink_to(root / "real", target_is_directory=True)
    (root / "real" / "c.py").write_text("")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "d.py").write_text("")
    probe = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        sys.path[:0] = [{str(root)!r}, {str(root / 'linked')!r}, {str(outside)!r}]
        from site_src.execution import _inputs
        root = Path({str(root)!r}).resolve()
        import pkg.a
        _inputs._remember_module_folders(root)
        import pkg.b_link, c, d
        def oracle():
            main_file = Path(getattr(sys.modules.get("__main__"), "__file__", None) or "/").resolve()
            found = set()
            for mod in list(sys.modules.values()):
                f = getattr(mod, "__file__", None)
                if not f:
                    continue
                p = Path(f).resolve()
                if (p.is_relative_to(root) and p not in _inputs.RUNNER_FILES and p != main_file
                        and not _inputs.in_environment(p)):
                    found.add(str(p.relative_to(root)))
            return sorted(found)
        print(_inputs._project_modules(root) == oracle(), _inputs._project_modules(root))
        """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("True ['pkg/__init__.py', 'pkg/a.py', 'real/b.py', 'real/c.py']"), done.stdout


def test_the_fork_server_remembers_the_folders_of_what_it_preloaded():
    from site_src.execution import _forkserver, _inputs

    _inputs._FOLDERS.clear()
    _forkserver._import_ahead([["json", []]])
    assert any(folder == os.path.dirname(sys.modules["json"].__file__) for folder, _ in _inputs._FOLDERS)


def _tiny_site(tmp_path: Path) -> Path:
    import shutil

    root = tmp_path / "site-root"
    shutil.copytree(REPO / "tests" / "fixtures" / "tinysite", root)
    return root


def test_serve_keeps_the_fork_server_between_rebuilds_until_the_library_changes(tmp_path):
    from site_src.build import BuildOptions, NumbersMode, build
    from site_src.execution import execute, servers

    root = _tiny_site(tmp_path)
    source = root / "explainers" / "coin-flips.md"
    options = BuildOptions(root=root, numbers=NumbersMode.SERVE, keep_fork_server=True)
    try:
        first = build(options)
        server = servers._KEPT["server"]
        assert not first.runs[0].cached and server.proc.poll() is None  # kept alive after the build
        source.write_text(source.read_text().replace("n_flips = 2000", "n_flips = 2002"))
        second = build(options)
        assert not second.runs[0].cached and servers._KEPT["server"] is server  # the same server ran it
        assert "2,002" in (root / "docs" / "explainers" / "coin-flips" / "index.md").read_text()
        # A library module changes: a run must not import the server's old copy of it.
        (root / "faircode").mkdir()
        (root / "faircode" / "__init__.py").write_text("")
        source.write_text(source.read_text().replace("n_flips = 2002", "n_flips = 2004"))
        third = build(options)
        assert not third.runs[0].cached and servers._KEPT["server"] is not server
        assert server.proc.poll() is not None  # the old one was ended
    finally:
        servers.close_kept_server()
    assert not servers._KEPT


def test_a_build_without_keep_ends_its_fork_server(tmp_path):
    from site_src.build import BuildOptions, build
    from site_src.execution import execute, servers

    root = _tiny_site(tmp_path)
    build(BuildOptions(root=root))
    assert not servers._KEPT


def test_a_build_that_runs_everything_starts_its_fork_server_before_reading_the_explainers(tmp_path, monkeypatch):
    from site_src import build as build_module
    from site_src.build import BuildOptions, build
    from site_src.execution import _forkserver, servers

    root = _tiny_site(tmp_path)
    events = []
    real_init, real_collect = _forkserver._ForkServer.__init__, build_module.collect

    def init(self, *args, **kwargs):
        events.append("server")
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(_forkserver._ForkServer, "__init__", init)
    monkeypatch.setattr(build_module, "collect", lambda *a, **k: events.append("collect") or real_collect(*a, **k))
    build(BuildOptions(root=root))  # a first build: no record of what the explainers import yet
    assert events == ["collect", "server"]
    assert "numpy" in (root / ".cache" / "fairsite" / servers.PRELOAD).read_text()
    events.clear()
    forced = build(BuildOptions(root=root, force_all=True))
    assert events == ["server", "collect"] and not forced.runs[0].cached  # one server, started first, used
    events.clear()
    build(BuildOptions(root=root))  # an incremental build with nothing to run starts none
    assert events == ["collect"]


def test_the_command_line_starts_the_fork_server_before_importing_the_build_and_the_build_uses_it(tmp_path):
    """`fairsite build --force` and `fairsite check` start their server before ``site_src.build``
    is imported (its imports are what the first run waits for); the build runs in it and starts no other."""
    root = _tiny_site(tmp_path)
    script = textwrap.dedent("""
        import sys
        from site_src import cli
        from site_src.execution import _forkserver

        started = []
        real_init = _forkserver._ForkServer.__init__

        def init(self, *args, **kwargs):
            started.append("site_src.build" in sys.modules)
            real_init(self, *args, **kwargs)

        _forkserver._ForkServer.__init__ = init
        status = cli.main(sys.argv[1:])
        print("status", status, "servers started with the build imported:", started)
    """)

    def fairsite(*command: str) -> str:
        done = subprocess.run([sys.executable, "-c", script, "--root", str(root), *command, "--jobs", "1"],
                              capture_output=True, text=True, cwd=REPO, timeout=600)
        return next((line for line in done.stdout.splitlines() if line.startswith("status")),
                    done.stdout[-2000:] + done.stderr[-2000:])

    # The first build has no record of what the runs import: it starts its server when it runs.
    assert fairsite("build") == "status 0 servers started with the build imported: [True]"
    assert fairsite("accept").startswith("status 0")
    # The two that run everything start theirs first, and only that one.
    assert fairsite("build", "--force") == "status 0 servers started with the build imported: [False]"
    assert fairsite("check") == "status 0 servers started with the build imported: [False]"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux's")
def test_the_first_run_is_forked_on_its_own_imports_and_the_next_after_all_of_them(tmp_path, monkeypatch):
    # `_forkserver._Preload`: the slowest explainer (run first) waits only for what it imported
    # last time; the server imports the rest before it forks the next run. poplib is imported by
    # one explainer only (and by nothing the build or the other explainer imports).
    # Which one was slowest is given, not timed: the slow one slept 1.5 s, and on a loaded machine
    # the other's first run, which waits for the server's imports, took longer (issue 47, item 8).
    from site_src.build import BuildOptions, build
    from site_src.execution import cache

    root = _tiny_site(tmp_path)
    source = root / "explainers" / "coin-flips.md"
    text = source.read_text()
    probe = "import sys\nprint('poplib before the code:', 'poplib' in sys.modules)\n"
    (root / "explainers" / "coin-flips-slow.md").write_text(
        text.replace("title: Coin Flips", "title: Slow Coin Flips").replace("n_flips = 2000\n", "n_flips = 2000\n" + probe))
    source.write_text(text.replace("n_flips = 2000\n", "n_flips = 2000\n" + probe + "import poplib\n"))
    monkeypatch.setattr(cache, "last_run_seconds", lambda entry_dir: 60.0 if entry_dir.name == "coin-flips-slow" else 1.0)
    build(BuildOptions(root=root))  # records what each imports, and which is the slowest
    runs = {r.slug: r for r in build(BuildOptions(root=root, force_all=True, jobs=1)).runs}
    assert "poplib before the code: False" in runs["coin-flips-slow"].stdout
    assert "poplib before the code: True" in runs["coin-flips"].stdout
