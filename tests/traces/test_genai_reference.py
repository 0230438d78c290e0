"""The reference scenarios of the OpenTelemetry GenAI semantic conventions as conformance
fixtures: open-telemetry/semantic-conventions-genai (Apache-2.0) keeps, under
reference/scenarios/<library>/scenario.py, programs that drive a real library against a
mock server and record it with instrumentation that follows the conventions exactly.

Each test here records, with the real OpenTelemetry SDK, the span tree one scenario
emits (its span names, operations, kinds, nesting, agent, workflow, tool and guardrail
names, transfer attributes, token usage), then imports the file with `paperpool trace
import --from otlp`, validates it, measures it and checks the orchestration the scenario
describes. Every root span of a scenario starts a trace of its own, as it does there: a
file holds one trace per root. Token counts are the tests' own (the mock server's are not
part of the scenario); the spans' attributes beyond those the conversion reads are left
out."""

from __future__ import annotations

import json
from contextlib import contextmanager

from opentelemetry.trace import SpanKind

from .frameworks import Recording, imported_each, orchestration

OPERATION = "gen_ai.operation.name"
IN, OUT = "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"


class Scenario:
    """A recording whose spans are opened as the scenario opens them: each inside the
    span current at the time."""

    def __init__(self, tmp_path, service: str):
        self.recording = Recording(tmp_path / "spans.jsonl", service)
        self.tracer = self.recording.provider.get_tracer("reference")

    @contextmanager
    def span(self, name: str, attributes: dict, kind: SpanKind = SpanKind.INTERNAL):
        with self.tracer.start_as_current_span(name, kind=kind, attributes=attributes) as opened:
            yield opened

    def runs(self, run) -> list[dict]:
        """The orchestration of every trace recorded, in the order they began."""
        self.recording.close()
        return [orchestration(trace, metrics) for trace, metrics in imported_each(run, self.recording, "otlp")]


def agent(name: str, **more) -> dict:
    return {OPERATION: "invoke_agent", "gen_ai.agent.name": name, **more}


def workflow(name: str) -> dict:
    return {OPERATION: "invoke_workflow", "gen_ai.workflow.name": name}


def chat(model: str, provider: str, **more) -> dict:
    return {OPERATION: "chat", "gen_ai.provider.name": provider, "gen_ai.request.model": model, **more}


def tool(name: str, **more) -> dict:
    return {OPERATION: "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.type": "function", **more}


def usage(given: int, got: int) -> dict:
    return {IN: given, OUT: got}


def guardrail(component: str, verdict: str, action: str, target: str, subtype: str, **more) -> dict:
    return {
        OPERATION: "run_guardrail",
        "gen_ai.guardrail.component.name": component,
        "gen_ai.guardrail.verdict.type": verdict,
        "gen_ai.guardrail.action.type": action,
        "gen_ai.guardrail.target.type": target,
        "gen_ai.guardrail.target.subtype": subtype,
        **more,
    }


def run_of(
    agents,
    stops,
    *,
    roles=None,
    spawns=(),
    delegations=(),
    max_fanout=0,
    tool_calls=(),
    safety=(),
    tokens=None,
    subdecisions=None,
) -> dict:
    """An orchestration() summary: what a run is expected to be, the rest left at nothing
    (tokens None: no event records a cost, so none are known, not 0)."""
    return {
        "agents": sorted(agents),
        "roles": roles if roles is not None else dict.fromkeys(agents, 1),
        "spawns": sorted(spawns),
        "delegations": sorted(delegations),
        "max_fanout": max_fanout,
        "stops": stops,
        "tool_calls": sorted(tool_calls),
        "safety_events": sorted(safety),
        "tokens": {"events": tokens, "declared": tokens},
        "subdecisions": {"O1": 0, "O2": 0, "O3": 0, "O4": 0, "O5": 1, **(subdecisions or {})},
    }


TOOL_USE = {"O2": 1}  # the sub-decisions a run with a tool call or a delegation in it measures
OUTERMOST = "the outermost agent's span ended"
OWN_ROOT = "the outermost span ended"  # a root that is a tool call, model call or guardrail: the service acts for it


