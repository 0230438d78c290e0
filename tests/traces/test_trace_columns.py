"""The compiled reader of batch.py (paperpool/traces/_columns.pyx) against values the
schema would have refused: it checks each one again, never trusting what reaches it.
Its results on valid traces are tests/traces/test_trace_batch.py's, which runs every case with
it and without it."""

from __future__ import annotations

from itertools import pairwise

import pytest

from paperpool.traces import batch, limits, synth


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
