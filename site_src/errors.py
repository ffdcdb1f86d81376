"""The build's exception tree.

Every error names the explainer (and, where it has one, the line in the explainer source) so the
summary at the end of a failed build points the maintainer straight at the fault.
"""

from __future__ import annotations


class SiteError(Exception):
    """Base of every error the site build raises on purpose.

    Parameters
    ----------
    message : str
        What went wrong and what was expected.
    explainer : str, optional
        The explainer's source path (e.g. ``explainers/permutation-test.md``).
    line : int, optional
        1-based line in the explainer source.
    """

    kind = "error"

    def __init__(self, message: str, *, explainer: str | None = None, line: int | None = None):
        self.message = message
        self.explainer = explainer
        self.line = line
        super().__init__(self.location() + message)

    def location(self) -> str:
        if self.explainer is None:
            return ""
        from faircode.formatting import at  # not at import: the runner imports this module, and no more

        return f"{at(self.explainer, self.line or None)}: "


class ConfigError(SiteError):
    """Front matter, template or configuration that does not follow its schema."""

    kind = "config"


class TemplateError(ConfigError):
    """An explainer's prose that Jinja cannot parse or render (a tag left open, an unknown filter,
    a value the run did not define): the author's text, not the configuration, is at fault."""

    kind = "template"


class ExecutionError(SiteError):
    """An explainer's code raised, timed out or was killed."""

    kind = "execution"


class CheckError(SiteError):
    """A ``checks:`` assertion failed, a cited number drifted, or a citation did not resolve."""

    kind = "check"


class BuildFailed(SiteError):
    """Raised once at the end of a build with every failure collected on the way. ``runs``: the
    runs the build had done (fresh or from the cache), for ``--explain`` to say why each ran."""

    def __init__(self, errors: list[SiteError], *, runs: list = ()):
        # The same problem found twice at one place (a number typed twice on one line) is one.
        errors = list({(e.kind, e.location(), e.message): e for e in errors}.values())
        self.errors = errors
        self.runs = list(runs)
        lines = [f"{len(errors)} problem(s); the previous site was left as it was:"]
        # Several explainers failing the same way (a broken manifest they all load) are one
        # problem: show its message once, with the explainers (or places) it stopped.
        groups: dict[tuple[str, str], list[SiteError]] = {}
        for e in errors:
            groups.setdefault((e.kind, e.message.split("\n")[0]), []).append(e)
        for (kind, headline), same in groups.items():
            if len(same) == 1:
                lines.append(_under_entry(f"  [{kind}] {same[0]}"))
            else:
                where = ", ".join(e.location().rstrip(": ") for e in same)
                detail = same[0].message.partition("\n")[2]
                what = "explainers" if len({e.explainer for e in same}) == len(same) else "places"
                lines.append(f"  [{kind}] {len(same)} {what} failed the same way ({where}): {headline}")
                if detail:
                    lines.append(_under_entry(f"    the first of them:\n{detail}", by="      "))
        super().__init__("\n".join(lines))


def _under_entry(entry: str, *, by: str = "    ") -> str:
    """An entry of the list with its later lines (a traceback, the drifted values) indented under
    it: at the margin they read as problems of their own (a fresh user's finding, issue 26)."""
    first, *rest = entry.split("\n")
    return "\n".join([first, *(f"{by}{line}" if line.strip() else "" for line in rest)])