def test_openai_agents(tmp_path, run):
    """reference/scenarios/openai-agents/scenario.py, the version read_file gave as id
    71244505806 (its four runs; the older version at commit 5c50d346f1c9 has only the
    first). Exercises: an agent whose usage is on its invoke_agent span alone (no chat
    span), a tool under it; Agent.as_tool delegation (an execute_tool span with
    gen_ai.transfer.mode return_to_caller and gen_ai.transfer.target.name, enclosing the
    target's invoke_agent); sandboxed command runs, execute_tool roots of their own; a
    workflow span with no agent spans under it."""
    scenario = Scenario(tmp_path, "reference-openai-agents")
    with scenario.span("invoke_agent test-agent", agent("test-agent", **{"gen_ai.request.model": "gpt-4o-mini"})) as span:
        with scenario.span(
            "execute_tool get_weather",
            tool(
                "get_weather",
                **{"gen_ai.agent.name": "test-agent", "gen_ai.tool.call.arguments": json.dumps({"location": "Seattle"})},
            ),
        ):
            pass
        span.set_attributes(usage(41, 12))
    transfer = {
        "gen_ai.agent.name": "assistant",
        "gen_ai.transfer.mode": "return_to_caller",
        "gen_ai.transfer.target.name": "weather-specialist",
    }
    with (
        scenario.span("invoke_agent assistant", agent("assistant")),
        scenario.span("execute_tool weather-specialist weather-specialist", tool("weather-specialist", **transfer)),
        scenario.span("invoke_agent weather-specialist", agent("weather-specialist")),
    ):
        pass
    for command in ("ls -1a", "cat missing-report.txt"):
        with scenario.span(
            "execute_tool exec_command bash",
            tool(
                "exec_command",
                **{
                    "gen_ai.agent.name": "command-agent",
                    "process.executable.name": "bash",
                    "gen_ai.tool.call.arguments": json.dumps({"cmd": command, "shell": "/bin/bash"}),
                },
            ),
        ):
            pass
    with scenario.span("invoke_workflow sequential-agents", workflow("sequential-agents")):
        pass

    assert scenario.runs(run) == [
        run_of(["test-agent"], [("test-agent", OUTERMOST)], tool_calls=[("get_weather", 1)], tokens=53, subdecisions=TOOL_USE),
        run_of(
            ["assistant", "weather-specialist"],
            [("assistant", OUTERMOST)],
            delegations=[("assistant", "spawn", "weather-specialist")],
            max_fanout=1,
            subdecisions=TOOL_USE,
        ),
        *[
            run_of(
                ["command-agent"],
                [("command-agent", OWN_ROOT)],
                roles={},
                tool_calls=[("exec_command", 1)],
                tokens=0,
                subdecisions=TOOL_USE,
            )
        ]
        * 2,  # the tool's result costs seconds, and no tokens
        run_of(["sequential-agents"], [("sequential-agents", OUTERMOST)]),
    ]


def test_google_adk(tmp_path, run):
    """reference/scenarios/google-adk/scenario.py at commit bc38c7d695c2. Exercises: an
    invoke_workflow root (the Runner's app) enclosing the agent's invoke_agent, whose chat
    span encloses the tool the model asked for; usage on both the chat span and the agent
    span (counted once); memory operations (upsert_memory, search_memory), roots of their
    own with no orchestration in them."""
    scenario = Scenario(tmp_path, "reference-google-adk")
    session = {"gen_ai.provider.name": "gcp.gemini", "gen_ai.conversation.id": "session-1"}
    with (
        scenario.span("invoke_workflow test_app", workflow("test_app")),
        scenario.span("invoke_agent test_agent", agent("test_agent", **session)) as span,
    ):
        with scenario.span("chat gemini-2.0-flash", chat("gemini-2.0-flash", "gcp.gemini")) as call:
            with scenario.span("execute_tool get_weather", tool("get_weather")):
                pass
            call.set_attributes(usage(30, 9))
        span.set_attributes(usage(30, 9))
    with scenario.span("upsert_memory", {OPERATION: "upsert_memory", "gen_ai.memory.store.id": "test_app/test_user"}):
        pass
    with scenario.span("search_memory", {OPERATION: "search_memory", "gen_ai.memory.store.id": "test_app/test_user"}):
        pass

    assert scenario.runs(run) == [
        run_of(
            ["test_agent", "test_app"],
            [("test_app", OUTERMOST)],
            spawns=[("test_app", "test_agent")],
            max_fanout=1,
            tool_calls=[("get_weather", 1)],
            tokens=39,
            subdecisions={"O1": 1, "O2": 1},
        ),
    ]


