# cython: language_level=3, boundscheck=True, wraparound=False, initializedcheck=True
"""The two loops of batch.py that Python runs per event, compiled: reading a parsed
trace's events and edges into the batch's typed columns, and the critical path's walk
over the edges.

Why compiled: measured in a worker, these loops cost some 110 us of the 280 us a trace
of 50 events takes (BENCHMARKS.md), nearly all of it the interpreter and the boxed
values it appends, then converts to arrays. Here each value goes straight into an
array.array, which numpy reads without a copy.

batch.py keeps its Python version of both loops, run where this module was not built
(no C compiler at install): tests/test_trace_batch.py runs every case both ways and
compares each with the single-trace path. The traces reaching `read` have passed the
schema, but each value's type is checked again here: a wrong one refuses the trace
(batch.py then leaves it to rows.measure), never reads memory it should not.
"""

from cpython.array cimport array, resize_smart
from cpython.dict cimport PyDict_GetItem, PyDict_Next
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject
from libc.string cimport memchr

OK, REFUSED, KEYS_DIFFER = 0, 1, 2  # what `read` found; on the last two, the columns are left as they were

cdef enum:
    SEEN = 16  # key objects a _Fields remembers by address


cdef class _Fields:
    """Which field of an object each key names, found by the key's address: orjson makes
    one object for each short key and gives it to every dict it parses, so a key seen
    once is the same object ever after, and a comparison of addresses finds it, where a
    dict lookup would hash and compare the text. A key not seen yet (or made anew) is
    looked up by its text, and remembered while there is room: the result is the same."""
    cdef dict fields  # name -> its position in the object's fields, for a key seen the first time
    cdef list held  # the keys remembered, kept alive: an address stays theirs
    cdef PyObject* seen[SEEN]
    cdef int seen_field[SEEN]  # -1: a key that names none of the fields
    cdef int count

    def __init__(self, names):
        self.fields = {name: k for k, name in enumerate(names)}
        self.held = []
        self.count = 0

    cdef inline int field(self, PyObject* key) except -2:
        cdef int i
        for i in range(self.count):
            if self.seen[i] == key:
                return self.seen_field[i]
        found = self.fields.get(<object>key, -1)
        if self.count < SEEN and type(<object>key) is str:
            self.held.append(<object>key)
            self.seen[self.count], self.seen_field[self.count] = key, found
            self.count += 1
        return found


cdef enum:  # an event's fields read here, in the order _EVENT names them
    ID, TIME, TYPE, AGENT, TO, TOOL, CALL, COST, DECISION, REWARDS, EVENT_FIELDS
cdef _Fields _EVENT = _Fields(("id", "t", "type", "agent", "to", "tool", "call", "cost", "decision", "rewards"))
cdef enum:
    SOURCE, TARGET, EDGE_TYPE, EDGE_FIELDS
cdef _Fields _EDGE = _Fields(("src", "dst", "type"))
cdef enum:
    UNIT, CHANNEL, VALUE, REWARD_FIELDS
cdef _Fields _REWARD = _Fields(("unit", "channel", "value"))


cdef inline void _read_fields(dict item, _Fields fields, PyObject** values, int count) except *:
    """values[k]: the value of the item's k-th field (borrowed: the item holds it), NULL when absent."""
    cdef Py_ssize_t at = 0
    cdef PyObject* key
    cdef PyObject* value
    cdef int k
    for k in range(count):
        values[k] = NULL
    while PyDict_Next(item, &at, &key, &value):
        k = fields.field(key)
        if k >= 0:
            values[k] = value


cdef inline object _value(PyObject* value):
    return None if value is NULL else <object>value


def read(dict trace, list events, list edges, columns, dict event_codes, dict edge_codes, Py_ssize_t expected_keys):
    """Add a trace's events and edges to `columns` (batch._Columns) and say OK; REFUSED
    when an id is given twice, an edge names no event, or a value is not of its type;
    KEYS_DIFFER when `expected_keys` >= 0 and the keys of the trace's top level and of
    the objects there, and of its events, edges, costs and rewards, are not that many
    (a key given twice, or objects left uncounted)."""
    cdef dict index = {}
    cdef Py_ssize_t base = len(columns.t), count = len(events), i, keys, edge_keys, top_keys = len(trace)
    for value in trace.values():
        if type(value) is dict:
            top_keys += len(<dict>value)
    cdef PyObject** fields = <PyObject**>PyMem_Malloc(max(count, 1) * EVENT_FIELDS * sizeof(PyObject*))
    if fields is NULL:
        raise MemoryError()
    try:
        for i in range(count):  # each event's fields, borrowed from it (`events` holds them while this runs)
            event = events[i]
            if type(event) is not dict:
                return REFUSED
            _read_fields(<dict>event, _EVENT, fields + i * EVENT_FIELDS, EVENT_FIELDS)
            name = _value(fields[i * EVENT_FIELDS + ID])
            if type(name) is not str:
                return REFUSED
            index[name] = base + i
        if len(index) != count:
            return REFUSED
        before = base, len(columns.src), len(columns.cost_at), len(columns.decided), len(columns.reward_at)
        keys = _events(events, fields, columns, index, event_codes, base)
    finally:
        PyMem_Free(fields)
    edge_keys = _edges(edges, columns, index, edge_codes) if keys >= 0 else -1
    if keys >= 0 and edge_keys >= 0 and (expected_keys < 0 or top_keys + keys + edge_keys == expected_keys):
        return OK
    _truncate(columns, *before)  # read on the way, and taken back
    return REFUSED if keys < 0 or edge_keys < 0 else KEYS_DIFFER


