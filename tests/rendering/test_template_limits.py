"""A pool's templates cannot take the machine (issue 16): they render in a child process
with a limit on processor time and memory, and the sandbox refuses to repeat a string
or list into millions of items before it is made.

tests/hostile/readme and tests/hostile/build hold what `readme` and `build` say to a
template that loops for hours or asks for gigabytes; here the renderer itself: what it
refuses and what it still makes, that texts come back from the child exactly, and that
a template stuck in one long operation, where no signal reaches Python, is stopped all
the same. Everything runs for real, with the real limits.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import sys

import pytest

from paperpool.files.problems import PaperpoolError
from paperpool.rendering.render import OUT_OF_MEMORY, OUT_OF_TIME, Renderer

from ..conftest import TINY

pytestmark = pytest.mark.slow  # real builds, installs or long runs: left out of the quick run, run by scripts/test and CI


def renderer_with(root, **templates: str) -> Renderer:
    """A renderer for a pool whose templates/ holds NAME.md.j2 for each NAME=text."""
    (root / "templates").mkdir()
    for name, text in templates.items():
        (root / "templates" / f"{name}.md.j2").write_text(text, encoding="utf-8")
    return Renderer(root)


def refusal(root, text: str) -> str:
    with pytest.raises(PaperpoolError) as refused:
        renderer_with(root, page=text).render_all([("page.md.j2", {})])
    return refused.value.message


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '{{ ("x" * 2000000000) | length }}',
            (
                "repeating a string of 1 character 2,000,000,000 times would make 2,000,000,000 characters, over the limit of "
                "10,000,000; repeat it fewer times"
            ),
        ),
        (
            '{{ 5000000 * "abc" }}',
            (
                "repeating a string of 3 characters 5,000,000 times would make 15,000,000 characters, over the limit of "
                "10,000,000; repeat it fewer times"
            ),
        ),
        (
            "{{ 3 * [1, 2] * 2000000 }}",
            (
                "repeating a list of 6 items 2,000,000 times would make 12,000,000 items, over the limit of 10,000,000; "
                "repeat it fewer times"
            ),
        ),
        (
            '{{ ("x" * 6000000 + "y" * 6000000) | length }}',
            (
                "joining a string of 6,000,000 characters and a string of 6,000,000 characters would make 12,000,000 characters, "
                "over the limit of 10,000,000; join shorter ones"
            ),
        ),
        (
            "{{ 2 ** 200000 }}",
            "2 ** 200000 would be a number of about 200,000 bits, over the limit of 100,000; use a smaller power",
        ),
        # padding and formatting to a width (issue 39's fresh review: 60 bytes of template took 2 GB)
        *(
            (text, "a width of 1,000,000,000 would make a string over the limit of 10,000,000 characters; use a smaller width")
            for text in (
                '{{ "x".center(1000000000) }}',
                '{{ "7".zfill(1000000000) }}',
                '{{ "%0*d" % (1000000000, 1) }}',
                '{{ "%01000000000d" % 1 }}',
                '{{ "{:>1000000000}".format(1) }}',
                '{{ "{:>{}}".format(1, 1000000000) }}',
                '{{ "{a:>1000000000}".format_map({"a": 1}) }}',
                '{{ "x" | center(1000000000) }}',
                '{{ "%01000000000d" | format(1) }}',
                '{{ "a" | indent(1000000000) }}',
            )
        ),
    ],
)
def test_a_value_too_big_to_show_is_refused_before_it_is_made(text, message, tmp_path):
    assert refusal(tmp_path, text) == f"templates/page.md.j2:1: template error: {message}"


def test_what_a_page_needs_is_still_made(tmp_path):
    text = '{{ "-" * 8 }}|{{ 2 ** 64 }}|{{ [1] + [2] }}|{{ "a" + "b" }}|{{ 3 * "ab" }}|{{ -1 * "x" }}|{{ 10 * 3 }}\n'
    texts = renderer_with(tmp_path, page=text).render_all([("page.md.j2", {})])
    assert texts == ["--------|18446744073709551616|[1, 2]|ab|ababab||30\n"]


def test_texts_come_back_from_the_child_exactly(tmp_path):
    """Every character (a lone surrogate and a NUL too), a text of megabytes, and the
    order of the pages, as rendering in this process gives them."""
    renderer = renderer_with(tmp_path, page="{{ text }}", other="[{{ text | length }}]\n")
    items = [
        ("page.md.j2", {"text": "é 😀 \ud800 \x00 <b>\r\n"}),
        ("other.md.j2", {"text": "x" * 5_000_000}),
        ("page.md.j2", {"text": "y" * 3_000_000}),
        ("page.md.j2", {"text": ""}),
    ]
    texts = renderer.render_all(items)
    assert texts == [renderer.render(name, **context) for name, context in items]
    assert texts[:2] == ["é 😀 \ud800 \x00 <b>\r\n", "[5000000]\n"] and len(texts[2]) == 3_000_000


def test_the_limits_are_the_childs_alone(tmp_path):
    before = [resource.getrlimit(kind) for kind in (resource.RLIMIT_CPU, resource.RLIMIT_AS)], signal.getsignal(signal.SIGXCPU)
    assert renderer_with(tmp_path, page="ok").render_all([("page.md.j2", {})]) == ["ok"]
    assert (
        [resource.getrlimit(kind) for kind in (resource.RLIMIT_CPU, resource.RLIMIT_AS)],
        signal.getsignal(signal.SIGXCPU),
    ) == before


def test_an_error_in_a_page_names_its_template_and_returns_no_page(tmp_path):
    renderer = renderer_with(tmp_path, good="fine", bad="{{ nothing.here }}")
    with pytest.raises(PaperpoolError) as refused:
        renderer.render_all([("good.md.j2", {}), ("bad.md.j2", {})])
    assert refused.value.message == (
        "templates/bad.md.j2:1: template error while rendering: UndefinedError: 'nothing' is undefined; fix the template"
    )


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the memory limit is set where the system tells a process's size"
)
def test_a_template_that_asks_for_gigabytes_runs_out_of_memory(tmp_path):
    """3 GB asked for at once (3,000,000 lines each indented by 1,000 characters: no width
    the sandbox checks): refused by the system at the child's limit, never touched."""
    assert refusal(tmp_path, '{{ ("a\\n" * 3000000) | indent("x" * 1000) | length }}') == (
        f"templates/page.md.j2:1: template error: {OUT_OF_MEMORY}"
    )


