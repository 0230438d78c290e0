/* The site's search: a button in the header opens a dialog with Pagefind's search UI,
   which reads the index the build wrote to pagefind/ at the site's root (paperpool's
   sitegen/search.py). Pagefind fetches its index as the reader types, so it needs the
   site served over http: opened from disk (file://), the dialog says so and how to serve
   it, and nothing is loaded, so no page logs a failed request. "/" opens it too. */
(function () {
  "use strict";
  var here = document.currentScript && document.currentScript.src;
  if (!here) { return; }
  var root = new URL("../../", here); // this file is assets/paperpool/search.js
  var bundle = new URL("pagefind/", root);
  var fromDisk = location.protocol === "file:";
  var ICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" aria-hidden="true"><path d="M9.5 3A6.5 6.5 0 0 1 16 ' +
    "9.5c0 1.61-.59 3.09-1.56 4.23l.27.27h.79l5 5-1.5 1.5-5-5v-.79l-.27-.27A6.52 6.52 0 0 1 9.5 16 6.5 6.5 0 0 1 3 9.5 6.5 " +
    '6.5 0 0 1 9.5 3m0 2C7 5 5 7 5 9.5S7 14 9.5 14 14 12 14 9.5 12 5 9.5 5"/></svg>';
  var dialog = null, body = null, state = fromDisk ? "offline" : "idle";

  function element(tag, attributes, text) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) { node.setAttribute(name, attributes[name]); });
    if (text) { node.textContent = text; }
    return node;
  }

  function setState(value) {
    state = value;
    body.setAttribute("data-pp-search-state", value);
  }

  function say(parts) {
    // parts: text, or [tag, text, attributes] for code and links; never markup
    var paragraph = element("p", {"class": "pp-search__message", role: "status"});
    parts.forEach(function (part) {
      paragraph.appendChild(typeof part === "string" ? document.createTextNode(part) : element(part[0], part[2], part[1]));
    });
    body.appendChild(paragraph);
  }

  function offline() {
    say(["Search needs the site served over http: opened from disk, as now, the browser does not let a page " +
         "read the search index. In the pool's folder run ", ["code", "paperpool serve"], " and open ",
         ["a", "http://127.0.0.1:8000/", {href: "http://127.0.0.1:8000/"}], " (the address it prints), or serve " +
         "this folder with any web server, such as ", ["code", "python3 -m http.server -d build/site"], "."]);
    say(["Without a server, the ", ["a", "Browse", {href: new URL("browse.html", root).href}],
         " page's text filter finds entries by title, author and summary."]);
  }

  function load() {
    setState("loading");
    var style = element("link", {rel: "stylesheet", href: new URL("pagefind-ui.css", bundle).href});
    var script = element("script", {src: new URL("pagefind-ui.js", bundle).href});
    script.onload = function () {
      var mount = element("div", {"class": "pp-search__ui"});
      body.appendChild(mount);
      /* global PagefindUI */
      new PagefindUI({
        element: mount, bundlePath: bundle.pathname, baseUrl: root.pathname, showImages: false,
        showSubResults: false, resetStyles: false, autofocus: true,
        translations: {placeholder: "Search the pages: titles, authors, tags, text"}
      });
      setState("ready");
      focusInput();
    };
    script.onerror = function () {
      setState("failed");
      say(["Search could not load its index (pagefind/ is missing from this site); rebuild the site with ",
           ["code", "paperpool build"], "."]);
    };
    document.head.appendChild(style);
    document.head.appendChild(script);
  }

  function focusInput() {
    var input = body.querySelector(".pagefind-ui__search-input");
    if (input) { input.focus(); }
  }

  function makeDialog() {
    dialog = element("dialog", {"class": "pp-search", "aria-labelledby": "pp-search-title"});
    var head = element("div", {"class": "pp-search__head"});
    head.appendChild(element("h2", {"class": "pp-search__title", id: "pp-search-title"}, "Search"));
    var close = element("button", {type: "button", "class": "pp-search__close", "aria-label": "Close the search"}, "\u00d7");
    close.addEventListener("click", function () { dialog.close(); });
    head.appendChild(close);
    body = element("div", {"class": "pp-search__body"});
    dialog.appendChild(head);
    dialog.appendChild(body);
    // a click on the backdrop (the dialog itself, outside its box) closes it
    dialog.addEventListener("click", function (event) { if (event.target === dialog) { dialog.close(); } });
    document.body.appendChild(dialog);
    setState(state);
    if (fromDisk) { offline(); }
  }

  function open() {
    if (!dialog) { makeDialog(); }
    if (!dialog.open) { dialog.showModal(); }
    if (state === "idle") { load(); } else { focusInput(); }
  }

  function addButton() {
    var header = document.querySelector(".md-header__inner");
    if (!header || header.querySelector(".pp-search-open")) { return; }
    var button = element("button", {type: "button", "class": "md-header__button pp-search-open", "aria-haspopup": "dialog",
                                     title: fromDisk ? "Search (needs the site served over http)" : "Search (/)"});
    button.innerHTML = ICON; // a constant
    button.appendChild(element("span", {"class": "pp-search-open__label"}, "Search"));
    button.addEventListener("click", open);
    header.insertBefore(button, header.querySelector(".md-header__source"));
  }

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
    if (event.key === "/" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
      event.preventDefault();
      open();
    }
  });
  addButton();
  // Material's instant navigation, when a pool turns it on, swaps the page without
  // running this script again: put the button back each time
  if (window.document$ && typeof window.document$.subscribe === "function") { window.document$.subscribe(addButton); }
})();
