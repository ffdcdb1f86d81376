"""``fairsite``: build, check, accept, serve and scaffold the explainer site.

    fairsite build [--jobs N] [--budget S] [--force [SLUG ...]] [--explain]
    fairsite check [--jobs N] [--budget S]  # CI: everything fresh, strict, numbers against the snapshot
    fairsite check --against URL_OR_DIR  # which pages of a published site are out of date (no build)
    fairsite publish (--to DIR | --to-git REPO [--branch gh-pages]) [--allow-dirty] [--jobs N] [--budget S]
    fairsite accept [SLUG ...]         # record the cited numbers of these explainers (all if none)
    fairsite serve [--port P] [--host H]  # rebuild on change to explainers, templates, library, data
    fairsite new "Title" [--slug S]    # scaffold an explainer that builds at once
    fairsite audit new NAME --data FILE | verify RECORD --data FILE | export NAME --out DIR  # reports
"""

from __future__ import annotations

import argparse
import re
import dataclasses
import errno
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

from rich.console import Console
from rich.table import Table
from rich.text import Text

from site_src import filestate
from site_src.errors import BuildFailed, SiteError

# Wide when not on a terminal, so CI logs keep whole explainer names and reasons.
console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)
# One run per core by default (the cores this process may use, where the OS says).
_JOBS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
_BUDGET_S = 10.0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fairsite`` console script (usage at the top of this module).

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``fairsite``; ``sys.argv[1:]`` when None.

    Returns
    -------
    int
        The exit status: 0 on success, 1 when the build or check failed (the error is printed,
        ``docs/`` and ``site/`` are as they were), 2 for bad arguments or a missing ``site`` extra,
        128 + the signal's number when interrupted, as a shell reports a process a signal ended:
        130 for Ctrl-C (SIGINT), 143 for SIGTERM (`_interrupted_status`).
    """
    args = _parse(argv)
    from site_src.extra import INSTALL_HINT, missing_site_packages

    if missing := missing_site_packages():  # a library-only install (issue 25): say so, not a traceback
        console.print(f"[bold red]fairsite needs the site extra:[/] {', '.join(missing)} not installed; "
                      f"install it with {INSTALL_HINT}", highlight=False)
        return 2
    root = args.root.resolve()
    if args.command == "audit" and args.audit == "verify":  # a record and its data: no repository needed
        from site_src.audit_commands import run as audit

        return audit(root, args)
    if problem := _not_a_repository(root):
        console.print(f"[bold red]{args.command} failed:[/] {problem}", highlight=False)
        return 2
    _interrupt_on_signals()
    try:
        outcome = _command(root, args)
    except SiteError as err:
        if args.command == "check" or getattr(args, "explain", False):
            _runs_of_failed(err, args)
        console.print(f"[bold red]{args.command} failed:[/]")
        console.print(str(err), markup=False)
        return 1
    except KeyboardInterrupt:
        console.print("[yellow]interrupted; docs/ and site/ are as they were[/]")
        return _interrupted_status()
    return outcome if isinstance(outcome, int) else _built(outcome, root, args)


def _interrupt_on_signals() -> None:
    """SIGTERM and SIGINT both interrupt the build as Ctrl-C does, so the runs are killed and
    nothing is lost: CI cancels a job with SIGTERM, and a job started with `&` by a shell without
    job control inherits SIGINT ignored (Python then never raises KeyboardInterrupt)."""
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)


def _command(root: Path, args: argparse.Namespace):
    """Run the command ``args`` names: its exit status, or the report of the build it ran."""
    if args.command == "new":
        return _new(root, args)
    if args.command == "audit":
        from site_src.audit_commands import run as audit

        return audit(root, args)
    if args.command == "serve":
        return _serve(root, args)
    if args.command == "check" and args.against:
        return _against(root, args.against)
    if args.command in ("check", "accept", "publish"):
        _warn_if_not_locked(root)
    if args.command == "publish":
        return _publish(root, args)
    if args.command == "build" and args.force is None and _nothing_changed(root, args):
        return 0
    server = _early_fork_server(root, args)
    try:
        from site_src.build import build

        with _Progress() as progress:
            return build(_options(root, args, progress, fork_server=server))
    finally:
        if server is not None:
            server.close()  # a no-op once the build has closed it


def _built(report, root: Path, args: argparse.Namespace) -> int:
    """Tell what a build that succeeded did (its summary, long pages, numbers accepted); status 0."""
    _summary(report, explain=args.command == "check" or getattr(args, "explain", False), budget_s=args.budget)
    if not getattr(report, "skipped", False):
        # Issue 28: about 1,200 visible words a page; a warning with each long page's count.
        from site_src.checking.words import over_word_budget

        for line in over_word_budget(report.words):
            console.print("[yellow]words:[/] ", end="")
            console.print(line, markup=False)
    for path in report.accepted:
        console.print(f"accepted numbers: {Path(path).relative_to(root)}")
    done = "nothing changed, site/ is up to date" if report.skipped else "site/ written"
    console.print(f"[green]{args.command} ok[/]: {done} ({report.wall_s:.1f} s)")
    return 0


def _not_a_repository(root: Path) -> str | None:
    """Why ``root`` is not a site's repository to build in, or None if it is one."""
    if not root.is_dir():
        return f"no repository at {root} (--root must be a folder)"
    if not (root / "mkdocs.yml").is_file() and not (root / "explainers").is_dir():
        # Started inside the repository (in explainers/, say): say where to run it, before a lock
        # file or anything else is left in the wrong folder.
        above = next((p for p in root.parents if (p / "mkdocs.yml").is_file() and (p / "explainers").is_dir()), None)
        hint = f"; did you mean --root {above}?" if above else ""
        return (f"{root} is not a site's repository (no mkdocs.yml, no explainers/): run fairsite from the repository "
                f"root or pass --root{hint}")
    return None