cdef Py_ssize_t _events(list events, PyObject** fields, columns, dict index, dict event_codes,
                        Py_ssize_t base) except -2:
    """Read the events (each a dict whose fields read found) into the columns: the keys
    counted in them, their costs and their rewards; -1 for a value not of its type."""
    cdef dict names = columns.names, tools = columns.tools
    cdef array t = columns.t, kind = columns.kind, agent = columns.agent, to = columns.to
    cdef array tool = columns.tool, call_given = columns.call_given, named_call = columns.named_call
    cdef array cost_at = columns.cost_at, tokens = columns.tokens, seconds = columns.seconds
    cdef list decided = columns.decided
    cdef dict units = columns.units, channels = columns.channels
    cdef array reward_at = columns.reward_at, reward_unit = columns.reward_unit
    cdef array reward_channel = columns.reward_channel, reward_value = columns.reward_value
    cdef Py_ssize_t count = len(events), i, position, costs, rewards, keys = 0
    cdef PyObject** field
    cdef PyObject* found[REWARD_FIELDS]
    cdef dict cost, reward
    for column in (t, kind, agent, to, tool, call_given, named_call):
        resize_smart(column, base + count)
    for i in range(count):
        field, position = fields + i * EVENT_FIELDS, base + i
        keys += len(<dict>events[i])
        when, name = _value(field[TIME]), _value(field[AGENT])
        kind_code = event_codes.get(_value(field[TYPE]))
        if not (type(when) is float or type(when) is int) or type(kind_code) is not int or kind_code < 0 \
                or type(name) is not str:
            return -1
        t.data.as_doubles[position] = when
        kind.data.as_schars[position] = kind_code
        agent.data.as_longlongs[position] = _code(names, name, 0)
        receiver, used, call = _value(field[TO]), _value(field[TOOL]), _value(field[CALL])
        if not (_name_or_none(receiver) and _name_or_none(used) and _name_or_none(call)):
            return -1
        to.data.as_longlongs[position] = -1 if receiver is None else _code(names, receiver, 0)
        tool.data.as_longlongs[position] = _code(tools, used, 1)  # None has code 0
        call_given.data.as_schars[position] = call is not None
        named_call.data.as_longlongs[position] = -2 if call is None else index.get(call, -2)
        spent = _value(field[COST])
        if spent is not None:
            if type(spent) is not dict:
                return -1
            cost = <dict>spent
            keys += len(cost)
            spent_tokens, spent_seconds = cost.get("tokens", 0), cost.get("seconds", 0)
            if not ((type(spent_tokens) is float or type(spent_tokens) is int)
                    and (type(spent_seconds) is float or type(spent_seconds) is int)):
                return -1
            costs = len(cost_at)
            resize_smart(cost_at, costs + 1)
            resize_smart(tokens, costs + 1)
            resize_smart(seconds, costs + 1)
            cost_at.data.as_longlongs[costs] = position
            tokens.data.as_doubles[costs] = spent_tokens
            seconds.data.as_doubles[costs] = spent_seconds
        decision = _value(field[DECISION])
        if decision:
            decided.append((position, decision))
        given = _value(field[REWARDS])
        if given is not None:
            if type(given) is not list:
                return -1
            for item in <list>given:
                if type(item) is not dict:
                    return -1
                reward = <dict>item
                keys += len(reward)
                _read_fields(reward, _REWARD, found, REWARD_FIELDS)
                unit, channel, value = _value(found[UNIT]), _value(found[CHANNEL]), _value(found[VALUE])
                if type(unit) is not str or type(channel) is not str or not (type(value) is float or type(value) is int):
                    return -1
                rewards = len(reward_at)
                for column in (reward_at, reward_unit, reward_channel, reward_value):
                    resize_smart(column, rewards + 1)
                reward_at.data.as_longlongs[rewards] = position
                reward_unit.data.as_longlongs[rewards] = _code(units, unit, 0)
                reward_channel.data.as_longlongs[rewards] = _code(channels, channel, 0)
                reward_value.data.as_doubles[rewards] = value
    return keys


cdef inline bint _name_or_none(value):
    return value is None or type(value) is str


cdef long long _code(dict codes, name, Py_ssize_t shared) except? -3:
    """The code of `name` in `codes`, a fresh one when it has none yet (`shared`: how
    many names share code 0, as None and NO_TOOL do for tools)."""
    cdef PyObject* found = PyDict_GetItem(codes, name)
    if found is not NULL:
        return <long long><object>found
    code = len(codes) - shared
    codes[name] = code
    return code


