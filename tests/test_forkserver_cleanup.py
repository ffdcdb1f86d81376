"""The fork server's socket folders (``<tmp>/fairsite-*``) do not pile up (issue 26, stop 35: a
fresh user's fault 5): a build or test killed outright left its folder behind, since the server
dies with the build and nothing ran to remove it. A new server removes the folders whose build
is gone, and never a folder a build still uses: two builds at once keep theirs.

The servers here are real (`_forkserver._ForkServer`), their folders made under ``tmp_path``
(``tempfile.tempdir``), so the machine's own ``/tmp`` is not touched."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from site_src.execution._forkserver import _ForkServer

pytestmark = pytest.mark.skipif(not _ForkServer.available(), reason="the fork server is Linux-only")


def _folder(parent: Path, name: str, *, owner: str | None = None, listening: bool = False,
            extra: str | None = None, age_s: float = 0) -> tuple[Path, socket.socket | None]:
    """A socket folder as a server leaves it: ``fork.sock`` (still listened on, or a bare file as
    after its server died), ``server.log``, an owner file if given; ``age_s`` old."""
    folder = parent / name
    folder.mkdir(mode=0o700)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(folder / "fork.sock"))
    if listening:
        sock.listen(1)
    else:
        sock.close()  # the file stays; no process has it bound any more
        sock = None
    (folder / "server.log").write_bytes(b"")
    if owner is not None:
        (folder / "owner").write_text(owner)
    if extra is not None:
        (folder / extra).write_text("not the server's")
    then = time.time() - age_s
    os.utime(folder, (then, then))
    return folder, sock


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _owner_line(pid: int) -> str:
    """What a server writes of its build, read here from /proc independently."""
    stat = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    return f"{pid} {stat[19].decode()} {os.readlink('/proc/self/ns/pid')}\n"


def _wait_until(done, *, alive) -> bool:
    """Wait until ``done()`` or until the process ``alive`` (a Popen) has ended; ``done()`` then.
    Not for a time: a process starts later on a busy machine (issue 47, item 8)."""
    while not done() and alive.poll() is None:
        time.sleep(0.05)
    return done()


def _swept(server: _ForkServer) -> None:
    """Stop ``server`` the way a build does (its stdin closed) and wait for it to end, however long
    that takes: it sweeps first thing, and leaves its loop only after, so its sweep is done. The
    tests waited up to 30 s for the stale folders to go, a time a busy machine may exceed."""
    server.proc.stdin.close()
    assert server.proc.wait() == 0

def test_a_new_server_removes_the_folders_of_builds_that_are_gone_and_keeps_the_rest(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    hour = 3600
    # Stale: a killed build's folder (its owner is gone), and an older build's (no owner file,
    # nobody listening on its socket, an hour old).
    killed, _ = _folder(tmp_path, "fairsite-killed", owner=f"{_dead_pid()} 12345 {os.readlink('/proc/self/ns/pid')}\n")
    older, _ = _folder(tmp_path, "fairsite-older", age_s=hour)
    # Kept: a running build's folder (its owner lives); an older build's that is still listened
    # on; one made a moment ago (its server may be starting); one holding a file no server
    # makes; one of a build in another pid namespace.
    running, _ = _folder(tmp_path, "fairsite-running", owner=_owner_line(os.getpid()), age_s=hour)
    listened, sock = _folder(tmp_path, "fairsite-listened", listening=True, age_s=hour)
    young, _ = _folder(tmp_path, "fairsite-young")
    foreign, _ = _folder(tmp_path, "fairsite-notes", extra="notes.txt", age_s=hour)
    elsewhere, _ = _folder(tmp_path, "fairsite-elsewhere", owner=f"{_dead_pid()} 1 pid:[1]\n", age_s=hour)
    publishing = tmp_path / "fairsite-publish-x"  # `fairsite publish`'s folder, empty for now
    publishing.mkdir()
    os.utime(publishing, (time.time() - hour, time.time() - hour))
    server = _ForkServer(tmp_path, [])
    try:
        own = Path(server.address).parent
        assert own.parent == tmp_path and (own / "fork.sock").exists()
        _swept(server)
        assert not killed.exists() and not older.exists(), sorted(os.listdir(tmp_path))
        for kept in (running, listened, young, foreign, elsewhere, publishing, own):
            assert kept.is_dir(), kept.name
    finally:
        server.close()
        sock.close()
    assert not own.exists()  # a build that ends removes its own, as before


def test_two_builds_at_once_keep_each_others_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    # The second server sweeps while the first lives (a sweep is done once its server has ended:
    # `_swept`): it leaves the first's folder and removes a killed build's.
    killed, _ = _folder(tmp_path, "fairsite-killed", owner=f"{_dead_pid()} 12345 {os.readlink('/proc/self/ns/pid')}\n")
    first = _ForkServer(tmp_path, [])
    try:
        killed_2, _ = _folder(tmp_path, "fairsite-killed-2", owner=f"{_dead_pid()} 1 {os.readlink('/proc/self/ns/pid')}\n")
        second = _ForkServer(tmp_path, [])
        try:
            _swept(second)
            assert not killed_2.exists()
            assert Path(first.address).exists() and first.proc.poll() is None
        finally:
            second.close()
        _swept(first)
        assert not killed.exists()
    finally:
        first.close()
    assert sorted(os.listdir(tmp_path)) == []


def test_the_folder_of_a_build_killed_outright_is_removed_by_the_next_server(tmp_path, monkeypatch):
    """End to end: a "build" (a process that starts a server) is killed with SIGKILL, as a CI job
    cancelled hard or a test's timeout kills it; its server dies with it and its folder stays
    (on main, for good). The next server removes it."""
    build = subprocess.Popen([sys.executable, "-c", (
        "import tempfile, time, sys\n"
        f"tempfile.tempdir = {str(tmp_path)!r}\n"
        "from site_src.execution._forkserver import _ForkServer\n"
        f"server = _ForkServer({str(tmp_path)!r}, [])\n"
        "print(server.address, flush=True)\n"
        "time.sleep(600)\n")], stdout=subprocess.PIPE, text=True)
    try:
        left = Path(build.stdout.readline().strip()).parent
        # Its server has started and claimed the folder.
        assert _wait_until(lambda: (left / "owner").exists(), alive=build)
    finally:
        build.kill()
        build.wait()
        build.stdout.close()
    assert left.is_dir()  # nothing ran to remove it
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    server = _ForkServer(tmp_path, [])
    try:
        _swept(server)
        assert not left.exists(), sorted(os.listdir(tmp_path))
    finally:
        server.close()