def test_a_template_stuck_in_one_long_operation_is_stopped(tmp_path):
    """Summing a range of 10**13 numbers is one call into C, in which Python's handler of
    the time limit's signal never runs: the system kills the child 5 s past the limit
    (11 s of processor time here), and the parent names the template it was at."""
    renderer = renderer_with(tmp_path, page="first", busy="{{ add_up(numbers) }}")
    with pytest.raises(PaperpoolError) as refused:
        renderer.render_all([("page.md.j2", {}), ("busy.md.j2", {"add_up": sum, "numbers": range(10**13)})])
    assert refused.value.message == f"templates/busy.md.j2: template error: {OUT_OF_TIME}"
    assert not [name for name in os.listdir(tmp_path) if name != "templates"]


def test_what_templates_write_has_a_limit(tmp_path):
    """900 MB of README block was written, and 300 MB pages kept the engine busy past
    five minutes: a page may be 5,000,000 characters, and all of them a few kilobytes each."""
    text = '{% set s = "x" * 9000000 %}{% for i in range(100) %}{{ s }}{% endfor %}'
    assert refusal(tmp_path, text) == (
        "templates/page.md.j2: template error: wrote 900,000,000 characters for one page, "
        "over the limit of 5,000,000; make the template write less"
    )
    (tmp_path / "many").mkdir()
    many = renderer_with(tmp_path / "many", page='{{ "x" * 4000000 }}')
    with pytest.raises(PaperpoolError) as refused:
        many.render_all([("page.md.j2", {})] * 20)
    assert refused.value.message == (
        "templates/page.md.j2: template error: wrote more than the pages' limit together; make the template write less"
    )


def test_an_engine_that_does_not_finish_is_stopped(tmp_path, run, monkeypatch):
    """Thousands of brackets on a page keep Python-Markdown busy for hours: the real
    mkdocs build is stopped at its time (lowered here from 300 s), the last site kept."""
    from paperpool.sitegen import engine

    root = shutil.copytree(TINY, tmp_path / "pool")
    site = tmp_path / "site"
    assert run("build", "--out", str(site), cwd=root).exit_code == 0
    before = {path: path.read_bytes() for path in site.rglob("*") if path.is_file()}
    (root / "templates" / "site").mkdir(parents=True)
    (root / "templates" / "site" / "entry.md.j2").write_text('{{ "[" * 30000 }}\n', encoding="utf-8")
    monkeypatch.setattr(engine, "BASE_SECONDS", 5)
    monkeypatch.setattr(engine, "SECONDS_PER_PAGE", 0)
    result = run("build", "--out", str(site), cwd=root)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "Error: mkdocs build did not finish in 5 s (5 s and 0 s a page); a page's markdown may be pathological (thousands "
        "of brackets from a template or a hand-written page); the previous site was left as it was"
    )
    assert {path: path.read_bytes() for path in site.rglob("*") if path.is_file()} == before