cdef Py_ssize_t _edges(list edges, columns, dict index, dict edge_codes) except -2:
    """Read the edges into the columns: the keys counted in them; -1 for an edge that
    names no event, or a value not of its type."""
    cdef array src = columns.src, dst = columns.dst, edge_kind = columns.edge_kind
    cdef Py_ssize_t base = len(src), count = len(edges), i, keys = 0
    cdef PyObject* start
    cdef PyObject* end
    cdef PyObject* found[EDGE_FIELDS]
    cdef dict edge
    for column in (src, dst, edge_kind):
        resize_smart(column, base + count)
    for i in range(count):
        if type(edges[i]) is not dict:
            return -1
        edge = <dict>edges[i]
        keys += len(edge)
        _read_fields(edge, _EDGE, found, EDGE_FIELDS)
        source, target, kind_code = _value(found[SOURCE]), _value(found[TARGET]), edge_codes.get(_value(found[EDGE_TYPE]))
        if type(source) is not str or type(target) is not str or type(kind_code) is not int or kind_code < 0:
            return -1
        start, end = PyDict_GetItem(index, source), PyDict_GetItem(index, target)
        if start is NULL or end is NULL:
            return -1
        src.data.as_longlongs[base + i] = <long long><object>start
        dst.data.as_longlongs[base + i] = <long long><object>end
        edge_kind.data.as_schars[base + i] = kind_code
    return keys


def _truncate(columns, events, edges, costs, decided, rewards):
    """The columns as they were before a trace that was refused."""
    for column in (columns.t, columns.kind, columns.agent, columns.to, columns.tool, columns.call_given,
                   columns.named_call):
        resize_smart(column, events)
    for column in (columns.src, columns.dst, columns.edge_kind):
        resize_smart(column, edges)
    for column in (columns.cost_at, columns.tokens, columns.seconds):
        resize_smart(column, costs)
    for column in (columns.reward_at, columns.reward_unit, columns.reward_channel, columns.reward_value):
        resize_smart(column, rewards)
    del columns.decided[decided:]


def longest_chains(const long long[::1] sources, const long long[::1] targets, long long[::1] length, double[::1] start):
    """Walk the edges (sources[k] -> targets[k], in their targets' time order): the events
    of the longest chain ending at each event, and the earliest time such a chain starts
    (`length` and `start` are updated in place), as batch._critical_paths does in Python."""
    cdef Py_ssize_t k, x, y
    for k in range(sources.shape[0]):
        x, y = sources[k], targets[k]
        if length[x] + 1 > length[y]:
            length[y] = length[x] + 1
        if start[x] < start[y]:
            start[y] = start[x]


def keys_at_most(const unsigned char[::1] text):
    """duplicates.at_most, compiled: the colons of JSON `text` that follow a quote or white
    space (the most keys it can hold)."""
    cdef Py_ssize_t size = text.shape[0], total = 0
    if size < 2:
        return 0
    cdef const unsigned char* start = &text[0]
    cdef const unsigned char* end = start + size
    cdef const unsigned char* colon = <const unsigned char*>memchr(start + 1, 58, size - 1)  # ':'
    while colon is not NULL:
        if (colon - 1)[0] in b'" \t\n\r':
            total += 1
        colon = <const unsigned char*>memchr(colon + 1, 58, end - colon - 1)
    return total


def segment_sums(const double[::1] values, const Py_ssize_t[::1] bounds):
    """batch._sums, compiled: each values[bounds[k]:bounds[k + 1]] added up exactly as
    ndarray.sum adds it (numpy's pairwise summation, from 0.0), so that a measure's last
    bit, and its rounding, is the single-trace path's."""
    cdef Py_ssize_t k, count = bounds.shape[0] - 1
    result = array("d", [0.0]) * max(count, 0)
    cdef double[::1] out = result
    for k in range(count):
        if not 0 <= bounds[k] <= bounds[k + 1] <= values.shape[0]:
            raise ValueError("bounds out of order")
        out[k] = 0.0 + _pairwise(&values[0] + bounds[k], bounds[k + 1] - bounds[k]) if bounds[k + 1] > bounds[k] else 0.0
    return result


cdef double _pairwise(const double* a, Py_ssize_t n) noexcept nogil:
    """numpy's pairwise_sum (numpy/_core/src/umath/loops_utils.h.src): blocks of at most
    128 added in 8 running sums, larger ones split in two at a multiple of 8."""
    cdef Py_ssize_t i, half
    cdef double res
    cdef double r[8]
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    if n <= 128:
        for i in range(8):
            r[i] = a[i]
        i = 8
        while i < n - n % 8:
            r[0] += a[i]
            r[1] += a[i + 1]
            r[2] += a[i + 2]
            r[3] += a[i + 3]
            r[4] += a[i + 4]
            r[5] += a[i + 5]
            r[6] += a[i + 6]
            r[7] += a[i + 7]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += a[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return _pairwise(a, half) + _pairwise(a + half, n - half)