def _runs_of_failed(err: SiteError, args) -> None:
    """The runs table of a build that failed (`BuildFailed.runs`), each run with why it ran: a
    failed build is when a writer asks (a fresh user's finding, issue 26)."""
    if getattr(err, "runs", None):
        _summary(SimpleNamespace(runs=err.runs, warnings=[], notes=[], edited=[]), explain=True, budget_s=args.budget)


def _nothing_changed(root: Path, args) -> bool:
    """Say "nothing changed" and print the last build's summary if no file it consulted moved
    (site_src.filestate), without importing the build; False when a build must run."""
    started = time.perf_counter()
    summary = filestate.unchanged(root)
    if summary is None:
        return False
    runs = [SimpleNamespace(**r, cached=True) for r in summary["runs"]]
    for run in runs:  # what the progress display says of a cache hit
        console.print(f"  [green]ok[/] {run.slug} (cached; its run took {run.duration_s:.1f} s)")
    report = SimpleNamespace(runs=runs, warnings=[], notes=summary["notes"], edited=[], wall_s=time.perf_counter() - started)
    _summary(report, explain=args.explain, budget_s=args.budget)
    console.print(f"[green]build ok[/]: nothing changed, site/ is up to date ({report.wall_s:.1f} s)")
    return True


def _warn_if_not_locked(root: Path) -> None:
    from faircode.environment import print_lock_warning

    print_lock_warning(root, console)


def _closest_option(option: str, options: list[str]) -> str:
    """The "(did you mean '--force'?)" hint for a mistyped option, or "". Compared without their
    dashes: every option starts with them, and with them `--bogus` was "close" to `--jobs`."""
    from faircode.formatting import closest

    names = {o.lstrip("-"): o for o in options}
    close = closest(option.lstrip("-"), names)
    return f" (did you mean {names[close]!r}?)" if close is not None else ""


_signalled: list[int] = []  # the signals that interrupted this command, in order


