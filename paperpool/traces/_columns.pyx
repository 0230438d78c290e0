# cython: language_level=3, boundscheck=True, wraparound=False, initializedcheck=True
"""The loops of batch.py that Python would run per event or per value, compiled: reading
a parsed trace's events, edges and rewards into the batch's typed columns, the critical
path's walk over the edges, the per-trace sums, and the count of a text's keys.

Why compiled: measured in a worker, the Python versions of these loops cost about 100 of
the 240 us a trace of 50 events takes; compiled, about 25 (BENCHMARKS.md). Each value
goes straight into an array.array (grown by resize_smart, which, unlike array.append,
does not check for a view over the array: batch.py copies the columns with np.array
once every trace is read, and never holds a view while reading).

batch.py keeps its Python version of each loop, run where this module was not built (no
C compiler at install): tests/traces/test_trace_batch.py runs every case both ways and
compares each with the single-trace path. The traces reaching `read` have passed the
schema, yet each value's type is checked again here: a wrong one, or a key that is not
a str (orjson's always are), refuses the trace (batch.py then leaves it to
rows.measure), and the references read are held while they are used.
"""

from cpython.array cimport array, resize_smart
from cpython.dict cimport PyDict_GetItem, PyDict_Next
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.object cimport PyObject
from libc.string cimport memchr

OK, REFUSED, KEYS_DIFFER = 0, 1, 2  # what `read` found; on the last two, the columns are left as they were

cdef enum:
    SEEN = 16  # key objects a _Fields remembers by address


cdef class _Fields:
    """Which field of an object each key names, found by the key's address: orjson makes
    one object for each short key and gives it to every dict it parses while the key is
    in its cache, so a comparison of addresses finds a key seen before, where a dict
    lookup would hash and compare the text. A key not seen yet, or made anew (orjson's
    cache let it go), is looked up by its text and remembered in place of the old one,
    or while there is room: the result is the same either way."""
    cdef dict fields  # name -> its position in the object's fields
    cdef list held  # the keys remembered, kept alive: an address stays theirs
    cdef PyObject* seen[SEEN]
    cdef int seen_field[SEEN]  # -1: a key that names none of the fields
    cdef int count

    def __init__(self, names):
        self.fields = {name: k for k, name in enumerate(names)}
        self.held = [None] * SEEN
        self.count = 0

    cdef int field(self, PyObject* key) except -2:
        """The field `key` names, -1 for none; the caller checked that it is a str, so
        that no Python code runs here (a str subclass could change the trace)."""
        cdef int i, slot
        for i in range(self.count):
            if self.seen[i] == key:
                return self.seen_field[i]
        found = self.fields.get(<object>key, -1)
        slot = self.count
        if found >= 0:
            for i in range(self.count):
                if self.seen_field[i] == found:  # the field's key, made anew
                    slot = i
        if slot < SEEN and len(<str><object>key) <= 64:  # orjson keeps no longer key: a new object each time
            self.held[slot] = <object>key
            self.seen[slot], self.seen_field[slot] = key, found
            self.count = max(self.count, slot + 1)
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


cdef bint _read_fields(dict item, _Fields fields, PyObject** values, int count) except -1:
    """values[k]: the value of the item's k-th field (a reference taken: _release gives it
    back), NULL when absent; False, with none taken, for a key that is not a str."""
    cdef Py_ssize_t at = 0
    cdef PyObject* key
    cdef PyObject* value
    cdef int k
    for k in range(count):
        values[k] = NULL
    while PyDict_Next(item, &at, &key, &value):
        if type(<object>key) is not str:  # never from orjson; a subclass's __hash__ could run code
            _release(values, count)
            return False
        k = fields.field(key)
        if k >= 0:
            Py_INCREF(<object>value)
            values[k] = value
    return True


cdef void _release(PyObject** values, Py_ssize_t count) noexcept:
    cdef Py_ssize_t k
    for k in range(count):
        Py_XDECREF(values[k])
        values[k] = NULL


cdef inline object _value(PyObject* value):
    return None if value is NULL else <object>value


