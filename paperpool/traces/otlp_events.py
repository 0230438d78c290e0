"""The events and edges of an orchestration trace, built from a tree of GenAI spans (the
rules are in otlp.py's docstring).

Every event gets a key (time, emission order); the spans are walked depth first in start
order, so a spawn is emitted before its agent's events and a return after them. Every
edge joins an event to a later one in that order, so the edges run forward in time and
form no cycle by construction.

The walk keeps its own stack: spans can nest as deep as the file is long (each span names
its parent), far deeper than Python's recursion limit.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator

from .otlp import AGENT_OPERATIONS, MODEL_OPERATIONS, TOOL_OPERATION, Span

Visit = tuple[Span, str | None]  # a span to visit, and the agent acting for it


class Converter:
    def __init__(self, trace_id: str, spans: list[Span], resource: dict, topology: str | None):
        self.trace_id, self.resource, self.topology = trace_id, resource, topology
        self.spans = spans
        known = {span.span_id for span in spans}
        self.roots = sorted((s for s in spans if s.parent_id not in known), key=lambda s: (s.start, s.order))
        by_id = {span.span_id: span for span in spans}
        for span in spans:
            span.children = []
        for span in sorted(spans, key=lambda s: (s.start, s.order)):
            if span.parent_id in by_id:
                by_id[span.parent_id].children.append(span)
        self.origin = min(span.start for span in spans)
        self.events: list[dict] = []
        self.keys: dict[str, tuple] = {}  # event id -> (t, emission order)
        self.actor: dict[str, str] = {}  # event id -> whose lane it is on
        self.links: list[tuple[str, str, str]] = []  # (event id, lane whose next event it leads to, edge type)
        self.edges: list[dict] = []
        self.met: set[str] = set()
        self.pending: dict[str, dict] = {}  # agent -> tokens and seconds of its model calls, for its next return
        self.returned: dict[str, int] = {}  # orchestrator -> returns since its last model call
        self.orchestrators = self._orchestrators()

    def _orchestrators(self) -> set[str]:
        """The agents that spawn or message others, and each outermost agent."""
        found: set[str] = set()
        waiting: list[tuple[Span, str | None]] = [(root, None) for root in self.roots]
        while waiting:
            span, acting = waiting.pop()
            if span.operation in AGENT_OPERATIONS:
                found.add(span.agent if acting is None else acting)
                acting = span.agent
            waiting.extend((child, acting) for child in span.children)
        return found

    def trace(self, schema: str) -> dict:
        fallback = str(self.resource.get("service.name") or "orchestrator")
        for root in self.roots:
            self._walk(root, None if root.operation in AGENT_OPERATIONS else fallback)
        self._resolve_links()
        self.events.sort(key=lambda event: self.keys[event["id"]])
        trace = {"schema": schema, "trace_id": self.trace_id}
        conversation = next((s.attributes["gen_ai.conversation.id"] for s in self.spans if "gen_ai.conversation.id" in s.attributes), None)
        if conversation is not None:
            trace["task_id"] = str(conversation)
        trace["system"] = str(self.resource.get("service.name") or "opentelemetry")
        if self.topology:
            trace["topology"] = self.topology
        trace["description"] = f"Converted by paperpool from {len(self.spans)} OpenTelemetry GenAI spans."
        trace.update(events=self.events, edges=self.edges, costs=self._costs())
        return trace

    def _t(self, nanos: int) -> float:
        return round((nanos - self.origin) / 1e9, 6)

    def _emit(self, kind: str, span: Span, suffix: str, nanos: int, agent: str, actor: str | None = None, **fields) -> str:
        identifier = f"{span.span_id}-{suffix}"
        event = {"id": identifier, "t": self._t(nanos), "type": kind, "agent": agent}
        event.update({key: value for key, value in fields.items() if value is not None})
        event["content_ref"] = f"otlp-span:{span.span_id}"
        self.events.append(event)
        self.keys[identifier] = (event["t"], len(self.events))
        self.actor[identifier] = actor or agent
        return identifier

    def _walk(self, root: Span, acting: str | None) -> None:
        """Visit `root` and the spans it encloses, depth first. Each visit is a generator
        that yields the (span, acting agent) of each child to visit before it goes on."""
        visits: list[Iterator[Visit]] = [self._visit(root, acting)]
        while visits:
            child = next(visits[-1], None)
            if child is None:
                visits.pop()
            else:
                visits.append(self._visit(*child))

    def _visit(self, span: Span, acting: str | None) -> Iterator[Visit]:
        operation = span.operation
        if operation in AGENT_OPERATIONS:
            yield from self._agent(span, acting)
            return
        if operation == TOOL_OPERATION and acting is not None:
            tool = str(span.attributes.get("gen_ai.tool.name") or span.name)
            call = self._emit("tool_call", span, "call", span.start, acting, tool=tool)
            yield from _children(span, acting)
            seconds = round((span.end - span.start) / 1e9, 6)
            result = self._emit("tool_result", span, "result", span.end, tool, actor=acting, tool=tool, call=call,
                                cost={"seconds": seconds}, trusted=False)
            self.edges.append({"src": call, "dst": result, "type": "tool_dependency"})
            return
        if operation in MODEL_OPERATIONS and acting is not None:
            self._model_call(span, acting)
        yield from _children(span, acting)

    def _agent(self, span: Span, enclosing: str | None) -> Iterator[Visit]:
        agent = span.agent
        if enclosing is not None and enclosing != agent:
            if agent in self.met:
                sent = self._emit("message", span, "message", span.start, enclosing, to=agent)
                self.links.append((sent, agent, "message"))
            else:
                spawn = self._emit("spawn", span, "spawn", span.start, enclosing, to=agent)
                self.links.append((spawn, agent, "spawn"))
        self.met.add(agent)
        yield from _children(span, agent)
        if span.operation != "invoke_agent":
            return
        cost = self.pending.pop(agent, None)
        if enclosing is None:
            self._emit("stop", span, "stop", span.end, agent, reason="the outermost agent's span ended", cost=cost)
        elif enclosing != agent:
            returned = self._emit("return", span, "return", span.end, agent, to=enclosing, cost=cost)
            self.links.append((returned, enclosing, "return"))
            self.returned[enclosing] = self.returned.get(enclosing, 0) + 1

    def _model_call(self, span: Span, agent: str) -> None:
        seconds = round((span.end - span.start) / 1e9, 6)
        if agent not in self.orchestrators:
            pending = self.pending.setdefault(agent, {"tokens": 0, "seconds": 0.0})
            pending["tokens"] += span.tokens
            pending["seconds"] = round(pending["seconds"] + seconds, 6)
            return
        kind = "aggregate" if self.returned.pop(agent, 0) else "orchestrator_decision"
        self._emit(kind, span, "step", span.end, agent, cost={"tokens": span.tokens, "seconds": seconds})

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
        return {
            "tokens": sum(cost.get("tokens", 0) for cost in costs),
            "wall_clock_s": round((end - self.origin) / 1e9, 6),
            "compute_s": round(sum(cost.get("seconds", 0) for cost in costs), 6),
            "tool_calls": sum(1 for event in self.events if event["type"] == "tool_call"),
            "messages": sum(1 for event in self.events if event["type"] == "message"),
        }


def _children(span: Span, acting: str | None) -> Iterator[Visit]:
    return ((child, acting) for child in span.children)
