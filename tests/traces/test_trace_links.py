"""The edges' ends resolved in a forked process (traces/links.py) give what resolving them
in the validating process gives, valid trace or not."""

import numpy as np
import pytest

from paperpool.traces import links, mapping, metrics, paths, synth, validation

from ..conftest import REPO

FIXTURES = REPO / "tests" / "cases" / "traces"


@pytest.mark.slow
def test_every_fixture_gets_the_same_report_with_its_links_resolved_apart():
    for path in sorted(FIXTURES.glob("*.json")):
        alone = validation.report(path.name, path, apart_above=2**62)
        assert validation.report(path.name, path, apart_above=0) == alone, path.name
        assert validation.report(path.name, path, apart_above=0, chunk_above=0, chunk=3) == alone, path.name


def test_links_resolved_apart_are_those_resolved_in_process(tmp_path):
    path = tmp_path / "trace.json"
    synth.write(synth.generate(3000, "planner_executor_critic", seed=2), path)
    data = path.read_bytes()
    with links.Apart(data, above=0) as apart:
        assert apart.started
        resolved = apart.result()
    alone = validation.check_file(path, apart_above=2**62).index
    assert resolved.unique
    for name in ("src", "dst", "edge_code"):
        assert np.array_equal(getattr(resolved, name), getattr(alone, name)), name
    call_at = alone.fields["call"][0]
    assert call_at.size and np.array_equal(resolved.call[call_at], alone.named_calls)
    assert resolved.chain == paths.critical_path(alone.t, alone.src, alone.dst, alone.edge_code)


def test_the_measures_are_the_same_either_way(tmp_path):
    path = tmp_path / "trace.json"
    synth.write(synth.generate(4000, "hierarchical", seed=5), path)
    apart, alone = (validation.check_file(path, apart_above=above) for above in (0, 2**62))
    assert apart.valid and alone.valid
    subdecisions = mapping.default()
    assert metrics.compute(apart.index, apart.top, subdecisions) == metrics.compute(alone.index, alone.top, subdecisions)


def test_a_child_that_dies_leaves_the_work_to_the_validating_process(tmp_path, monkeypatch):
    path = tmp_path / "trace.json"
    synth.write(synth.generate(500, "debate", seed=1), path)

    def dies(data):
        raise MemoryError

    monkeypatch.setattr(links, "resolve_and_count", dies)  # the forked child runs this, and exits 1
    with links.Apart(path.read_bytes(), above=0) as apart:
        assert apart.result() is None
    assert validation.report("t.json", path, apart_above=0) == (True, ["t.json: valid: 500 events, 769 edges."])


def test_a_trace_not_shaped_for_typed_reading_has_no_links():
    assert links.resolve(b'{"events": [{"id": 7, "t": 0}], "edges": []}') is None
    assert links.resolve(b'{"events": [{"id": "a", "t": "soon"}], "edges": []}') is None
    assert links.resolve(b'{"events": [], "edges": [{"src": "a", "dst": "b"}]}') is None
    assert links.resolve(b"[1, 2]") is None
    found = links.resolve(
        b'{"events": [{"id": "a", "t": 0}, {"id": "a", "t": 1, "call": "b"}], "edges": [{"src": "a", "dst": "z", "type": "odd"}]}'
    )
    assert (found.unique, found.src.tolist(), found.dst.tolist(), found.edge_code.tolist(), found.call.tolist(), found.chain) == (
        False,
        [0],
        [links.MISSING],
        [-1],
        [links.MISSING, links.MISSING],
        (1, 0.0, 0),
    )


def test_edges_read_a_part_at_a_time_are_those_read_whole(tmp_path, monkeypatch):
    """Edges of more text than EDGES_WHOLE_BELOW_BYTES are read a part at a time (to keep
    memory down): the same ends and types as read whole, across parts of 7 edges."""
    path = tmp_path / "trace.json"
    synth.write(synth.generate(500, "hierarchical", seed=4), path)
    data = path.read_bytes()
    whole = links.resolve(data)
    monkeypatch.setattr(links, "EDGES_WHOLE_BELOW_BYTES", 0)
    monkeypatch.setattr(links, "EDGES_AT_A_TIME", 7)
    parted = links.resolve(data)
    assert whole.src.size > 7 * 3
    for column in ("src", "dst", "edge_code", "call"):
        assert np.array_equal(getattr(parted, column), getattr(whole, column)), column