def _interrupt(signum, frame):
    """SIGINT (Ctrl-C) or SIGTERM (what CI's cancel and ``timeout`` send): the same stop, the runs
    killed and nothing lost; which one it was is kept for the exit status (`_interrupted_status`)."""
    _signalled.append(signum)
    raise KeyboardInterrupt


def _interrupted_status() -> int:
    """The exit status of an interrupted command: 128 + the number of the signal that stopped it,
    as a shell reports a process a signal ended (130 for Ctrl-C, 143 for SIGTERM), so a caller
    tells a cancelled job from a user's Ctrl-C; 130 for a KeyboardInterrupt no signal of ours raised."""
    return 128 + (_signalled[-1] if _signalled else signal.SIGINT)


# Why a command lacks an option another has, where the reason is what the user needs.
_NOT_HERE = {("check", "--force"): ": check runs every explainer fresh",
             ("check", "--explain"): ": check always explains"}


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """The arguments, or exit 2 with the usage of the command at fault.

    argparse refuses an option the command does not have with the top-level usage and no hint
    (Python 3.11; a fresh user's `fairsite build --forse`): the command's own usage is shown,
    with the option meant (did you mean '--force'?), the commands that have it, or, for the
    top-level ``--root`` after the command, where it goes."""
    parser = _parser()
    commands = parser._fairsite_commands
    given = list(sys.argv[1:] if argv is None else argv)
    # The command itself mistyped (`fairsite bild`): argparse lists the commands; say which was meant.
    word = next((a for i, a in enumerate(given) if not a.startswith("-") and (i == 0 or given[i - 1] != "--root")), None)
    if word is not None and word not in commands:
        from faircode.formatting import did_you_mean  # only on the error paths: 3 ms on every command

        if close := did_you_mean(word, commands):
            parser.error(f"no command {word!r}{close}; the commands: {', '.join(commands)}")
    args, unknown = parser.parse_known_args(argv)
    if not unknown:
        return args
    command = commands[args.command]
    here = [o for a in command._actions for o in a.option_strings]
    hints, rest = [], list(unknown)
    while rest:
        arg = rest.pop(0)
        option = arg.split("=", 1)[0]
        top_level = option.startswith("-") and any(option in a.option_strings for a in parser._actions)
        close = _closest_option(option, here) if option.startswith("-") and not top_level else ""
        if (top_level or close) and "=" not in arg and rest and not rest[0].startswith("-"):
            arg = f"{arg} {rest.pop(0)}"  # its value (`--root .`, `--hots 0.0.0.0`), said with it
        elsewhere = [name for name, p in commands.items() if name != args.command
                     and any(option in a.option_strings for a in p._actions)]
        if top_level:
            hints.append(f"{arg} (an option of fairsite itself: put it before the command, "
                         f"fairsite {arg} {args.command})")
        elif close:
            hints.append(arg + close)
        elif elsewhere:
            why = _NOT_HERE.get((args.command, option), "")
            hints.append(f"{arg} (an option of fairsite {' and '.join(elsewhere)}, not of {args.command}{why})")
        else:
            hints.append(arg)
    command.error(f"unrecognized arguments: {'; '.join(hints)}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fairsite", description="Build the Fair Code explainer site.")
    parser.add_argument("--root", type=Path, default=Path("."), help="repository root (default: .)")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build docs/ and site/; unchanged runs come from the cache")
    b.add_argument("--force", nargs="*", metavar="SLUG", help="re-run these explainers (all if none named)")
    b.add_argument("--explain", action="store_true", help="say for each explainer whether it re-ran and why")
    c = sub.add_parser("check", help="CI: run everything fresh, check every number, mkdocs --strict")
    c.add_argument("--against", metavar="URL_OR_DIR",
                   help="instead, compare a published site (its fairsite-manifest.json) with the working tree "
                        "and list the pages that are out of date; exit 1 if any")
    pub = sub.add_parser("publish", help="check, then publish the site that passed to a folder or a git branch")
    dest = pub.add_mutually_exclusive_group(required=True)
    dest.add_argument("--to", type=Path, metavar="DIR", help="replace this folder's contents with the site")
    dest.add_argument("--to-git", metavar="REPO",
                      help="commit the site on a branch of this repository (path, URL or remote name)")
    pub.add_argument("--branch", default="gh-pages", help="the branch for --to-git (default: gh-pages)")
    pub.add_argument("--allow-dirty", action="store_true", help="publish even with uncommitted changes")
    a = sub.add_parser("accept", help="record the numbers the prose cites as the accepted ones")
    a.add_argument("slugs", nargs="*", metavar="SLUG", help="explainers to accept (all if none named)")
    s = sub.add_parser("serve", help="serve the site and rebuild on change")
    s.add_argument("--port", type=_port, default=8000, help="TCP port, 1-65535 (default 8000)")
    s.add_argument("--host", default="127.0.0.1",
                   help="the address to serve on (default 127.0.0.1, this machine only; 0.0.0.0 for every network "
                        "interface)")
    for p in (b, c, a, s, pub):
        p.add_argument("--jobs", "-j", type=_positive_int, default=_JOBS,
                       help=f"explainers whose code runs at once (default: the number of cores, {_JOBS} here); "
                            "one whose code has ended may still be saving its figures")
    for p in (b, c, a, s, pub):
        p.add_argument("--budget", type=_positive_float, default=_BUDGET_S, metavar="SECONDS",
                       help=f"report every explainer whose code takes more CPU time (default {_BUDGET_S:g} s; "
                            "waiting for a core on a busy machine does not count)")
    n = sub.add_parser("new", help="scaffold a new explainer in the house form")
    n.add_argument("title", help='the explainer\'s title, e.g. "Bootstrap Intervals for Fairness Gaps"')
    n.add_argument("--slug", help="the file's name, explainers/SLUG.md, and the page's address (lowercase a-z, 0-9 "
                              "and '-'); default: made from the title, which needs Latin letters to make one")
    from site_src.audit_commands import add_parser as add_audit  # fairsite audit new | verify | export

    au = add_audit(sub)
    parser._fairsite_commands = {"build": b, "check": c, "publish": pub, "accept": a, "serve": s, "new": n, "audit": au}
    for listed in sub._choices_actions:  # `fairsite serve -h` says what the command does, as `fairsite -h` does
        parser._fairsite_commands[listed.dest].description = listed.help
    return parser


