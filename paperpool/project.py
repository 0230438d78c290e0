"""The front door: a pool's folder, which every command opens and asks for what it needs.
Reading, validating and analysing each happen at most once however many outputs ask, so
a command that writes several (`paperpool publish`) pays for each stage once."""

from __future__ import annotations

import datetime as dt
import functools
from pathlib import Path
from typing import TYPE_CHECKING

from .files.problems import InvalidPool, Problem, errors, plural
from .pool import validate as validation
from .pool.reading import Pool, require_pool

if TYPE_CHECKING:
    from .analysis.analyse import Analysis


class Project:
    def __init__(self, root: Path, cache: bool = True):
        self.root = root
        self.cache = cache  # whether validate may use its cache of checked records

    def without_cache(self) -> Project:
        """The same pool, read and checked again without the cache (validate --no-cache)."""
        return Project(self.root, cache=False)

    def pool(self) -> Pool:
        """The pool as read, whatever its records hold; for commands that add to it."""
        return require_pool(self.root)

    @functools.cached_property
    def checked(self) -> tuple[Pool | None, list[Problem]]:
        """The pool (None when its registry is unusable) and every problem validate finds."""
        # validate(root) is the call with the cache on, the one every other caller makes
        return validation.validate(self.root) if self.cache else validation.validate(self.root, cache=False)

    def valid_pool(self) -> Pool:
        """The pool if it has no errors; otherwise a PaperpoolError naming the first."""
        return validation.require_valid(*self.checked)

    def buildable_pool(self, what: str) -> Pool:
        """The valid pool, or InvalidPool listing every error: `what` (the site, ...) is
        not written, and what was written before stays."""
        pool, problems = self.checked
        if errors(problems):
            raise InvalidPool(errors(problems), f"the pool is not valid ({plural(len(errors(problems)), 'error')} above); {what}")
        return pool

    @functools.cached_property
    def analysis(self) -> Analysis:
        """The analysis of the pool as it is now."""
        return self._analyse(None)

    def analysis_as_of(self, day: dt.date | None) -> Analysis:
        """The analysis of the pool as it stood on `day` (None: now, analysed once)."""
        return self.analysis if day is None else self._analyse(day)

    def _analyse(self, day: dt.date | None) -> Analysis:
        # imported here: the analysis needs pandas, which validate (a pre-commit hook) must not pay for
        from .analysis.analyse import analyse

        return analyse(self.valid_pool(), day)
