/* What every page needs besides search: Material wraps each table written in Markdown in a
   box that scrolls sideways when the table is wider than the screen, but a box that
   scrolls must be reachable by keyboard (WCAG 2.1.1; axe's scrollable-region-focusable).
   Each box becomes a focusable region named after the heading it sits under, as the
   tables paperpool writes in HTML already are (the wide_table macro). */
(function () {
  "use strict";
  var HEADINGS = "h1, h2, h3, h4, h5, h6";

  // The heading a node sits under: a previous sibling's, else its parent's, upwards.
  function headingOf(node) {
    for (var at = node; at && !at.matches(".md-typeset"); at = at.parentElement) {
      for (var before = at.previousElementSibling; before; before = before.previousElementSibling) {
        if (before.matches(HEADINGS)) { return before.textContent.replace(/\u00b6$/, "").trim(); }
      }
    }
    return document.title;
  }

  function markScrollingTables() {
    document.querySelectorAll(".md-typeset__scrollwrap:not([tabindex])").forEach(function (box) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", headingOf(box) + " (table)");
    });
  }

  // Material wraps the tables as it mounts a page (document$ emits each page, also under
  // instant navigation); this runs after it.
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(function () { setTimeout(markScrollingTables, 0); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { setTimeout(markScrollingTables, 0); });
  }
})();
