"""The events and edges of an orchestration trace, built from a tree of spans (the rules
are in otlp.py's docstring).

A convention (the GenAI semantic conventions here, OpenInference's in openinference.py)
says what each span is: a Step. The Converter reads only Steps, so that both conventions
give the same orchestration for the same run.

Every event gets a key (time, emission order); the spans are walked depth first in start
order, so a spawn is emitted before its agent's events and a return after them. Every
edge joins an event to a later one in that order, so the edges run forward in time and
form no cycle by construction.

The walk keeps its own stack: spans can nest as deep as the file is long (each span names
its parent), far deeper than Python's recursion limit.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import orjson

from .otlp import MODEL_OPERATIONS, TOOL_OPERATION, OtlpProblem, Span, read_spans
from .schema import schema as trace_schema
from .schema import schema_id

AGENT = "agent"  # an agent's invocation, or a workflow that runs agents: one instance each
TOOL = "tool"
MODEL = "model"
HANDOFF = "handoff"  # an agent hands a task to another: a delegation
GUARDRAIL = "guardrail"
NESTS = ""  # a span that only encloses others

# Tools by which frameworks hand a task to another agent, the agent's name in their
# arguments (Google ADK's transfer_to_agent, Strands' swarm handoff_to_agent); a tool named
# transfer_to_<agent> (the OpenAI Agents SDK's and LangGraph's handoff tools) names it itself
TRANSFER_TOOLS = ("transfer_to_agent", "handoff_to_agent")
TRANSFER_PREFIX = "transfer_to_"
TRANSFER_ARGUMENTS = ("agent_name", "agent")
WORKFLOW_OPERATIONS = ("invoke_workflow", "invoke_swarm", "invoke_graph")  # Strands names its swarms and graphs so
GUARDRAIL_OPERATIONS = ("apply_guardrail", "run_guardrail", "guardrail_check")
GUARDRAIL_NAMES = ("gen_ai.guardrail.name", "gen_ai.guardrail.component.name")  # the older name, then the conventions'
USAGE = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")
HANDOFF_OPERATIONS = ("agent_handoff",)  # the OpenTelemetry instrumentation of the OpenAI Agents SDK
# a span without gen_ai.operation.name is a model call when it names a model or counts tokens (Google ADK's)
MODEL_MARKS = ("gen_ai.request.model", "gen_ai.response.model", *USAGE)
ERROR_CODES = (2, "STATUS_CODE_ERROR", "ERROR")


@dataclass(frozen=True)
class Step:
    """What a span is in the orchestration."""

    kind: str  # AGENT, TOOL, MODEL, HANDOFF, GUARDRAIL or NESTS
    name: str = ""  # the agent's, workflow's, tool's or guardrail's name
    tokens: int = 0  # a model call's input and output tokens; an agent's, when its span counts them
    target: str = ""  # the agent a handoff hands the task to
    note: str = ""  # what a guardrail found
    actor: str = ""  # the agent a span that is no agent's says acts (stands in for a root of its own)


Classify = Callable[[Span], Step]


@dataclass(frozen=True)
class Convention:
    """How a family of instrumentations says what its spans are."""

    name: str  # as the converted trace's description names it
    classify: Classify


def genai_step(span: Span) -> Step:
    """A span as the OpenTelemetry GenAI semantic conventions (and the frameworks that emit
    them) say it is."""
    attributes = span.attributes
    operation = span.operation
    if operation == "invoke_agent":
        return Step(AGENT, span.agent, tokens=span.tokens)
    if operation in WORKFLOW_OPERATIONS:
        return Step(AGENT, str(attributes.get("gen_ai.workflow.name") or span.name or operation), tokens=span.tokens)
    actor = str(attributes.get("gen_ai.agent.name") or "")  # on a tool call, a plan, a guardrail: whose it is
    if operation in HANDOFF_OPERATIONS:
        return Step(HANDOFF, target=str(attributes.get("gen_ai.handoff.to_agent") or ""), actor=actor)
    if operation == TOOL_OPERATION:
        tool = str(attributes.get("gen_ai.tool.name") or span.name)
        target = transfer_target(
            tool, attributes.get("gen_ai.transfer.target.name"), attributes.get("gen_ai.tool.call.arguments")
        )
        return Step(HANDOFF, tool, target=target, actor=actor) if target else Step(TOOL, tool, actor=actor)
    if operation in GUARDRAIL_OPERATIONS or any(key in attributes for key in GUARDRAIL_NAMES):
        name = next((str(attributes[key]) for key in GUARDRAIL_NAMES if attributes.get(key)), span.name)
        return Step(GUARDRAIL, name, note=guardrail_finding(attributes), actor=actor)
    if operation in MODEL_OPERATIONS or operation is None and any(key in attributes for key in MODEL_MARKS):
        return Step(MODEL, tokens=span.tokens, actor=actor)
    return Step(NESTS, actor=actor)


def guardrail_finding(attributes: dict) -> str:
    """What a guardrail found, "" when it let the content pass: `triggered` (the OpenAI
    Agents instrumentation's gen_ai.guardrail.triggered), else its verdict when that is no
    allow, with the action taken and the reason given (the conventions' run_guardrail)."""
    if attributes.get("gen_ai.guardrail.triggered") is True:
        return "triggered"
    verdict = str(attributes.get("gen_ai.guardrail.verdict.type") or "allow")
    if verdict == "allow":
        return ""
    action = str(attributes.get("gen_ai.guardrail.action.type") or "")
    reason = str(attributes.get("gen_ai.guardrail.verdict.reason") or "")
    return verdict + (f", {action}" if action else "") + (f": {reason}" if reason else "")


def transfer_target(tool: str, named, arguments) -> str:
    """The agent a tool call hands the task to, or "" when the tool is no transfer."""
    if isinstance(named, str) and named:
        return named
    if tool in TRANSFER_TOOLS:
        given = json_in_text(arguments) if isinstance(arguments, str) else arguments
        if isinstance(given, dict):
            return next((str(given[key]) for key in TRANSFER_ARGUMENTS if isinstance(given.get(key), str) and given[key]), "")
        return ""
    if tool.startswith(TRANSFER_PREFIX) and len(tool) > len(TRANSFER_PREFIX):
        return tool[len(TRANSFER_PREFIX) :]
    return ""


def json_in_text(text: str):
    """The JSON an attribute holds as text (a tool call's arguments, LangChain's metadata),
    or None when it holds none. Read by orjson, as trace files are: Python's json would
    take a lone surrogate (\\ud800), which no trace paperpool writes can hold."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # not JSON, nested past 1,024 levels, or no UTF-8 text
        return None


GENAI = Convention("OpenTelemetry GenAI", genai_step)


def failed(span: Span) -> bool:
    return span.status.get("code") in ERROR_CODES


def _key(name: str) -> str:
    """An agent's name as a handoff tool writes it: transfer_to_billing_agent for 'Billing agent'.
    Letters and digits of any script are kept (a name of Chinese letters was an empty key,
    the same for every such agent, and a handoff went to the wrong one)."""
    return re.sub(r"[\W_]+", "_", name.lower()).strip("_")


def _unclaimed(following: list[int], at: int) -> int:
    """The first position from `at` on that no handoff claimed: `following` links each
    claimed one to the next, and each link walked is shortened to the end (path compression),
    so that handoffs to one agent do not walk its claimed invocations again and again."""
    end = at
    while following[end] != end:
        end = following[end]
    while following[at] != end:
        following[at], at = end, following[at]
    return end


Visit = tuple[Span, str | None]  # a span to visit, and the agent instance acting for it


@functools.cache
def _reason_most() -> int:
    """The characters an event's reason may hold: the trace schema's maxLength."""
    return trace_schema()["$defs"]["event"]["properties"]["reason"]["maxLength"]


class Converter:
    def __init__(
        self,
        trace_id: str,
        spans: list[Span],
        resource: dict,
        topology: str | None,
        convention: Convention = GENAI,
        delegation: str | None = None,
    ):
        self.trace_id, self.resource, self.topology = trace_id, resource, topology
        self.spans, self.convention, self.delegation = spans, convention.name, delegation
        classify = convention.classify
        known = {span.span_id for span in spans}
        self.roots = sorted((s for s in spans if s.parent_id not in known), key=lambda s: (s.start, s.order))
        self.by_id = {span.span_id: span for span in spans}
        for span in spans:
            span.children = []
        for span in sorted(spans, key=lambda s: (s.start, s.order)):
            if span.parent_id in self.by_id:
                self.by_id[span.parent_id].children.append(span)
        self.steps = {span.span_id: classify(span) for span in spans}
        self.fallback = str(self.resource.get("service.name") or "orchestrator")
        for root in self.roots:  # a root that encloses the run's spans is the run itself: the workflow that runs them
            step = self.steps[root.span_id]
            if step.kind == NESTS and self._encloses_steps(root):  # named by the agent it says acts (a plan's planner)
                self.steps[root.span_id] = Step(AGENT, step.actor or root.name or self.fallback)
        self._count_agent_usage_once()
        self.origin = min(span.start for span in spans)
        self.events: list[dict] = []
        self.keys: dict[str, tuple] = {}  # event id -> (t, emission order)
        self.actor: dict[str, str] = {}  # event id -> whose lane it is on
        self.links: list[tuple[str, str, str]] = []  # (event id, lane whose next event it leads to, edge type)
        self.edges: list[dict] = []
        self.pending: dict[str, dict] = {}  # instance -> tokens and seconds of its model calls, for its next return
        self.returned: dict[str, int] = {}  # orchestrator -> returns since its last model call or aggregate
        self.ran: dict[str, int] = {}  # orchestrator -> when the last of the agents it encloses ended
        self.merged: dict[str, int] = {}  # orchestrator -> when it last called a model or aggregated
        self.instances = self._instances()
        self.roles = {instance: self.steps[span_id].name for span_id, instance in self.instances.items()}
        self.claimed = self._handoffs()  # handoff span id -> the agent span it starts, and back
        self.orchestrators = self._orchestrators()

    def _count_agent_usage_once(self) -> None:
        """An agent span's own usage counts only where no span under it reports usage: the
        conventions put a run's usage on its invoke_agent span, and on each chat span when
        the model calls are recorded too (Google ADK's, Agent Framework's), so counting both
        would count it twice; with no chat span (AutoGen's, CrewAI's agent runs), the agent
        span's is all there is."""
        for span in self.spans:
            step = self.steps[span.span_id]
            if step.kind == AGENT and step.tokens and _below(span, lambda s: any(key in s.attributes for key in USAGE)):
                self.steps[span.span_id] = Step(AGENT, step.name)

    def _encloses_steps(self, root: Span) -> bool:
        """Whether some span under `root` is more than nesting."""
        return _below(root, lambda span: self.steps[span.span_id].kind != NESTS)

    def _agents(self) -> list[Span]:
        return sorted((s for s in self.spans if self.steps[s.span_id].kind == AGENT), key=lambda s: (s.start, s.order))

    def _instances(self) -> dict[str, str]:
        """Agent span id -> its instance: the agent's name, numbered (searcher#1, searcher#2)
        when the agent is invoked more than once, each invocation being an instance."""
        agents = self._agents()
        counts = Counter(self.steps[span.span_id].name for span in agents)
        taken = {name for name, n in counts.items() if n == 1}
        seen: Counter = Counter()
        instances = {}
        for span in agents:
            name = self.steps[span.span_id].name
            if counts[name] == 1:
                instances[span.span_id] = name
                continue
            seen[name] += 1
            instance = f"{name}#{seen[name]}"
            while instance in taken:
                instance += "'"
            taken.add(instance)
            instances[span.span_id] = instance
        return instances

    def _handoffs(self) -> dict[str, str]:
        """Each handoff span and the agent span it starts: the first invocation of its target
        that starts no earlier and is not already started by another handoff; both ways.

        The agents are grouped by their name as a handoff writes it, each named once:
        matching each handoff against every agent took as many substitutions as handoffs
        times agents (1,700 by 1,200: 45 s)."""
        by_key: dict[str, list[Span]] = {}
        for span in self._agents():
            by_key.setdefault(_key(self.steps[span.span_id].name), []).append(span)
        starts = {key: [span.start for span in spans] for key, spans in by_key.items()}
        following = {key: list(range(len(spans) + 1)) for key, spans in by_key.items()}
        claimed: dict[str, str] = {}
        handoffs = sorted(
            (s for s in self.spans if self.steps[s.span_id].kind == HANDOFF and self.steps[s.span_id].target),
            key=lambda s: (s.start, s.order),
        )
        # where the last handoff of the same target, parent and start stopped: the agents it
        # passed enclose every such handoff, or are claimed (a chain of 16,000 nested agents
        # of one name, each handoff passing them all again, took 82 s)
        resume: dict[tuple, int] = {}
        for handoff in handoffs:
            wanted = _key(self.steps[handoff.span_id].target)
            if wanted not in by_key:
                continue
            spans, free = by_key[wanted], following[wanted]
            group = (wanted, handoff.parent_id, handoff.start)
            at = _unclaimed(free, max(bisect.bisect_left(starts[wanted], handoff.start), resume.get(group, 0)))
            while at < len(spans) and spans[at].start == handoff.start:  # only one starting with it can enclose it
                if not self._encloses(spans[at], handoff):
                    break
                at = _unclaimed(free, at + 1)
            resume[group] = at
            if at < len(spans):
                claimed[spans[at].span_id], claimed[handoff.span_id] = handoff.span_id, spans[at].span_id
                free[at] = at + 1
        return claimed

    def _encloses(self, agent: Span, span: Span) -> bool:
        """Whether `agent` is an ancestor of `span`: by the places of a walk of the span tree,
        found once, not by walking up each time (a chain of 16,000 is 16,000 steps a handoff)."""
        places = self._places
        if agent.span_id in places and span.span_id in places:
            (enter, leave), (at, _) = places[agent.span_id], places[span.span_id]
            return enter < at < leave
        return False

    @functools.cached_property
    def _places(self) -> dict[str, tuple[int, int]]:
        """Each span's (entry, exit) in a depth-first walk from the roots: a span encloses
        another when its entry comes before and its exit after the other's entry."""
        places: dict[str, tuple[int, int]] = {}
        clock = 0
        for root in (span for span in self.spans if not span.parent_id or span.parent_id not in self.by_id):
            stack = [(root, False)]
            while stack:
                span, done = stack.pop()
                if done:
                    places[span.span_id] = (places[span.span_id][0], clock)
                    clock += 1
                    continue
                if span.span_id in places:  # (a span reached twice: its parent links loop; never here)
                    continue
                places[span.span_id] = (clock, -1)
                clock += 1
                stack.append((span, True))
                stack.extend((child, False) for child in reversed(span.children))
        return places

    def _orchestrators(self) -> set[str]:
        """The instances that start or hand a task to others, and each outermost one."""
        found: set[str] = set()
        waiting: list[tuple[Span, str | None]] = [(root, None) for root in self.roots]
        while waiting:
            span, acting = waiting.pop()
            kind = self.steps[span.span_id].kind
            if kind == AGENT:
                found.add(self.instances[span.span_id] if acting is None else acting)
                acting = self.instances[span.span_id]
            elif kind == HANDOFF and acting is not None:
                found.add(acting)
            waiting.extend((child, acting) for child in span.children)
        return found

    def trace(self, schema: str) -> dict:
        for root in self.roots:
            if self.steps[root.span_id].kind == AGENT:
                self._walk(root, None)
            elif self.steps[root.span_id].kind != NESTS:
                # a model call, tool call or guardrail of its own: the agent it names acts for it, else the service; the run ends with it
                acting = self.steps[root.span_id].actor or self.fallback
                self._walk(root, acting)
                self._emit(
                    "stop", root, "stop", root.end, acting, reason="the outermost span ended", cost=self.pending.pop(acting, None)
                )  # a model call's tokens, which no return carries
        self._resolve_links()
        self.events.sort(key=lambda event: self.keys[event["id"]])
        trace = {"schema": schema, "trace_id": self.trace_id}
        conversation = next(
            (s.attributes["gen_ai.conversation.id"] for s in self.spans if "gen_ai.conversation.id" in s.attributes), None
        )
        if conversation is not None:
            trace["task_id"] = str(conversation)
        trace["system"] = str(self.resource.get("service.name") or "opentelemetry")
        if self.topology:
            trace["topology"] = self.topology
        trace["time_unit"] = "seconds"  # spans are timed in nanoseconds
        trace["description"] = f"Converted by paperpool from {len(self.spans)} {self.convention} spans."
        trace.update(events=self.events, edges=self.edges, costs=self._costs())
        return trace

    def _t(self, nanos: int) -> float:
        return round((nanos - self.origin) / 1e9, 6)

    def _emit(self, kind: str, span: Span, suffix: str, nanos: int, agent: str, actor: str | None = None, **fields) -> str:
        identifier = f"{span.span_id}-{suffix}"
        event = {"id": identifier, "t": self._t(nanos), "type": kind, "agent": agent}
        event.update({key: value for key, value in fields.items() if value is not None})
        if isinstance(event.get("reason"), str):  # a recorded verdict or error may be an essay; the schema holds a few words
            event["reason"] = event["reason"][: _reason_most()]
        event["content_ref"] = f"otlp-span:{span.span_id}"
        self.events.append(event)
        self.keys[identifier] = (event["t"], len(self.events))
        self.actor[identifier] = actor or agent
        return identifier

    def _role(self, instance: str) -> str | None:
        """An instance's agent name, which is its role (searcher for searcher#2)."""
        return self.roles.get(instance)

    def _walk(self, root: Span, acting: str | None) -> None:
        """Visit `root` and the spans it encloses, depth first. Each visit is a generator
        that yields the (span, acting instance) of each child to visit before it goes on."""
        visits: list[Iterator[Visit]] = [self._visit(root, acting)]
        while visits:
            child = next(visits[-1], None)
            if child is None:
                visits.pop()
            else:
                visits.append(self._visit(*child))

    def _visit(self, span: Span, acting: str | None) -> Iterator[Visit]:
        step = self.steps[span.span_id]
        if step.kind == AGENT:
            yield from self._agent(span, acting)
            return
        if acting is None:  # only below a root that is an agent or the service's stand-in: never
            yield from _children(span, acting)
            return
        role = self._role(acting)
        if step.kind == TOOL:
            call = self._emit("tool_call", span, "call", span.start, acting, role=role, tool=step.name)
            yield from _children(span, acting)
            seconds = round((span.end - span.start) / 1e9, 6)
            result = self._emit(
                "tool_result",
                span,
                "result",
                span.end,
                step.name,
                actor=acting,
                tool=step.name,
                call=call,
                cost={"seconds": seconds},
                trusted=False,
            )
            self.edges.append({"src": call, "dst": result, "type": "tool_dependency"})
        elif step.kind == HANDOFF:
            self._handoff(span, step, acting, role)
            yield from _children(span, acting)
        elif step.kind == MODEL:
            self._model_call(span, step, acting)
            yield from _children(span, acting)
        else:
            yield from _children(span, acting)
        if step.kind == GUARDRAIL:
            reason = f"guardrail {step.name}" + (f" {step.note}" if step.note else "")
            self._emit("safety_event", span, "guardrail", span.end, acting, role=role, reason=reason)
        self._error(span, acting)

    def _handoff(self, span: Span, step: Step, acting: str, role: str | None) -> None:
        """A delegation: a spawn of the agent span the handoff starts, or a message to its
        target when no invocation of it was recorded."""
        started = self.claimed.get(span.span_id)
        if started is None:
            self._emit("message", span, "handoff", span.start, acting, role=role, to=step.target, decision=self.delegation)
            return
        instance = self.instances[started]
        spawn = self._emit("spawn", span, "handoff", span.start, acting, role=role, to=instance, decision=self.delegation)
        self.links.append((spawn, instance, "spawn"))

    def _agent(self, span: Span, enclosing: str | None) -> Iterator[Visit]:
        instance = self.instances[span.span_id]
        if enclosing is not None and span.span_id not in self.claimed and self._joined(enclosing, span.start):
            # every agent it ran has returned: it merges their results before it starts more (a graph's next step)
            self.returned.pop(enclosing, None)
            self.merged[enclosing] = span.start
            self._emit("aggregate", span, "aggregate", span.start, enclosing, role=self._role(enclosing))
        if enclosing is not None and span.span_id not in self.claimed:
            spawn = self._emit("spawn", span, "spawn", span.start, enclosing, role=self._role(enclosing), to=instance)
            self.links.append((spawn, instance, "spawn"))
        if enclosing is not None:
            self.ran[enclosing] = max(self.ran.get(enclosing, span.end), span.end)
        yield from _children(span, instance)
        self._error(span, instance)
        cost = self.pending.pop(instance, None)
        own = self.steps[span.span_id].tokens  # usage its span counts and nothing under it does
        if own:
            cost = {"tokens": own, "seconds": 0.0} if cost is None else {**cost, "tokens": cost["tokens"] + own}
        role = self._role(instance)
        if enclosing is None:
            self._emit("stop", span, "stop", span.end, instance, role=role, reason="the outermost agent's span ended", cost=cost)
        else:
            returned = self._emit("return", span, "return", span.end, instance, role=role, to=enclosing, cost=cost)
            self.links.append((returned, enclosing, "return"))
            self.returned[enclosing] = self.returned.get(enclosing, 0) + 1

    def _joined(self, orchestrator: str, nanos: int) -> bool:
        """Whether every agent `orchestrator` ran had ended by `nanos`, some of them since it
        last called a model or aggregated: a join, after which it starts a new wave."""
        # the latest end kept as it comes: the maximum of every end so far, once per child,
        # took 2 minutes for an orchestrator of 120,000 agents
        last = self.ran.get(orchestrator)
        return last is not None and last <= nanos and last > self.merged.get(orchestrator, -1)

    def _error(self, span: Span, acting: str) -> None:
        """A safety_event where a span failed, unless one of its children failed first (the
        error came from there)."""
        if failed(span) and not any(failed(child) for child in span.children):
            message = str(span.status.get("message") or "").strip()
            reason = f"{span.name or 'a span'} failed" + (f": {message}" if message else "")
            self._emit("safety_event", span, "error", span.end, acting, role=self._role(acting), reason=reason)

    def _model_call(self, span: Span, step: Step, agent: str) -> None:
        seconds = round((span.end - span.start) / 1e9, 6)
        if agent not in self.orchestrators:
            pending = self.pending.setdefault(agent, {"tokens": 0, "seconds": 0.0})
            pending["tokens"] += step.tokens
            pending["seconds"] = round(pending["seconds"] + seconds, 6)
            return
        kind = "aggregate" if self.returned.pop(agent, 0) else "orchestrator_decision"
        self.merged[agent] = span.end
        self._emit(kind, span, "step", span.end, agent, role=self._role(agent), cost={"tokens": step.tokens, "seconds": seconds})

    def _resolve_links(self) -> None:
        """Each agent's events in turn, and every link to the next event of a lane."""
        lanes: dict[str, list[str]] = {}
        for identifier in sorted(self.keys, key=self.keys.__getitem__):
            lanes.setdefault(self.actor[identifier], []).append(identifier)
        linked = {(edge["src"], edge["dst"]) for edge in self.edges}
        for lane in lanes.values():
            for before, after in itertools.pairwise(lane):
                if (before, after) not in linked:
                    self.edges.append({"src": before, "dst": after, "type": "causal"})
        lane_keys = {name: [self.keys[event] for event in lane] for name, lane in lanes.items()}
        for source, lane_name, kind in self.links:
            at = bisect.bisect_right(lane_keys.get(lane_name, []), self.keys[source])
            if at < len(lanes.get(lane_name, [])):
                self.edges.append({"src": source, "dst": lanes[lane_name][at], "type": kind})
        self.edges.sort(key=lambda edge: (self.keys[edge["dst"]], self.keys[edge["src"]]))

    def _costs(self) -> dict:
        costs = [event["cost"] for event in self.events if "cost" in event]
        end = max(span.end for span in self.spans)
        declared = {
            "tokens": sum(cost.get("tokens", 0) for cost in costs),
            "wall_clock_s": round((end - self.origin) / 1e9, 6),
            "compute_s": round(sum(cost.get("seconds", 0) for cost in costs), 6),
            "tool_calls": sum(1 for event in self.events if event["type"] == "tool_call"),
            "messages": sum(1 for event in self.events if event["type"] == "message"),
        }
        if not costs:  # only what the spans recorded: a run with no cost on any event declares none, not 0
            del declared["tokens"], declared["compute_s"]
        return declared


def _below(top: Span, found: Callable[[Span], bool]) -> bool:
    """Whether some span under `top`, at any depth, is `found`."""
    waiting = list(top.children)
    while waiting:
        span = waiting.pop()
        if found(span):
            return True
        waiting.extend(span.children)
    return False


def _children(span: Span, acting: str | None) -> Iterator[Visit]:
    return ((child, acting) for child in span.children)


def to_trace(trace_id: str, spans: list[Span], resource: dict, topology: str | None = None, convention=None) -> dict:
    """The orchestration trace of one OTLP trace's spans, read by a convention (a Convention
    of otlp_events: the GenAI semantic conventions by default)."""
    from .mapping import default

    convention = convention or GENAI
    return Converter(trace_id, spans, resource, topology, convention, default().marks.get("delegation")).trace(schema_id())


def convert_file(path, trace_id: str | None = None, topology: str | None = None) -> dict:
    """The orchestration trace of an OTLP/JSON file, validated: OtlpProblem when the file
    is no OTLP/JSON export, InvalidTrace when the conversion breaks a rule."""
    from .loading import TraceUnreadable, read_trace
    from .validation import InvalidTrace, check_trace

    try:
        document = read_trace(path)
    except TraceUnreadable as exc:
        raise OtlpProblem(exc.findings) from None
    trace = to_trace(*read_spans(document, trace_id), topology=topology)
    checked = check_trace(trace)
    if not checked.valid:
        raise InvalidTrace(
            f"the trace converted from {path}",
            checked.findings,
            NOT_CONVERTED,
        )
    return trace


# why a converted trace is refused: what the lines above it name (a name too long, spans
# whose times or nesting make no consistent run), which only the export can change
NOT_CONVERTED = "the export's spans make a trace that breaks the rules above; check the spans they name in the export"