def read(dict trace not None, list events not None, list edges not None, columns, dict event_codes, dict edge_codes,
         Py_ssize_t expected_keys):
    """Add a trace's events and edges to `columns` (batch._Columns) and say OK; REFUSED
    when an id is given twice, an edge names no event, or a value is not of its type;
    KEYS_DIFFER when `expected_keys` >= 0 and the keys of the trace's top level and of
    the objects there, and of its events, edges, costs and rewards, are not that many
    (a key given twice, or objects left uncounted). On the last two the columns hold
    what they held before (the codes given to the trace's names stay: unused)."""
    cdef dict index = {}
    cdef Py_ssize_t base = len(columns.t), count = len(events), i, taken = 0, keys, edge_keys
    cdef Py_ssize_t top_keys = len(trace)
    for value in trace.values():
        if type(value) is dict:
            top_keys += len(<dict>value)
    cdef PyObject** fields = <PyObject**>PyMem_Malloc(max(count, 1) * EVENT_FIELDS * sizeof(PyObject*))
    if fields is NULL:
        raise MemoryError()
    try:
        for i in range(count):  # each event's fields, held until the events are read
            event = events[i]
            if type(event) is not dict or not _read_fields(<dict>event, _EVENT, fields + i * EVENT_FIELDS, EVENT_FIELDS):
                return REFUSED
            taken = i + 1
            name = _value(fields[i * EVENT_FIELDS + ID])
            if type(name) is not str:
                return REFUSED
            index[name] = base + i
        if len(index) != count:
            return REFUSED
        before = base, len(columns.src), len(columns.cost_at), len(columns.decided), len(columns.reward_at)
        try:
            keys = _events(events, fields, columns, index, event_codes, base)
            edge_keys = _edges(edges, columns, index, edge_codes) if keys >= 0 else -1
        except BaseException:
            _truncate(columns, *before)
            raise
    finally:
        _release(fields, taken * EVENT_FIELDS)
        PyMem_Free(fields)
    if keys >= 0 and edge_keys >= 0 and (expected_keys < 0 or top_keys + keys + edge_keys == expected_keys):
        return OK
    _truncate(columns, *before)  # read on the way, and taken back
    return REFUSED if keys < 0 or edge_keys < 0 else KEYS_DIFFER


cdef void _typed(array column, char typecode) except *:
    """A column of the type the batch makes (batch._column): what is written is its width."""
    if column.ob_descr.typecode != typecode:
        raise TypeError(f"a column of typecode {chr(column.ob_descr.typecode)!r}, not {chr(typecode)!r}")


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
    for column in (agent, to, tool, named_call, cost_at, reward_at, reward_unit, reward_channel):
        _typed(column, c'q')
    for column in (t, tokens, seconds, reward_value):
        _typed(column, c'd')
    _typed(kind, c'b')
    _typed(call_given, c'b')
    for column in (t, kind, agent, to, tool, call_given, named_call):
        resize_smart(column, base + count)
    for i in range(count):
        field, position = fields + i * EVENT_FIELDS, base + i
        keys += len(<dict>events[i])
        when, type_name, name = _value(field[TIME]), _value(field[TYPE]), _value(field[AGENT])
        if not _number(when) or type(type_name) is not str or type(name) is not str:
            return -1
        kind_code = event_codes.get(type_name)
        if type(kind_code) is not int or kind_code < 0:
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
            if not (_number(spent_tokens) and _number(spent_seconds)):
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
                if not _read_fields(reward, _REWARD, found, REWARD_FIELDS):
                    return -1
                unit, channel, value = _value(found[UNIT]), _value(found[CHANNEL]), _value(found[VALUE])
                _release(found, REWARD_FIELDS)
                if type(unit) is not str or type(channel) is not str or not _number(value):
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


cdef inline bint _number(value):
    """A JSON number as orjson gives it (a bool is no number)."""
    return type(value) is float or type(value) is int


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
    _typed(src, c'q')
    _typed(dst, c'q')
    _typed(edge_kind, c'b')
    for column in (src, dst, edge_kind):
        resize_smart(column, base + count)
    for i in range(count):
        if type(edges[i]) is not dict:
            return -1
        edge = <dict>edges[i]
        keys += len(edge)
        if not _read_fields(edge, _EDGE, found, EDGE_FIELDS):
            return -1
        source, target, type_name = _value(found[SOURCE]), _value(found[TARGET]), _value(found[EDGE_TYPE])
        _release(found, EDGE_FIELDS)
        if type(source) is not str or type(target) is not str or type(type_name) is not str:
            return -1
        kind_code = edge_codes.get(type_name)
        if type(kind_code) is not int or kind_code < 0:
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