def test_crewai(tmp_path, run):
    """reference/scenarios/crewai/scenario.py at commit 01b596a0fd22. Exercises: a crew's
    invoke_workflow root with no agent span under it, whose chat span encloses the tool
    call; an agent run outside a crew, its usage on its invoke_agent span alone; planning
    (Crew(planning=True)): a plan span naming the planner agent (gen_ai.agent.name Task
    Execution Planner) enclosing its chat spans (one, then three in the multi-call run),
    with the worker's chat span a root of its own after it."""
    scenario = Scenario(tmp_path, "reference-crewai")
    with (
        scenario.span("invoke_workflow crew", workflow("crew")),
        scenario.span("chat gpt-4o-mini", chat("gpt-4o-mini", "openai")) as call,
    ):
        with scenario.span("execute_tool get_weather", tool("get_weather")):
            pass
        call.set_attributes(usage(50, 10))
    with scenario.span("invoke_agent Researcher", agent("Researcher", **{"gen_ai.provider.name": "openai"})) as span:
        with scenario.span("execute_tool get_weather", tool("get_weather")):
            pass
        span.set_attributes(usage(50, 10))
    for calls in (1, 3):
        with scenario.span("plan Task Execution Planner", {OPERATION: "plan", "gen_ai.agent.name": "Task Execution Planner"}):
            for _ in range(calls):
                with scenario.span("chat gpt-4o-mini", chat("gpt-4o-mini", "openai", **usage(20, 5))):
                    pass
        with scenario.span("chat gpt-4o-mini", chat("gpt-4o-mini", "openai", **usage(40, 8))):
            pass

    service = "reference-crewai"
    planner = "Task Execution Planner"
    worker = run_of([service], [(service, OWN_ROOT)], roles={}, tokens=48)
    assert scenario.runs(run) == [
        run_of(["crew"], [("crew", OUTERMOST)], tool_calls=[("get_weather", 1)], tokens=60, subdecisions=TOOL_USE),
        run_of(["Researcher"], [("Researcher", OUTERMOST)], tool_calls=[("get_weather", 1)], tokens=60, subdecisions=TOOL_USE),
        run_of([planner], [(planner, OUTERMOST)], tokens=25),
        worker,
        run_of([planner], [(planner, OUTERMOST)], tokens=75),
        worker,
    ]


def test_autogen(tmp_path, run):
    """reference/scenarios/autogen/scenario.py at commit 021993d882cd. Exercises: a
    create_agent root of its own (the agent's creation, no orchestration), then the
    agent's invoke_agent with the tool it calls under it and its usage, summed over its
    model calls, on the agent span alone (the openai client's own instrumentation owns
    the chat spans, which the scenario does not emit)."""
    scenario = Scenario(tmp_path, "reference-autogen")
    with scenario.span(
        "create_agent test_agent",
        {OPERATION: "create_agent", "gen_ai.agent.name": "test_agent", "gen_ai.provider.name": "openai"},
        SpanKind.CLIENT,
    ):
        pass
    with scenario.span("invoke_agent test_agent", agent("test_agent")) as span:
        with scenario.span("execute_tool get_weather", tool("get_weather")):
            pass
        span.set_attributes(usage(90, 20))

    assert scenario.runs(run) == [
        run_of(["test_agent"], [("test_agent", OUTERMOST)], tool_calls=[("get_weather", 1)], tokens=110, subdecisions=TOOL_USE),
    ]
    # the creation's trace is passed over, and said to be
    again = run("trace", "import", "--from", "otlp", "spans.jsonl", "-o", "again.json", cwd=tmp_path)
    assert again.exit_code == 0
    assert again.output.splitlines()[0].startswith("passed over trace ")
    assert again.output.splitlines()[0].endswith(
        " of spans.jsonl: it converts to no events (nothing in it orchestrates: no agent, tool or model call)"
    )


def test_langgraph(tmp_path, run):
    """reference/scenarios/langgraph/scenario.py at commit 0f6f0fdd03f4. Exercises: a
    durable workflow suspended by an interrupt and resumed: two invoke_workflow roots of
    the same workflow, each its own trace, with nothing under them."""
    scenario = Scenario(tmp_path, "reference-langgraph")
    for _ in range(2):
        with scenario.span("invoke_workflow durable approval workflow", workflow("durable approval workflow")):
            pass

    durable = "durable approval workflow"
    assert scenario.runs(run) == [run_of([durable], [(durable, OUTERMOST)])] * 2


