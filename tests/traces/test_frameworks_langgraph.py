"""LangGraph, recorded by OpenInference's LangChain instrumentation, with fake chat models
(LangChain's FakeMessagesListChatModel: scripted replies, no network, no key), imported
by `paperpool trace import --from openinference`.

The program is a graph: a lead node plans and sends the question to three searcher nodes
at once (LangGraph's Send: one step, three runs of one node); an editor node merges their
notes and hands the task to the writer through a transfer_to_writer tool (the handoff
tools of LangGraph's multi-agent patterns are named so), and goes to it (Command); the
writer's answer ends the graph (END)."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, TypedDict

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send
from openinference.instrumentation.langchain import LangChainInstrumentor

from .frameworks import Recording, attribute, imported, orchestration, recognised, rewritten

USAGE = {"input_tokens": 40, "output_tokens": 8, "total_tokens": 48}


class State(TypedDict):
    question: str
    notes: Annotated[list, operator.add]
    answer: str


def model(text: str, calls: list) -> FakeMessagesListChatModel:
    """A chat model that replies `text` (after a short wait, as a real one would), counting its calls."""
    calls.append(USAGE["total_tokens"])
    return FakeMessagesListChatModel(responses=[AIMessage(content=text, usage_metadata=USAGE)], sleep=0.02)


@tool
def transfer_to_writer() -> str:
    """Hand the task to the writer."""
    return "the writer takes over"


def build(calls: list):
    async def lead(state: State) -> dict:
        await model("three searches", calls).ainvoke(state["question"])
        return {}

    def fan_out(state: State) -> list[Send]:
        return [Send("searcher", {"question": topic}) for topic in ("rewards", "credit", "routing")]

    async def searcher(state: State) -> dict:
        reply = await model(f"notes on {state['question']}", calls).ainvoke(state["question"])
        return {"notes": [reply.content]}

    async def editor(state: State) -> Command:
        await model("merged; the writer goes on", calls).ainvoke("; ".join(state["notes"]))
        await transfer_to_writer.ainvoke({})
        return Command(goto="writer")

    async def writer(state: State) -> dict:
        reply = await model("the survey's answer", calls).ainvoke("write it up")
        return {"answer": reply.content}

    graph = StateGraph(State)
    for name, node in (("lead", lead), ("searcher", searcher), ("editor", editor), ("writer", writer)):
        graph.add_node(name, node)
    graph.add_edge(START, "lead")
    graph.add_conditional_edges("lead", fan_out, ["searcher"])
    graph.add_edge("searcher", "editor")
    graph.add_edge("writer", END)
    return graph.compile()


def record(tmp_path, calls: list) -> Recording:
    """The program's spans, recorded by OpenInference's LangChain instrumentation."""
    recording = Recording(tmp_path / "spans.jsonl", "langgraph-team")
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=recording.provider)
    try:
        result = asyncio.run(build(calls).ainvoke({"question": "What do surveys say about credit assignment?", "notes": []}))
    finally:
        instrumentor.uninstrument()
        recording.close()
    assert result["answer"] == "the survey's answer" and len(calls) == 6
    return recording


def test_a_langgraph_team_imports_with_its_fan_out_handoff_and_stop(run, tmp_path):
    calls: list = []
    recording = record(tmp_path, calls)
    trace, metrics = imported(run, recording, "openinference")
    assert orchestration(trace, metrics) == {
        "agents": ["LangGraph", "editor", "lead", "searcher#1", "searcher#2", "searcher#3", "writer"],
        "roles": {"LangGraph": 1, "editor": 1, "lead": 1, "searcher": 3, "writer": 1},
        "spawns": [
            ("LangGraph", "editor"),
            ("LangGraph", "lead"),
            ("LangGraph", "searcher#1"),
            ("LangGraph", "searcher#2"),
            ("LangGraph", "searcher#3"),
        ],
        "delegations": [("editor", "spawn", "writer")],
        "max_fanout": 3,
        "stops": [("LangGraph", "the outermost agent's span ended")],
        "tool_calls": [],
        "safety_events": [],
        "tokens": {"events": sum(calls), "declared": sum(calls)},
        "subdecisions": {"O1": 5, "O2": 1, "O3": 0, "O4": 2, "O5": 1},
    }


def test_a_langgraph_export_is_recognised_by_its_spans_whatever_its_scope_is_named(run, tmp_path):
    """OpenInference's spans are recognised without --from by their attributes, also once a
    collector renamed the instrumentation scope; trace validate names the importer."""
    recording = record(tmp_path, [])
    original = recognised(run, recording.path, "openinference")
    collected = rewritten(recording, "collected.jsonl", scope="otelcol/batch")
    assert recognised(run, collected, "openinference") == original
    result = run("trace", "validate", "collected.jsonl", cwd=tmp_path)
    assert (result.exit_code, result.output) == (
        1,
        "collected.jsonl: is openinference input, not an orchestration trace: OTLP/JSON export of OpenInference "
        "spans (one document, or JSON Lines); convert it first: paperpool trace import --from openinference "
        "collected.jsonl -o TRACE.json\ncollected.jsonl: invalid, 1 problem.\n",
    )


def test_openinference_spans_given_genai_operations_too_are_read_as_openinference(run, tmp_path):
    """Spans carrying both conventions go to the reading that finds more agents: the model
    calls given gen_ai.operation.name chat (as a processor mapping spans to the GenAI
    conventions adds it) leave the GenAI reading no agent, while OpenInference's finds
    every node of the graph, so openinference reads them, as without the operations."""
    recording = record(tmp_path, [])

    def mapped(span: dict) -> None:
        if {"key": "openinference.span.kind", "value": {"stringValue": "LLM"}} in span["attributes"]:
            attribute(span, "gen_ai.operation.name", "chat")

    both = rewritten(recording, "both.jsonl", change=mapped)
    assert '"gen_ai.operation.name"' in both.read_text(encoding="utf-8")
    assert recognised(run, both, "openinference") == recognised(run, recording.path, "openinference")