def read_events(builder, chunk, list events, Py_ssize_t offset, dict type_codes, long calls_tool, long answers_tool,
                frozenset names_agent, str no_tool):
    """index._read_events, compiled: one pass over a chunk of a single trace's events into
    the builder's lists (chunk: ids, times, types, agents, tokens, seconds; builder:
    optional fields, name codes, rewards as index.RewardsRead holds them), adding the keys counted to builder.keys.
    An event's fields are found in one walk over its entries (_read_fields); the values
    read and the errors raised are the Python loop's. Returns how many events it read: it
    stops before an event that is not a dict, or has a key that is not a str (no JSON
    reader makes either; a subclass could run Python code), which the caller reads with the
    Python loop."""
    cdef list ids = chunk.ids, times = chunk.times, types = chunk.types, agents = chunk.agents
    cdef list tokens = chunk.tokens, seconds = chunk.seconds
    read = builder.rewards
    cdef list reward_at = read.at, reward_unit = read.unit, reward_channel = read.channel, reward_value = read.value
    cdef dict units = read.units, channels = read.channels
    cdef dict optional = builder.optional, agent_codes = builder.agent_codes, tool_codes = builder.tool_codes
    cdef list to_at = optional["to"][0], to = optional["to"][1], tool_at = optional["tool"][0]
    cdef list tool = optional["tool"][1], call_at = optional["call"][0], call = optional["call"][1]
    cdef list cost_at = optional["cost"][0], decision_at = optional["decision"][0], decision = optional["decision"][1]
    cdef Py_ssize_t i = offset - 1, keys = 0
    cdef long kind
    cdef dict e
    cdef PyObject* field[EVENT_FIELDS]
    for item in events:
        if type(item) is not dict or not _read_fields(<dict>item, _EVENT, field, EVENT_FIELDS):
            builder.keys["events"] += keys
            return i + 1 - offset
        i += 1
        e = <dict>item
        try:
            keys += len(e)
            ids.append(_required(field[ID], "id"))
            times.append(_required(field[TIME], "t"))
            kind = type_codes[_required(field[TYPE], "type")]
            types.append(kind)
            agents.append(_named(agent_codes, _required(field[AGENT], "agent")))
            if kind == calls_tool or kind == answers_tool:
                tool_at.append(i)
                used = _value(field[TOOL])
                tool.append(_named(tool_codes, no_tool if used is None and field[TOOL] is NULL else used))
                if kind == answers_tool and field[CALL] is not NULL:
                    call_at.append(i)
                    call.append(<object>field[CALL])
            elif field[TO] is not NULL and kind in names_agent:
                to_at.append(i)
                to.append(_named(agent_codes, <object>field[TO]))
            if field[COST] is not NULL:
                cost_at.append(i)
                spent = <object>field[COST]
                keys += len(spent)
                tokens.append(spent.get("tokens", 0))
                seconds.append(spent.get("seconds", 0))
            if field[REWARDS] is not NULL:
                for reward in <object>field[REWARDS]:
                    keys += len(reward)
                    unit, channel, value = reward["unit"], reward["channel"], reward["value"]
                    reward_at.append(i)
                    reward_unit.append(units.setdefault(unit, len(units)))
                    reward_channel.append(channels.setdefault(channel, len(channels)))
                    reward_value.append(value)
            if field[DECISION] is not NULL:
                decision_at.append(i)
                decision.append(<object>field[DECISION])
        finally:
            _release(field, EVENT_FIELDS)
    builder.keys["events"] += keys
    return len(events)


cdef inline object _required(PyObject* value, str name):
    if value is NULL:
        raise KeyError(name)
    return <object>value


cdef object _named(dict codes, name):
    """The code of `name` in `codes`, numbered len - 1 when new (None, which codes -1, is
    always there), as _read_events numbers them."""
    code = codes.get(name)
    if code is None:
        code = codes[name] = len(codes) - 1
    return code


def key_sets(list items):
    """artifact._unknown_fields' count, compiled: {the keys of an item, in order: [the
    position of the first item with them, how many have them]} over `items`, or None
    when one is not a dict. orjson gives every dict the same key object while the key is
    in its cache, so an item whose keys are, object for object, those of an item seen
    before shares its group without a tuple made and hashed; any other is grouped by the
    tuple of its keys, as the Python version does."""
    cdef dict groups = {}  # keys -> [first, count]
    cdef dict seen = {}  # the key objects' addresses, mixed -> (an item with them, its group)
    cdef Py_ssize_t k, at, other_at
    cdef size_t mixed
    cdef PyObject* key
    cdef PyObject* other_key
    cdef PyObject* value
    cdef dict item, other
    for k in range(len(items)):
        if type(items[k]) is not dict:
            return None
        item = <dict>items[k]
        mixed, at = <size_t>len(item), 0
        while PyDict_Next(item, &at, &key, &value):
            mixed = (mixed * 1000003) ^ <size_t>key
        found = seen.get(mixed)
        if found is not None:
            other, group = found
            if len(other) == len(item):
                at, other_at = 0, 0
                while PyDict_Next(item, &at, &key, &value) and PyDict_Next(other, &other_at, &other_key, &value):
                    if key != other_key:
                        break
                else:
                    (<list>group)[1] += 1
                    continue
        keys = tuple(item)
        group = groups.get(keys)
        if group is None:
            group = groups[keys] = [k, 0]
        (<list>group)[1] += 1
        if found is None:
            seen[mixed] = (item, group)
    return groups
