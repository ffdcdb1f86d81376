"""What a cached page read of the values every page shares, noted as it read them (issue 48).

Every page is rendered with the same few values about the others: the explainers' titles (links
between pages), the reading order (each page's "start here" link), its parts and the slugs there
are. Keyed on all of them, a cached page was rendered again whenever any page was added, renamed
or moved, although a page shows only a few of them (the titles of its related pages). Here each
shared value is a read-only view (`shared_mapping`, `shared_sequence`, `shared_set`) that notes
every question a page asks of it while the page is rendered inside `noting`: "the title of
``x``", "is ``x`` a slug", "the first of the reading order", "all of it" (iterated over). A page
cache keeps the notes with the page (`Reads.as_json`) and reuses the page while every question
gets the same answer again (`still_hold`). A value read whole (a loop over it) is an answer too:
such a page is rendered again whenever that value changes, as before.

The views hold no page of their own: the page being rendered is this thread's (`noting`), so a
view kept by Jinja (a template's globals, an imported macro's module) still notes into it.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence, Set

_ACTIVE: contextvars.ContextVar[Reads | None] = contextvars.ContextVar("fairsite_page_reads", default=None)
_MISSING = ["missing"]  # the answer to a question about a key or an index that is not there


class Reads:
    """The questions one page asked of the shared values, and their answers."""

    def __init__(self):
        self._noted: dict[str, list] = {}

    def note(self, name: str, question: str, arg, answer) -> None:
        plain = _plain([name, question, arg, answer])
        self._noted[json.dumps(plain[:3])] = plain

    def as_json(self) -> list[list]:
        """The reads, ``[name, question, argument, answer]`` each, in a stable order."""
        return [self._noted[k] for k in sorted(self._noted)]


@contextlib.contextmanager
def noting() -> Iterator[Reads]:
    """Note in the `Reads` it yields what this thread reads of the shared values meanwhile."""
    reads = Reads()
    token = _ACTIVE.set(reads)
    try:
        yield reads
    finally:
        _ACTIVE.reset(token)


def still_hold(noted, values: Mapping[str, object]) -> bool:
    """True when each read in ``noted`` (`Reads.as_json`) gets the same answer from ``values`` (a
    name -> the shared value now, as given to the views or a view of it); False for notes that are
    not a list of reads (a cache written by another version)."""
    if not isinstance(noted, list):
        return False
    for read in noted:
        if not (isinstance(read, list) and len(read) == 4 and read[0] in values):
            return False
        name, question, arg, answer = read
        value = values[name]
        value = value._value if isinstance(value, _View) else value
        if _plain(_answer(value, question, arg)) != answer:
            return False
    return True


def shared_mapping(name: str, value: Mapping) -> Mapping:
    """A read-only view of ``value`` (named ``name`` in the notes) that notes each read."""
    return _SharedMapping(name, value)


def shared_sequence(name: str, value: Sequence) -> Sequence:
    """A read-only view of the sequence ``value`` that notes each read."""
    return _SharedSequence(name, value)


def shared_set(name: str, value) -> Set:
    """A read-only view of the set ``value`` that notes each read."""
    return _SharedSet(name, frozenset(value))


def _answer(value, question: str, arg):
    """The answer ``value`` gives to ``question``: the one function that answers a read, when it
    is noted and when it is asked again."""
    if question == "in":
        return arg in value
    if question == "all":  # in its order: a set's is none, a mapping's and a sequence's are their own
        if isinstance(value, (set, frozenset)):
            return sorted(value)
        return list(value.items()) if isinstance(value, Mapping) else list(value)
    if question == "len":
        return len(value)
    try:  # "item": a key of a mapping, an index of a sequence
        return value[arg]
    except (KeyError, IndexError, TypeError):
        return _MISSING


def _plain(value):
    """``value`` as JSON has it (a part of the reading order as a dict, tuples as lists)."""
    return json.loads(json.dumps(value, default=lambda o: dataclasses.asdict(o) if dataclasses.is_dataclass(o) else
                                 repr(o)))


class _View:
    """A shared value that notes, in this thread's page (`noting`), each question asked of it."""

    def __init__(self, name: str, value):
        self._name, self._value = name, value

    def _ask(self, question: str, arg=None):
        answer = _answer(self._value, question, arg)
        reads = _ACTIVE.get()
        if reads is not None:
            reads.note(self._name, question, arg, answer)
        return answer

    def __contains__(self, item) -> bool:
        return self._ask("in", item)

    def __len__(self) -> int:
        return self._ask("len")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r}, {self._value!r})"


class _SharedMapping(_View, Mapping):
    def __getitem__(self, key):
        answer = self._ask("item", key)
        if answer is _MISSING:
            raise KeyError(key)
        return answer

    def __iter__(self):
        return iter(k for k, _ in self._ask("all"))


class _SharedSequence(_View, Sequence):
    def __getitem__(self, index):
        if isinstance(index, slice):
            return self._ask("all")[index]
        answer = self._ask("item", index)
        if answer is _MISSING:
            raise IndexError(index)
        return answer

    def __iter__(self):
        return iter(self._ask("all"))

    def __eq__(self, other) -> bool:
        return list(self) == (list(other._value) if isinstance(other, _View) else other)

    __hash__ = None


class _SharedSet(_View, Set):
    def __iter__(self):
        return iter(self._ask("all"))
