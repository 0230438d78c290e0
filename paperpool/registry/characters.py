"""Characters refused in the pool's files: those that act on a terminal or reorder text."""

from __future__ import annotations

import re
from collections.abc import Iterator

from paperpool.files.problems import BIDI_CHARACTERS
from paperpool.files.yamlio import Document

# Characters that act on a terminal or are no text at all: the C0 controls but tab and
# line break, DEL and the C1 controls. Refused in every string of the pool's files.
CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Bidirectional controls reorder what is shown around them. A record's text may need one
# (a name in a right-to-left script) and is shown without them; the registry and the
# claims name things and state rules, which never need one, so there they are refused too.
BIDI_CONTROLS = re.compile(f"[{BIDI_CHARACTERS}]")


def refused_characters(doc: Document, also: re.Pattern | None = None) -> Iterator[tuple[tuple, str]]:
    """Each name or text of a parsed YAML file holding a control character (or one that
    `also` matches): (its path, the first such character). Read from the document's
    scalars as written and its field names, so the data is not walked."""
    names = {path: path[-1] for path in doc.lines if path and isinstance(path[-1], str)}
    for found in (names, doc.raw):
        for path, text in found.items():
            match = CONTROL_CHARACTERS.search(text) or (also.search(text) if also else None)
            if match:
                yield path, match.group()


def refused_character_message(char: str) -> str:
    return f"contains the invisible control character U+{ord(char):04X}; remove it"
