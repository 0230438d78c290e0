"""`paperpool trace metrics FILE` against the survey artifact's own checker,
trace-schema/validate_trace.py, on the same file: two whole commands as a user runs
them (interpreter start and imports included), run in turn so that both meet the same
machine state.

The artifact's checker is its authors' code, not paperpool's: it is not shipped here.
Give its path with `--artifact-validator` (it is trace-schema/validate_trace.py in the
artifact's repository, xxzcc/awesome-llm-mas-rl); without it these rows are not
measured, and the table says so.

Measured on synth's traces in the artifact's format (no schema declared) and on the
artifact's own example trace, which its authors wrote. Not on the Who&When runs paperpool
imports: the checker refuses those at once (they declare no costs or rewards, which it
requires), so its time there is no checking time.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from .measure import Series, run


@dataclass
class ValidatorRow:
    label: str  # what the file is
    events: int
    megabytes: float
    ours: Series  # paperpool trace metrics FILE
    theirs: Series  # python validate_trace.py FILE

    @property
    def ratio(self) -> float:
        return self.ours.median / self.theirs.median


def measure(path: Path, label: str, events: int, validator: Path, times: int) -> ValidatorRow:
    """Both commands on one file, `times` each, in turn (the checker's exit status is 0
    for a trace it accepts)."""
    ours, theirs = Series(), Series()
    for _ in range(times):
        ours.samples.append(run([sys.executable, "-m", "paperpool", "trace", "metrics", str(path)], path.parent))
        theirs.samples.append(run([sys.executable, str(validator), str(path)], path.parent))
    return ValidatorRow(label, events, path.stat().st_size / 1e6, ours, theirs)


def synthetic(folder: Path, events: int, seed: int) -> Path:
    """synth's hierarchical trace of `events` events in the artifact's format."""
    path = folder / f"artifact-{events}.json"
    command = [sys.executable, "-m", "paperpool.traces.synth", "--events", str(events), "--topology", "hierarchical"]
    run([*command, "--seed", str(seed), "--dialect", "artifact", "-o", str(path)], folder)
    return path
