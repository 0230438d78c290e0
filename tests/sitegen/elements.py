"""The elements of a built page, as the tests of escaping read them."""

from __future__ import annotations

import html.parser


class Elements(html.parser.HTMLParser):
    """Every element of a page, and the text of its scripts."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements, self.scripts, self._in_script = [], [], False

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)