def _bounded(kind: type, within: Callable[[float], bool], expected: str) -> Callable[[str], float]:
    """An argparse ``type``: ``text`` as ``kind`` if ``within`` holds, else a message saying what was expected."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not within(value):
            raise argparse.ArgumentTypeError(f"must be {expected}, got {text!r}")
        return value
    return parse


_positive_int = _bounded(int, lambda v: v >= 1, "a positive integer")
_positive_float = _bounded(float, lambda v: 0 < v < float("inf"), "a positive number of seconds")
_port = _bounded(int, lambda v: 1 <= v <= 65535, "a TCP port from 1 to 65535")


def _early_fork_server(root: Path, args):
    """For a command that runs every explainer (``check``, ``build --force``), the fork server,
    started before the build is imported: its imports are what the first run waits for, and
    importing the build takes a third of a second (issue 26). None otherwise, or where the build
    would start none early (`start_server_early`)."""
    if not (args.command == "check" or (args.command == "build" and args.force == [])):
        return None
    from site_src.execution.servers import start_server_early

    return start_server_early(root, root / ".cache" / "fairsite")


def _options(root: Path, args, progress: _Progress, *, fork_server=None):
    from site_src.build import BuildOptions, NumbersMode, check_options

    common = dict(root=root, jobs=args.jobs, on_run_start=progress.start, on_run_done=progress.done,
                  on_stage=progress.stage)
    if args.command == "check":
        return dataclasses.replace(check_options(**common), fork_server=fork_server)
    if args.command == "accept":
        return BuildOptions(**common, numbers=NumbersMode.ACCEPT, accept=frozenset(args.slugs))
    named = args.force  # None: no --force; []: --force alone (every explainer); else the slugs named
    return BuildOptions(**common, force_all=named == [], force=frozenset(named or ()), fork_server=fork_server)


def _publish(root: Path, args) -> int:
    from site_src.publish import publish

    try:
        with _Progress() as progress:
            report = publish(root, to_dir=args.to, to_git=args.to_git, branch=args.branch,
                             allow_dirty=args.allow_dirty, jobs=args.jobs, on_run_done=progress.done)
    except BuildFailed as err:
        _runs_of_failed(err, args)
        console.print("[bold red]publish failed: the site did not pass the check; nothing was published[/]")
        console.print(str(err), markup=False)
        return 1
    _summary(report.build, explain=True, budget_s=args.budget)
    facts = report.facts
    made = f" as commit {report.git_commit[:7]}" if report.git_commit else ""
    console.print(f"[green]publish ok[/]: the site built from {facts.short_commit} on {facts.date} passed the check "
                  f"and is in {report.destination}{made} ({report.build.wall_s:.1f} s)")
    return 0


def _against(root: Path, source: str) -> int:
    """Print which pages of the site at ``source`` are out of date; 0 if none, 1 otherwise."""
    from site_src.publish import online_status

    status = online_status(source, root)
    out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    online, here = status.online, status.here
    out.print(f"online: {status.source} built {online.date} from {online.short_commit}")
    out.print(f"here:   {root} at {here.short_commit}")
    table = Table(title="pages online")
    for col in ("page", "status", "why"):
        table.add_column(col)
    for page in status.pages:
        table.add_row(page.page, "[green]up to date[/]" if page.up_to_date else "[red]out of date[/]",
                      "; ".join(page.reasons))
    out.print(table)
    stale = sum(not p.up_to_date for p in status.pages)
    if stale:
        out.print(f"[red]{stale} of {len(status.pages)} pages out of date[/]: publish again (`fairsite publish`) "
                  "or let the deploy workflow run")
        return 1
    out.print(f"[green]all {len(status.pages)} pages up to date[/]")
    return 0


def _new(root: Path, args) -> int:
    """``fairsite new``: scaffold the explainer, then say what to do next (and that its file name
    was cut from a long title, if it was)."""
    from site_src.sources.collect import READING_ORDER
    from site_src.sources.scaffold import new_explainer, slugify

    path = new_explainer(root, args.title, slug=args.slug)
    order = path.parent / READING_ORDER
    listed = (f"list `{path.stem}` in {order.relative_to(root)}, under the part it belongs to, then "
              if order.exists() else "")
    whole = slugify(args.title) if args.slug is None else path.stem
    cut = (f" (a file name cut from the title's {len(whole)} characters to {len(path.stem)}; choose another "
           "with --slug)" if whole != path.stem else "")
    # What to do next is the command's output (stdout), not a diagnostic: a script can read it.
    Console(highlight=False, width=None if sys.stdout.isatty() else 160).print(
        f"wrote {path.relative_to(root)}{cut}; {listed}build it with `fairsite build`")
    return 0


def _serve(root: Path, args) -> int:
    """Build, then serve ``site/`` with live reload, rebuilding when any input changes."""
    from site_src.build import BuildOptions, NumbersMode, build
    from site_src.publishing.serve import ServeState, live_server

    problem = _port_problem(args.host, args.port)
    if problem:  # before a build that may take minutes
        console.print(f"[bold red]serve failed:[/] {problem}", markup=True, highlight=False)
        return 1

    state = ServeState()

    def rebuild():
        try:
            # Drifted numbers do not stop serving: the page says so in a banner at its top.
            with _Progress() as progress:
                # The fork server is kept between rebuilds: a code edit does not wait for its imports.
                report = build(BuildOptions(root=root, jobs=args.jobs, numbers=NumbersMode.SERVE, keep_fork_server=True,
                                            on_run_start=progress.start, on_run_done=progress.done,
                                            on_stage=progress.stage))
            fixed = state.banner is not None  # the last rebuild failed: say that this one mended it
            state.succeeded()
            _summary(report, explain=True, budget_s=args.budget)
            console.print(f"[green]rebuilt ok[/] ({report.wall_s:.1f} s)"
                          + ("; the failure is mended and the pages no longer say so" if fixed else ""), highlight=False)
        except SiteError as err:  # keep serving the previous site; say what broke, here and in the browser
            state.failed(err)
            console.print("[bold red]build failed; still serving the previous site (its pages say so):[/]")
            console.print(str(err), markup=False)

    rebuild()
    server = live_server(builder=rebuild, state=state, host=args.host, port=args.port, root=str(root / "site"))
    for name in ("explainers", "faircode", "audits", "data", "results", "site_src/templates", "mkdocs.yml"):
        if (root / name).exists():
            server.watch(str(root / name))
    console.print(f"serving the site on {server.url} (Ctrl-C to stop)", highlight=False)
    try:
        server.serve(open_in_browser=False)
    except OSError as err:  # taken by another program while the site was building
        console.print(f"[bold red]serve failed:[/] cannot listen on {args.host}:{args.port}: {err.strerror}")
        return 1
    except KeyboardInterrupt:
        console.print("stopped serving; site/ holds the last build that succeeded", highlight=False)
    finally:
        server.shutdown()
        from site_src.execution.servers import close_kept_server

        close_kept_server()
    return 0


def _port_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be served on, in one line, or None if it can."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        return f"--host {host!r} is not an address this machine has ({err.strerror})"
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server will
        try:
            sock.bind(address)
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                return f"port {port} on {host} is already in use; stop what serves there or choose another with --port"
            return f"cannot listen on {host}:{port}: {err.strerror}"
    return None


class _Progress:
    """Which explainers are running and for how long, then the MkDocs stage: a live display on a
    terminal, a line every ``_EVERY_S`` seconds in a log (CI), so a long run never looks hung."""

    _EVERY_S = 15

    def __init__(self):
        self._running: dict[str, float] = {}
        self._stage: tuple[str, float] | None = None
        self._lock = threading.Lock()
        # Held while a run's line is printed, and to end the output (`__exit__`). Not `_lock`,
        # which the live display's thread takes inside the console's own lock while a print
        # takes them the other way round.
        self._say = threading.Lock()
        self._stop = threading.Event()
        self._live = None
        self._thread = None
        # Ctrl-C or SIGTERM stops the runs in flight: they end as errors, which are not the
        # explainers' fault ("stopped", not "failed").
        self._interrupted = threading.Event()
        self._previous_handlers: dict = {}

    def _on_signal(self, signum, frame):
        self._interrupted.set()
        _interrupt(signum, frame)  # raises KeyboardInterrupt

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous_handlers = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        if console.is_terminal:
            from rich.live import Live

            self._live = Live(console=console, refresh_per_second=2, transient=True, get_renderable=self._render)
            self._live.start()
        else:
            self._thread = threading.Thread(target=self._log, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        with self._say:  # a run that ends after this says nothing: the command's last line is its own
            self._stop.set()
        for sig, handler in self._previous_handlers.items():
            signal.signal(sig, handler)
        if self._live is not None:
            self._live.stop()
            self._live = None

    def start(self, slug: str) -> None:
        with self._lock:
            self._running[slug] = time.monotonic()

    def done(self, outcome) -> None:
        slug = Path(str(outcome.explainer)).stem if isinstance(outcome, SiteError) else outcome.slug
        with self._lock:
            started = self._running.pop(slug, None)
        # Two times, each named (issue 26: "still running ... (13 s)" then "ran in 4.3 s" read as a
        # contradiction): the code's own, as the summary's table and the cache keep it, and the
        # whole run the running line counted, from its start (the fork) to its figures saved.
        in_all = f"; {time.monotonic() - started:.1f} s in all, with start-up and figures" if started else ""
        with self._say:
            if self._stop.is_set():  # the command has ended (interrupted): its last line is said
                return
            if isinstance(outcome, SiteError) and self._interrupted.is_set():
                if outcome.explainer:  # runs not yet started when Ctrl-C came name none: nothing to list
                    console.print(f"  [yellow]stopped[/] {outcome.explainer}", highlight=False)
            elif isinstance(outcome, SiteError):
                console.print(f"  [red]failed[/] {outcome.explainer}", highlight=False)
            elif outcome.cached:
                console.print(f"  [green]ok[/] {outcome.slug} (cached; its run took {outcome.duration_s:.1f} s)")
            else:
                console.print(f"  [green]ok[/] {outcome.slug} (its code ran in {outcome.duration_s:.1f} s{in_all})")

    def stage(self, name: str) -> None:
        if name == "mkdocs":
            console.print("  building the site with MkDocs ...")
            with self._lock:
                self._stage = ("building the site with MkDocs", time.monotonic())

    def _status(self) -> str:
        now = time.monotonic()
        with self._lock:
            if self._running:
                return ("running (each since it started, start-up and figures included): "
                        + ", ".join(f"{slug} ({now - t:.0f} s)" for slug, t in sorted(self._running.items())))
            if self._stage:
                return f"{self._stage[0]} ({now - self._stage[1]:.0f} s)"
            return ""

    def _render(self):
        return Text(self._status(), style="cyan")

    def _log(self) -> None:
        while not self._stop.wait(self._EVERY_S):
            status = self._status()
            if status:
                console.print(f"  still {status}", highlight=False, markup=False)


_FIRST_RUN = ("no cached run", "forced", "cache disabled (check)")


def _how(run, *, explain: bool) -> str:
    """"cache hit" or "ran", and with ``--explain`` which case applied and why."""
    if run.cached:
        return "cache hit" if not explain or run.reason == "unchanged" else f"cache hit: {run.reason}"
    if not explain:
        return "ran"
    return f"ran: {run.reason}" if run.reason in _FIRST_RUN else f"re-ran: {run.reason}"


def over_budget(runs, budget_s: float) -> list[str]:
    """One line per run of this build whose code took longer than ``budget_s`` seconds of CPU time
    (`RunResult.busy_s`), slowest first, so slow pages are noticed before they make every build slow.
    Its time on the clock counted the wait for a core too: on a loaded 2-core machine a clean
    checkout's first build named 8 of the project's own explainers (issue 47).

    A run served from the cache is not named again (issue 26: every build repeated the same
    note): a slow explainer is named once per change that re-runs it, as pytest's
    ``--durations`` names only the tests that ran; ``fairsite check`` runs every explainer, so
    it names every slow one, each time.
    """
    return [f"{r.slug} took {r.busy_s:.1f} s of CPU time ({r.duration_s:.1f} s on the clock), over the {budget_s:g} s "
            "budget per explainer: make it faster (a faster library routine, fewer simulations) or raise the budget "
            "with --budget" for r in sorted((r for r in runs if not r.cached), key=lambda r: -r.busy_s)
            if r.busy_s > budget_s]


def _summary(report, *, explain: bool, budget_s: float = _BUDGET_S) -> None:
    ran = sum(not r.cached for r in report.runs)
    # The build's own time is on the last line ("build ok: ... (N s)"); the title counts the runs.
    table = Table(title=f"explainer runs ({ran} ran, {len(report.runs) - ran} from the cache)")
    for col in ("explainer", "run", "code time", "peak memory"):  # the code's own, as the line "its code ran in"
        table.add_column(col)
    for r in report.runs:
        how = _how(r, explain=explain)
        # A cache hit took no time now: its figures are the original run's, and labelled so.
        took = f"{r.duration_s:.1f} s (original run, {r.run_at})" if r.cached else f"{r.duration_s:.1f} s"
        table.add_row(r.slug, how, took, f"{r.peak_memory_mb:.0f} MB")
    console.print(table)
    rendered = getattr(report, "pages_rendered", None)  # None: nothing was rendered (nothing changed)
    if rendered is not None and not getattr(report, "skipped", False):
        names = f" ({', '.join(rendered)})" if rendered and (explain or len(rendered) <= 3) else ""
        converted = getattr(report, "pages_converted", None)  # None: MkDocs built every page
        mkdocs = (f"; MkDocs converted {len(converted)} page(s), the rest kept from the last site"
                  if converted is not None else "")
        console.print(f"pages: {len(rendered)} rendered{names}, {len(report.runs) - len(rendered)} unchanged "
                      f"(copied from the page cache){mkdocs}", highlight=False)
        if rendered and (change := getattr(report, "shown_change", None)):
            # Why a prose edit re-rendered every page (a fresh user's question): the footer all show.
            console.print(f"  every page shows the build's commit and date in its footer, which changed: {change}",
                          highlight=False)
    for r in report.runs:
        for w in r.warnings:
            console.print("[yellow]run warning:[/] ", end="")
            console.print(w, markup=False)
    for line in over_budget(report.runs, budget_s):
        console.print("[yellow]slow:[/] ", end="")
        console.print(line, markup=False)
    for w in report.warnings:
        console.print(f"[yellow]mkdocs warning:[/] {w}")
    for note in report.notes:
        console.print("[yellow]numbers:[/] ", end="")
        console.print(note, markup=False)
    for path in getattr(report, "docs_edited", ()):
        # docs/ is the build's output, replaced whole: an edit there was lost (a fresh user's, without a word).
        page = re.fullmatch(r"docs/explainers/([a-z0-9-]+)/index\.md", path)
        source = f"explainers/{page[1]}.md" if page else "explainers/ or site_src/templates/"
        console.print("[yellow]replaced:[/] ", end="")
        console.print(f"{path} was edited by hand since the last build, and this build wrote it again: the edit is "
                      f"gone (docs/ is made by the build; edit {source})", markup=False)
    for path in report.edited:
        console.print("[yellow]edited during the build:[/] ", end="")
        console.print(f"{path}: the site shows the version the build read; build again to include the edit",
                      markup=False)


def entry() -> None:
    """The ``fairsite`` console script: `main`, then the end of the process, without the
    interpreter's teardown when nothing needs it.

    Tearing the interpreter down frees every object of the stack a build imported (MkDocs, its
    Markdown extensions, Pygments, pandas) one by one: about 0.36 s of CPU, 0.4-0.6 s of waiting,
    after the last line of every ``fairsite build`` and ``check``, with nothing to show for it
    (issue 26; the fork server skips its own for the same reason, ``_runner``). What a normal exit
    does that anyone sees is done first: the ``atexit`` handlers (logging's flush, temporary
    folders' finalizers), then the standard streams flushed. A thread other than a daemon still
    alive (a thread pool not shut down) is joined by the normal exit instead, as are exits by
    ``SystemExit`` (``--help``, a mistyped command). Instagram skips the same teardown at the end of its Python processes:
    "Dismissing Python Garbage Collection at Instagram" (Instagram Engineering, 2017).
    """
    status = main()
    if any(t is not threading.main_thread() and not t.daemon and t.is_alive() for t in threading.enumerate()):
        sys.exit(status)
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (`| head`), or a stream closed already
            pass
    os._exit(status)


if __name__ == "__main__":
    entry()