def test_agent_framework(tmp_path, run):
    """reference/scenarios/agent-framework/scenario.py at commit 066d4a7f356f (its
    native telemetry; data.json at the same commit lists the attributes). Exercises: an
    agent run whose two chat spans and tool call nest in its invoke_agent span, usage on
    both the chat spans and the agent span (counted once); a two-agent workflow
    (writer, then reviewer) recorded by the framework's own workflow spans, which carry no
    gen_ai.operation.name (workflow.name, executor.id): the root that encloses the agents
    is the run's orchestrator."""
    scenario = Scenario(tmp_path, "reference-agent-framework")
    with scenario.span("invoke_agent WeatherAgent", agent("WeatherAgent", **{"gen_ai.agent.id": "weather-agent"})) as span:
        with scenario.span("chat gpt-4o-mini", chat("gpt-4o-mini", "openai", **usage(60, 12))):
            pass
        with scenario.span("execute_tool get_weather", tool("get_weather")):
            pass
        with scenario.span("chat gpt-4o-mini", chat("gpt-4o-mini", "openai", **usage(80, 10))):
            pass
        span.set_attributes(usage(140, 22))
    with scenario.span("workflow.run", {"workflow.name": "slogan_review_workflow", "workflow.id": "w1"}):
        for name in ("writer", "reviewer"):
            with (
                scenario.span(f"executor.process {name}", {"executor.id": name, "executor.type": "AgentExecutor"}),
                scenario.span(f"invoke_agent {name}", agent(name)),
                scenario.span("chat gpt-4o-mini", chat("gpt-4o-mini", "openai", **usage(25, 5))),
            ):
                pass

    assert scenario.runs(run) == [
        run_of(
            ["WeatherAgent"], [("WeatherAgent", OUTERMOST)], tool_calls=[("get_weather", 1)], tokens=162, subdecisions=TOOL_USE
        ),
        run_of(
            ["reviewer", "workflow.run", "writer"],
            [("workflow.run", OUTERMOST)],
            tokens=60,
            max_fanout=1,
            spawns=[("workflow.run", "reviewer"), ("workflow.run", "writer")],
            subdecisions={"O1": 2, "O4": 1},
        ),
    ]


def test_claude_agent_sdk(tmp_path, run):
    """reference/scenarios/claude-agent-sdk/scenario.py at commit 1572d3336076, and
    reference/scenarios/claude-agent-sdk-guardrail/scenario.py at commit 14274d857ca7.
    Exercises: a query recorded as one chat root with its usage (the permission probe
    records a log event, no span); a PreToolUse hook as a guardrail, a run_guardrail
    root whose verdict is deny and action block (gen_ai.guardrail.component.name, no
    gen_ai.guardrail.triggered)."""
    scenario = Scenario(tmp_path, "reference-claude-agent-sdk")
    with scenario.span("chat claude", {OPERATION: "chat", "gen_ai.provider.name": "anthropic", **usage(12, 4)}):
        pass
    hook = "Claude Code PreToolUse hook"
    with scenario.span(
        f"run_guardrail {hook}",
        guardrail(
            hook,
            "deny",
            "block",
            "input",
            "tool_call",
            **{
                "gen_ai.provider.name": "anthropic",
                "gen_ai.guardrail.target.id": "toolu_1",
                "gen_ai.guardrail.verdict.reason": "Destructive shell command blocked by policy",
                "gen_ai.guardrail.security.risk.category": "excessive_agency",
            },
        ),
    ):
        pass

    service = "reference-claude-agent-sdk"
    assert scenario.runs(run) == [
        run_of([service], [(service, OWN_ROOT)], roles={}, tokens=16),
        run_of(
            [service],
            [(service, OWN_ROOT)],
            roles={},
            safety=[(service, f"guardrail {hook} deny, block: Destructive shell command blocked by policy")],
        ),
    ]


def test_openai_guardrails(tmp_path, run):
    """reference/scenarios/openai-guardrails/scenario.py at commit 7cbac68c9af1.
    Exercises: run_guardrail spans, each a root of its own (the wrapped chat span
    belongs to the openai client's instrumentation): a benign call passes the input and
    the output guardrail (verdict allow), a call with an e-mail address in it is denied
    and blocked by the input guardrail, with the check's reason."""
    scenario = Scenario(tmp_path, "reference-openai-guardrails")
    name = "Reference Email Filter"
    for target in ("input", "output"):
        with scenario.span(f"run_guardrail {name}", guardrail(name, "allow", "allow", target, "llm")):
            pass
    with scenario.span(
        f"run_guardrail {name}",
        guardrail(name, "deny", "block", "input", "llm", **{"gen_ai.guardrail.verdict.reason": "email address detected"}),
    ):
        pass

    service = "reference-openai-guardrails"
    passed = run_of([service], [(service, OWN_ROOT)], roles={}, safety=[(service, f"guardrail {name}")])
    assert scenario.runs(run) == [
        passed,
        passed,
        run_of(
            [service],
            [(service, OWN_ROOT)],
            roles={},
            safety=[(service, f"guardrail {name} deny, block: email address detected")],
        ),
    ]
