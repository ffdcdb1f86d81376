"""What a cached page read of the values every page shares (site_src.rendering.reads, issue 48): a
page is reused while each question it asked gets the same answer, and only then."""

from __future__ import annotations

import threading

import jinja2

from site_src.rendering.reads import noting, shared_mapping, shared_sequence, shared_set, still_hold

TITLES = {"a": "Page A", "b": "Page B", "c": "Page C"}
ORDER = ["a", "b", "c"]


def _views(titles=TITLES, order=ORDER, slugs=("a", "b", "c")):
    return {"titles": shared_mapping("titles", dict(titles)), "reading_order": shared_sequence("reading_order", list(order)),
            "slugs": shared_set("slugs", slugs)}


def _read(read) -> list:
    views = _views()
    with noting() as reads:
        read(views)
    return reads.as_json()


def test_a_title_read_holds_while_that_title_is_the_same_whatever_the_others():
    noted = _read(lambda v: v["titles"]["b"])
    assert still_hold(noted, _views(titles={**TITLES, "a": "Renamed", "d": "Page D"}))
    assert not still_hold(noted, _views(titles={**TITLES, "b": "Renamed"}))
    assert not still_hold(noted, _views(titles={"a": "Page A", "c": "Page C"}))  # b is gone


def test_asking_whether_a_page_is_there_does_not_depend_on_its_title():
    noted = _read(lambda v: ("b" in v["titles"], "z" in v["slugs"]))
    assert still_hold(noted, _views(titles={**TITLES, "b": "Renamed"}))
    assert not still_hold(noted, _views(slugs=("a", "b", "c", "z")))
    assert not still_hold(noted, _views(titles={"a": "Page A"}))


def test_a_missing_key_read_holds_until_the_key_is_there():
    def read(v):
        try:
            v["titles"]["z"]
        except KeyError:
            return None
        raise AssertionError("z has no title")

    noted = _read(read)
    assert still_hold(noted, _views())
    assert not still_hold(noted, _views(titles={**TITLES, "z": "Page Z"}))


def test_the_first_of_the_reading_order_holds_while_the_first_page_is_the_same():
    noted = _read(lambda v: v["reading_order"][0])
    assert still_hold(noted, _views(order=["a", "c", "b", "d"]))
    assert not still_hold(noted, _views(order=["b", "a", "c"]))


def test_a_value_iterated_over_holds_only_while_all_of_it_is_the_same():
    noted = _read(lambda v: (list(v["reading_order"]), dict(v["titles"].items())))
    assert still_hold(noted, _views())
    assert not still_hold(noted, _views(order=["a", "c", "b"]))
    assert not still_hold(noted, _views(titles={**TITLES, "c": "Renamed"}))
    assert not still_hold(noted, _views(order=["a", "b", "c", "d"]))


def test_reads_outside_a_page_or_in_another_thread_are_not_that_pages():
    views = _views()
    views["titles"]["a"]  # no page is being rendered
    other = threading.Thread(target=lambda: views["titles"]["c"])
    with noting() as reads:
        other.start()
        other.join()
        views["titles"]["b"]
    assert reads.as_json() == [["titles", "item", "b", "Page B"]]


def test_notes_that_are_not_a_list_of_reads_never_hold():
    assert not still_hold(None, _views())
    assert not still_hold([["titles", "item"]], _views())
    assert not still_hold([["nothing", "item", "a", "Page A"]], _views())
    assert still_hold([], _views())


def test_a_template_and_a_macro_it_imports_note_into_the_page_being_rendered():
    # Jinja keeps an imported template's module, with the globals it was made with, for the next
    # page: the view in it must note into whichever page is rendered then.
    env = jinja2.Environment(loader=jinja2.DictLoader({
        "links.j2": "{% macro link(slug) %}{{ titles[slug] if slug in titles else slug }}{% endmacro %}",
        "page.j2": '{% from "links.j2" import link %}{{ link(first) }} {{ reading_order[0] }}',
    }))
    env.globals.update(_views())
    with noting() as first:
        assert env.get_template("page.j2").render(first="a") == "Page A a"
    with noting() as second:
        assert env.get_template("page.j2").render(first="c") == "Page C a"
    assert {tuple(r[:3]) for r in second.as_json()} == {("titles", "in", "c"), ("titles", "item", "c"),
                                                         ("reading_order", "item", 0)}
    assert not still_hold(second.as_json(), _views(titles={**TITLES, "c": "Renamed"}))
    assert still_hold(first.as_json(), _views(titles={**TITLES, "c": "Renamed"}))
