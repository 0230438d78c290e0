"""The compiled loops (paperpool/traces/_columns.pyx): batch.py's reader against values
the schema would have refused (it checks each one again, never trusting what reaches
it; its results on valid traces are tests/traces/test_trace_batch.py's, which runs every
case with it and without it), and index.py's event reader and artifact.py's count of
key sets against their Python versions, on traces nobody here wrote."""

from __future__ import annotations

from itertools import pairwise

import orjson
import pytest

from paperpool.traces import artifact, batch, index, limits, synth

from ..conftest import REPO
from .fixtures import SOURCE_EXAMPLE


class _Key(str):
    """A key no JSON reader makes: its hash would run Python code while the reader holds
    the trace's values."""

    def __hash__(self):
        return str.__hash__(self)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda events, edges: events.append(events[0]), "an id given twice"),
        (lambda events, edges: edges[0].update(dst="nowhere"), "an edge naming no event"),
        (lambda events, edges: events[1].update(t=True), "a time that is not a number"),
        (lambda events, edges: events[1].update(agent=["a"]), "an agent that is not a name"),
        (lambda events, edges: events[1].update(tool={"a": 1}), "a tool that is not a name"),
        (lambda events, edges: events[2].update(cost=[1]), "a cost that is not an object"),
        (lambda events, edges: events[2].update(cost={"tokens": "many"}), "tokens that are not a number"),
        (lambda events, edges: events[2].update(rewards=["a"]), "a reward that is not an object"),
        (lambda events, edges: events[2].update(rewards=[{"unit": 1, "channel": "c", "value": 1}]), "a unit that is not a name"),
        (lambda events, edges: events[2].update(rewards=[{"unit": "team", "channel": "c", "value": None}]), "no value"),
        (lambda events, edges: events.__setitem__(1, ["e1"]), "an event that is not an object"),
        (lambda events, edges: events[-1].update(type="unknown"), "an event type outside the schema"),
        (lambda events, edges: events[1].update(type=["stop"]), "an event type that cannot be looked up"),
        (lambda events, edges: edges[0].update(type={}), "an edge type that cannot be looked up"),
        (lambda events, edges: events.__setitem__(1, {_Key("x_note"): 1, **events[1]}), "a key that is a str of another class"),
    ],
)
def test_a_value_of_another_type_is_refused_and_adds_nothing(change, why):
    """The schema rules these out before the reader, which checks each value again: a
    trace it refuses leaves the batch's columns as they were, and nothing crashes."""
    assert batch._native is not None, "paperpool/traces/_columns.pyx is not built: install a C compiler, then paperpool"
    first, second = (synth.generate(12, "centralized", seed=k) for k in (1, 2))
    columns = batch._Columns(limits.default().trace_events)
    assert batch._native.read(first, first["events"], first["edges"], columns, batch.EVENT_CODES, batch.EDGE_CODES, -1) == 0
    before = {name: list(value) for name, value in vars(columns).items() if not isinstance(value, (dict, int))}
    change(second["events"], second["edges"])
    assert batch._native.read(second, second["events"], second["edges"], columns, batch.EVENT_CODES, batch.EDGE_CODES, -1) == 1, (
        why
    )
    assert {name: list(value) for name, value in vars(columns).items() if not isinstance(value, (dict, int))} == before, why


def test_segment_sums_are_numpy_sums_to_the_last_bit():
    """Each segment is added up as ndarray.sum adds it (pairwise, in blocks of 128 with
    eight running sums), whatever its length, sign, magnitude, or infinite or NaN value."""
    import numpy as np

    assert batch._native is not None, "paperpool/traces/_columns.pyx is not built: install a C compiler, then paperpool"
    rng = np.random.default_rng(5)
    compared = 0
    for _ in range(2000):
        size = int(rng.integers(0, 3000))
        values = rng.random(size) * 10.0 ** rng.integers(-5, 12, size) * rng.choice([-1, 1], size)
        if size and rng.random() < 0.1:
            values[rng.integers(0, size)] = rng.choice([np.inf, -np.inf, np.nan, 1e308])
        bounds = np.concatenate([[0], np.sort(rng.integers(0, size + 1, int(rng.integers(0, 6)))), [size]]).astype(np.intp)
        found = np.frombuffer(batch._native.segment_sums(values, bounds))
        with np.errstate(over="ignore", invalid="ignore"):
            expected = np.array([values[a:b].sum() for a, b in pairwise(bounds.tolist())])
        assert ((found == expected) | (np.isnan(found) & np.isnan(expected))).all()
        compared += expected.size
    assert compared > 6000


def test_a_column_of_another_type_is_an_error_not_a_write_past_its_end():
    from array import array

    assert batch._native is not None, "paperpool/traces/_columns.pyx is not built: install a C compiler, then paperpool"
    trace = synth.generate(8, "centralized", seed=4)
    columns = batch._Columns(limits.default().trace_events)
    columns.agent = array("b")  # one byte a value, where the reader writes eight
    with pytest.raises(TypeError, match="typecode 'b', not 'q'"):
        batch._native.read(trace, trace["events"], trace["edges"], columns, batch.EVENT_CODES, batch.EDGE_CODES, -1)
    assert len(columns.t) == 0


def _read(events: list, broken: set[int], read_as: dict) -> dict:
    builder = index.Builder()
    builder.add_events(events, 0, broken, read_as)
    return {
        "columns": [[(array.dtype, array.tobytes()) for array in arrays] for arrays in builder.columns.values()],
        "optional": builder.optional,
        "names": (builder.agent_codes, builder.tool_codes),
        "rewards": vars(builder.rewards),
        "ids": builder.ids,
        "keys": builder.keys,
    }


def _real_traces() -> list:
    """The survey artifact's example, the Who&When logs and OTLP and framework exports as
    imported and shipped, and synth's traces for rewards, decisions and calls."""
    shipped = [orjson.loads(path.read_bytes()) for path in sorted((REPO / "traces").glob("*.json"))]
    example = [orjson.loads(SOURCE_EXAMPLE.read_bytes())] if SOURCE_EXAMPLE.is_file() else []
    return shipped + example + [synth.generate(400, topology, seed=5) for topology in ("hierarchical", "debate")]


@pytest.mark.parametrize("trace", _real_traces(), ids=lambda trace: str(trace.get("trace_id"))[:48])
def test_the_compiled_event_reader_reads_what_the_python_one_reads(trace, monkeypatch):
    """The same columns, codes, rewards, ids and keys counted, with a refused event made
    inert and one read without a field, as validation hands them over; and an event with
    a key of a str subclass, which the compiled reader leaves to the Python one."""
    assert index._native is not None, "paperpool/traces/_columns.pyx is not built: install a C compiler, then paperpool"
    events = list(trace["events"])
    events[-1] = {_Key("x_note"): 1, **events[-1]}
    broken = {1} if len(events) > 2 else set()
    read_as = {0: {key: value for key, value in events[0].items() if key != "decision"}}
    compiled = _read(events, broken, read_as)
    monkeypatch.setattr(index, "_native", None)
    assert compiled == _read(events, broken, read_as)


def test_the_compiled_key_sets_count_what_the_python_ones_count(monkeypatch):
    """Items whose keys are the same objects (as orjson gives them), equal text in other
    objects, and the same keys in another order."""
    assert artifact._native is not None
    base = orjson.loads(SOURCE_EXAMPLE.read_bytes())["events"] if SOURCE_EXAMPLE.is_file() else []
    items = base + [{"".join(["i", "d"]): "a", "t": 1.0}, {"t": 2.0, "id": "b"}, {"id": "c", "t": 3.0, "x_k": 1}, *base[:3]]
    doubted = list(range(1, len(items)))
    compiled = artifact._key_sets(items, doubted)
    monkeypatch.setattr(artifact, "_native", None)
    assert compiled == artifact._key_sets(items, doubted)
    assert sum(count for _, count in compiled.values()) == len(doubted)
    assert {keys: first for keys, (first, _) in compiled.items()}[("t", "id")] == len(base) + 1
