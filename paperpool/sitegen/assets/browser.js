/* paperpool faceted browser.
 *
 * Turns every <div class="pp-browser" data-dataset="NAME" data-root="../"> into a
 * searchable, filterable, sortable list fed by window.paperpoolData[NAME] (a plain
 * script, so the site also works from file://): a sticky bar with the search, the count
 * and the active filters as chips; the filters in a panel (a drawer on a phone); the
 * results as a table on a wide screen and as cards on a narrow one. Pages without a
 * mount are left untouched.
 *
 * Record data is untrusted: the DOM is built only with createElement/textContent, and
 * links are emitted only for http(s) URLs or scheme-less relative paths.
 */
(function () {
  "use strict";

  const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
  const DEBOUNCE_MS = 150;
  const ROW_LIMIT = 500; // rows rendered per change until the reader asks for all
  // Intl.Collator is localeCompare's algorithm without per-call setup: much faster on 10k rows.
  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
  const browsers = []; // live instances: a hash write must keep the other mounts' parameters

  // Create an element; "text" goes through textContent, so data is never parsed as HTML.
  function h(tag, props, children) {
    const node = document.createElement(tag);
    for (const k of Object.keys(props || {})) {
      const v = props[k];
      if (v == null || v === false) continue;
      if (k === "text") node.textContent = v;
      else if (k === "className") node.className = v;
      else if (k.slice(0, 2) === "on") node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children || []) if (c) node.appendChild(c);
    return node;
  }

  // Replace a node's children (replaceChildren() needs 2020-era browsers).
  function fill(node, child) {
    node.textContent = "";
    node.appendChild(child);
  }

  function toNum(v) {
    const n = typeof v === "number" ? v : typeof v === "string" && v.trim() ? Number(v) : NaN;
    return Number.isFinite(n) ? n : null;
  }

  function cellText(v) {
    if (v === null || v === undefined) return "";
    return Array.isArray(v) ? v.map(cellText).join(", ") : String(v);
  }

  function debounce(fn, ms) {
    let t = 0;
    const run = () => { clearTimeout(t); t = 0; fn(); };
    run.later = () => { clearTimeout(t); t = setTimeout(run, ms); };
    return run;
  }

  // A link target, or null when the href is unsafe or unusable.
  function safeHref(root, href) {
    if (typeof href !== "string") return null;
    // URL parsing drops tabs/newlines anywhere and trims control chars and spaces,
    // so "java\tscript:" or " javascript:" must be normalised before the scheme test.
    const clean = href.replace(/[\t\n\r]/g, "").replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "");
    if (!clean || /^[\\/]{2}/.test(clean)) return null; // protocol-relative: another host
    let out = clean;
    if (SCHEME.test(clean)) {
      if (!/^https?:/i.test(clean)) return null;
    } else if (clean.charAt(0) !== "/") {
      out = root + clean;
    }
    try { // belt and braces: whatever we emit must resolve to a web or local file URL
      const proto = new URL(out, document.baseURI).protocol;
      if (proto !== "http:" && proto !== "https:" && proto !== "file:") return null;
    } catch (e) {
      return null;
    }
    return out;
  }

  // Words for the free-text search: letters and digits, case and accents folded, so
  // "Müller" is found by "muller" and "GPT-4o" by "gpt 4o".
  function words(text) {
    return String(text || "").normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) || [];
  }

  // How much a query word weighs where it starts a word of a record's field: the title
  // and the authors rank above the rest; a whole word above a word's beginning.
  const FIELD_WEIGHT = [3, 3, 1];
  function fieldScore(list, word, weight) {
    let best = 0;
    for (let k = 0; k < list.length; k++) {
      const w = list[k];
      if (w === word) return weight + 1;
      if (!best && w.startsWith(word)) best = weight;
    }
    return best;
  }

  let panels = 0; // a unique id per filter panel, for aria-controls
  const NARROW = window.matchMedia("(max-width: 59.9375em)"); // results as cards, filters as a drawer

  class Browser {
    constructor(mount, data, prefix) {
      this.mount = mount;
      this.prefix = prefix;
      this.name = mount.getAttribute("data-dataset");
      this.root = mount.getAttribute("data-root") || "";
      const noun = Array.isArray(data.noun) ? data.noun : ["record", "records"];
      this.noun = [String(noun[0]), String(noun[1] || noun[0])];
      this.columns = (data.columns || []).filter((c) => c && c.field);
      this.range = data.range && data.range.field ? data.range : null;
      this.facets = (data.facets || []).filter((f) => f && f.field).map((f) => {
        const values = (f.values || []).map((v) => ({ id: String(v.id), label: cellText(v.label) }));
        return {
          field: String(f.field), label: cellText(f.label || f.field), values,
          index: new Map(values.map((v, i) => [v.id, i])),
          selected: new Uint8Array(values.length), nsel: 0,
          count: new Int32Array(values.length), boxes: [], labels: [], countNodes: [],
        };
      });
      // Precompute once what each filter pass needs: value indices, range number, words.
      this.records = data.records.filter(Boolean).map((r) => {
        const cells = r.cells || {};
        const find = Array.isArray(r.find) ? r.find : ["", "", this.columns.map((c) => cellText(cells[c.field])).join(" ")];
        return {
          key: cellText(r.key), href: r.href, cells,
          fv: this.facets.map((f) => { // known value indices, deduplicated so counts stay exact
            const ids = [].concat((r.facets && r.facets[f.field]) || []);
            return Array.from(new Set(ids.map((id) => f.index.get(String(id))).filter((i) => i !== undefined)));
          }),
          rv: toNum(r.range),
          words: FIELD_WEIGHT.map((w, k) => Array.from(new Set(words(cellText(find[k]))))),
          bib: typeof r.bibtex === "string" && r.bibtex.trim() ? r.bibtex : null,
          row: null, card: null, // built lazily and reused across renders
        };
      });
      this.hasBib = this.records.some((r) => r.bib);
      // The order before the reader sorts (newest first, then by title, for entries); it
      // also breaks the ties of every other order.
      this.defaultOrder = (data.order || []).filter((o) => o && this.columns.some((c) => c.field === o.field))
        .map((o) => ({ field: String(o.field), desc: !!o.desc }));
      this.rank = this.sortIndices(this.defaultOrder, null);
      this.state = { lo: null, hi: null, q: "", sort: null };
      this.orders = new Map(); // "field-desc" -> sorted record indices
      this.current = [];
      this.showAll = false;
      this.narrow = NARROW.matches;
      this.build();
      this.readHash();
      this.render();
      NARROW.addEventListener("change", () => this.relayout());
      mount.setAttribute("data-pp-state", "ready");
    }

    // ---- DOM scaffolding ------------------------------------------------------------
    build() {
      const filterNow = debounce(() => this.changed(), DEBOUNCE_MS);
      const plural = this.noun[1];
      const Plural = plural.charAt(0).toUpperCase() + plural.slice(1);
      this.q = h("input", {
        type: "search", className: "pp-q", autocomplete: "off", spellcheck: "false",
        placeholder: "Words, or the start of words: title, author, tag",
        oninput: () => { this.state.q = this.q.value; filterNow.later(); },
        onchange: filterNow,
      });
      const search = h("label", { className: "pp-search" }, [h("span", { className: "pp-sr", text: "Search " + plural }), this.q]);

      const filters = [];
      if (this.range) {
        const vals = this.records.map((r) => r.rv).filter((v) => v !== null);
        const num = (cls, hint) => h("input", {
          type: "number", className: cls, inputmode: "numeric", step: "any",
          placeholder: vals.length ? String(vals.reduce(hint)) : null, // data bounds as hints
          oninput: () => {
            this.state.lo = toNum(this.lo.value);
            this.state.hi = toNum(this.hi.value);
            filterNow.later();
          },
          onchange: filterNow,
        });
        this.lo = num("pp-range-from", (a, b) => Math.min(a, b));
        this.hi = num("pp-range-to", (a, b) => Math.max(a, b));
        filters.push(h("fieldset", { className: "pp-range", "data-field": this.range.field }, [
          h("legend", { text: cellText(this.range.label || this.range.field) }),
          h("div", { className: "pp-range-inputs" }, [
            h("label", {}, [h("span", { text: "From" }), this.lo]),
            h("label", {}, [h("span", { text: "To" }), this.hi]),
          ]),
        ]));
      }

      this.facets.forEach((f) => {
        const rows = f.values.map((v, i) => {
          const box = h("input", {
            type: "checkbox", value: v.id,
            onchange: () => { this.select(f, i, box.checked); this.changed(); },
          });
          const count = h("span", { className: "pp-count", text: "0" });
          f.boxes.push(box);
          f.countNodes.push(count);
          return f.labels[i] = h("label", { className: "pp-value", "data-value": v.id },
            [box, h("span", { className: "pp-label", text: v.label }), count]);
        });
        filters.push(h("fieldset", { className: "pp-facet", "data-field": f.field }, [
          h("legend", { text: f.label }), h("div", { className: "pp-values" }, rows),
        ]));
      });

      // The count, the active filters as chips, and the controls stay in view (sticky).
      this.total = h("p", { className: "pp-total", role: "status", "aria-live": "polite" });
      this.chips = h("ul", { className: "pp-chips", "aria-label": "Active filters" });
      this.clear = h("button", { type: "button", className: "pp-clear", text: "Clear filters",
        onclick: () => { this.clearFilters(); this.q.focus(); } });
      this.bibButton = this.hasBib ? h("button", { type: "button", className: "pp-download",
        onclick: () => this.download() }) : null;

      const panelId = "pp-filters-" + (++panels);
      this.toggle = h("button", { type: "button", className: "pp-filters-toggle", "aria-expanded": "false",
        "aria-controls": panelId, onclick: () => (this.panel.open ? this.closePanel() : this.openPanel()) },
      [h("span", { text: "Filters" }), this.activeBadge = h("span", { className: "pp-badge", hidden: true })]);
      this.order = h("select", { className: "pp-order", onchange: () => this.orderChosen() });
      const sortBox = h("label", { className: "pp-sortby" }, [h("span", { text: "Sort" }), this.order]);

      // The filters: a panel that opens under the bar on a wide screen, and a modal
      // drawer (a dialog, which keeps the focus in it and closes with Escape) on a phone.
      const titleId = panelId + "-title";
      this.panelCount = h("button", { type: "button", className: "pp-apply", onclick: () => this.closePanel(true) });
      this.panel = h("dialog", { className: "pp-panel", id: panelId, "aria-labelledby": titleId }, [
        h("div", { className: "pp-panel-head" }, [
          h("p", { className: "pp-panel-title", id: titleId, text: "Filter " + plural }),
          h("button", { type: "button", className: "pp-close", "aria-label": "Close filters", text: "\u00d7",
            onclick: () => this.closePanel() }),
        ]),
        h("p", { className: "pp-hint", text: "Values of one filter add up (any of them); filters combine (all of them). "
          + "The number beside a value is how many " + plural + " you would see with it chosen." }),
        h("div", { className: "pp-groups" }, filters),
        h("div", { className: "pp-panel-foot" }, [this.panelCount]),
      ]);
      this.panel.addEventListener("close", () => this.panelClosed());

      // The table's columns: the linked one (the title), numbers and tags; the other
      // texts (authors, venue) are a line under the title, as on a card, so that the
      // title keeps the room to be read in two or three lines.
      this.underTitle = this.columns.filter((c) => !c.link && !c.tag && c.kind !== "number");
      this.tableColumns = this.columns.filter((c) => this.underTitle.indexOf(c) < 0);
      this.heads = this.tableColumns.map((c) => h("th", {
        scope: "col", "data-field": c.field, className: c.kind === "number" ? "pp-num" : null,
      }, [h("button", { type: "button", className: "pp-sort", text: cellText(c.label || c.field),
        // Sort on the press, not the click: leaving the search box on that press may
        // re-filter the table and move the columns, and the release would then land on
        // another header, so the click would be lost. Keyboard clicks (detail 0) sort too.
        onpointerdown: (event) => { if (event.button === 0) this.sortBy(c.field); },
        onclick: (event) => { if (event.detail === 0) this.sortBy(c.field); } })]));
      this.tbody = h("tbody");
      this.table = h("table", { className: "pp-table", "aria-label": Plural }, [
        h("thead", {}, [h("tr", {}, this.heads)]), this.tbody,
      ]);
      this.cards = h("ol", { className: "pp-cards", "aria-label": Plural });
      this.results = h("div", { className: "pp-results", tabindex: "-1" });
      this.more = h("button", { type: "button", className: "pp-more", hidden: true,
        onclick: () => { this.showAll = true; this.render(); this.results.focus(); } });
      this.empty = h("p", { className: "pp-empty", hidden: true, text: "No " + plural + " match these filters." });

      this.bar = h("div", { className: "pp-bar", role: "search", "aria-label": "Search and filter " + plural }, [
        h("div", { className: "pp-bar-row" }, [search, this.toggle, sortBox]),
        h("div", { className: "pp-bar-row" }, [this.total, this.chips, this.clear, this.bibButton]),
      ]);
      fill(this.mount, h("div", { className: "pp-layout" }, [this.bar, this.panel, this.results, this.more, this.empty]));
      this.fillOrders();
      this.stick();
    }

    // The bar sticks under the site's header; the table's header sticks under the bar.
    stick() {
      const header = document.querySelector(".md-header");
      const place = () => {
        const fixed = header && /sticky|fixed/.test(getComputedStyle(header).position);
        const top = fixed ? header.offsetHeight : 0;
        this.mount.style.setProperty("--pp-top", top + "px");
        this.mount.style.setProperty("--pp-head-top", top + this.bar.offsetHeight + "px");
      };
      place();
      if (window.ResizeObserver) new ResizeObserver(place).observe(this.bar);
    }

    // The sort choices: best match (while searching), then each column both ways.
    fillOrders() {
      const opts = [h("option", { value: "relevance", text: "Best match" })];
      for (const c of this.columns) {
        const label = cellText(c.label || c.field);
        const names = Array.isArray(c.orders) && c.orders.length === 2 ? c.orders.map(cellText)
          : c.kind === "number" ? [label + ": lowest first", label + ": highest first"] : [label + ": A to Z", label + ": Z to A"];
        opts.push(h("option", { value: c.field + "-asc", text: names[0] }), h("option", { value: c.field + "-desc", text: names[1] }));
      }
      for (const o of opts) this.order.appendChild(o);
      // the default order first among the columns' (e.g. "Newest first")
      const first = this.defaultOrder[0];
      const option = first && this.order.querySelector('option[value="' + CSS.escape(first.field + (first.desc ? "-desc" : "-asc")) + '"]');
      if (option) this.order.insertBefore(option, opts[1]);
    }

    // ---- the filter panel -----------------------------------------------------------
    openPanel() {
      const modal = NARROW.matches && typeof this.panel.showModal === "function";
      if (modal) this.panel.showModal();
      else this.panel.show();
      this.panel.classList.toggle("pp-drawer", modal);
      this.toggle.setAttribute("aria-expanded", "true");
      this.panelCount.setAttribute("aria-live", modal ? "polite" : "off"); // the bar's count is behind the drawer
      if (modal) this.panel.querySelector(".pp-close").focus();
    }

    closePanel(toResults) {
      if (this.panel.open) this.panel.close();
      if (toResults) {
        this.results.scrollIntoView({ block: "start" });
        this.results.focus({ preventScroll: true });
      }
    }

    panelClosed() {
      const wasModal = this.panel.classList.contains("pp-drawer");
      this.panel.classList.remove("pp-drawer");
      this.toggle.setAttribute("aria-expanded", "false");
      if (wasModal && !this.mount.contains(document.activeElement) && document.activeElement !== this.results) this.toggle.focus();
    }

    // A phone turned sideways (or a window resized) across the breakpoint.
    relayout() {
      if (this.panel.open && NARROW.matches !== this.panel.classList.contains("pp-drawer")) {
        this.panel.close();
        this.openPanel();
      }
      this.render();
    }

    // ---- state changes --------------------------------------------------------------
    select(f, i, on) {
      if (!!f.selected[i] === on) return;
      f.selected[i] = on ? 1 : 0;
      f.nsel += on ? 1 : -1;
    }

    changed() {
      this.showAll = false;
      this.render();
      this.writeHash();
    }

    sortBy(field) {
      const s = this.effectiveSort();
      this.state.sort = { field, desc: !!s && s.field === field && !s.desc };
      this.changed();
    }

    orderChosen() {
      const m = /^(.+)-(asc|desc)$/.exec(this.order.value);
      this.state.sort = m ? { field: m[1], desc: m[2] === "desc" } : null;
      this.changed();
    }

    // The order shown: the reader's, or best match while searching, or the default.
    effectiveSort() {
      if (this.state.sort) return this.state.sort;
      return this.queryWords().length ? null : this.defaultOrder[0] || null;
    }

    clearFilters() {
      for (const f of this.facets) for (let i = 0; i < f.values.length; i++) this.select(f, i, false);
      Object.assign(this.state, { lo: null, hi: null, q: "" }); // sort order is not a filter: keep it
      this.syncControls();
      this.changed();
    }

    // Put the controls in line with this.state (after reading the hash or clearing).
    syncControls() {
      this.q.value = this.state.q;
      if (this.range) {
        this.lo.value = this.state.lo === null ? "" : String(this.state.lo);
        this.hi.value = this.state.hi === null ? "" : String(this.state.hi);
      }
      for (const f of this.facets) f.boxes.forEach((b, i) => { b.checked = !!f.selected[i]; });
    }

    // ---- URL state in location.hash ----------------------------------------------------
    readHash() {
      const p = new URLSearchParams(location.hash.replace(/^#/, ""));
      const get = (k) => p.get(this.prefix + k);
      for (const f of this.facets) {
        f.selected.fill(0);
        f.nsel = 0;
        for (const id of (get(f.field) || "").split(",")) {
          const i = f.index.get(id);
          if (i !== undefined) this.select(f, i, true);
        }
      }
      const s = this.state, r = this.range && get(this.range.field);
      s.lo = s.hi = null;
      // "2024-2026", "2024-", "-2026" (as written below), or "2024" meaning 2024-2024.
      const NUM = "(-?\\d+(?:\\.\\d+)?)";
      const m = r && (new RegExp("^" + NUM + "?-" + NUM + "?$").exec(r) || new RegExp("^" + NUM + "$").exec(r));
      if (m) [s.lo, s.hi] = [toNum(m[1]), toNum(m[m.length > 2 ? 2 : 1])];
      s.q = get("q") || "";
      const sm = /^(.+)-(asc|desc)$/.exec(get("sort") || "");
      s.sort = sm && this.columns.some((c) => c.field === sm[1]) ? { field: sm[1], desc: sm[2] === "desc" } : null;
      this.syncControls();
    }

    // The filters and sort order as one string, to tell whether a hash changed them.
    stateKey() {
      const s = this.state;
      return JSON.stringify([this.facets.map((f) => Array.from(f.selected)), s.lo, s.hi, s.q, s.sort]);
    }

    writeHash() {
      const out = new URLSearchParams();
      const others = browsers.filter((b) => b !== this && b.mount.isConnected);
      if (others.length) {
        for (const [k, v] of new URLSearchParams(location.hash.replace(/^#/, ""))) {
          if (others.some((b) => k.startsWith(b.prefix))) out.append(k, v);
        }
      }
      const set = (k, v) => { if (v) out.set(this.prefix + k, v); };
      for (const f of this.facets) set(f.field, f.values.filter((v, i) => f.selected[i]).map((v) => v.id).join(","));
      const s = this.state;
      if (this.range && (s.lo !== null || s.hi !== null)) {
        set(this.range.field, (s.lo === null ? "" : s.lo) + "-" + (s.hi === null ? "" : s.hi));
      }
      set("q", s.q.trim());
      if (s.sort) set("sort", s.sort.field + "-" + (s.sort.desc ? "desc" : "asc"));
      const hash = out.toString().replace(/%2C/gi, ","); // keep lists readable: a,b,c
      // replaceState: filter tweaks must not flood the history; it also fires no hashchange.
      history.replaceState(history.state, "", location.pathname + location.search + (hash ? "#" + hash : ""));
    }

    // ---- filtering, counting, sorting ------------------------------------------------
    queryWords() {
      return Array.from(new Set(words(this.state.q)));
    }

    // A record's score for the query words: 0 unless every word starts a word of it.
    score(r, qs) {
      let total = 0;
      for (let w = 0; w < qs.length; w++) {
        let best = 0;
        for (let k = 0; k < FIELD_WEIGHT.length; k++) best = Math.max(best, fieldScore(r.words[k], qs[w], FIELD_WEIGHT[k]));
        if (!best) return 0;
        total += best;
      }
      return total;
    }

    // One pass: a record that fails exactly one facet still counts towards that facet's
    // values (selecting one of them would admit it); one that fails none counts everywhere.
    compute(qs) {
      const F = this.facets, recs = this.records, s = this.state;
      const bounded = s.lo !== null || s.hi !== null;
      const match = new Float64Array(recs.length); // 0: no match; else the text score (1 without text)
      for (const f of F) f.count.fill(0);
      const bump = (f, vs) => { for (let k = 0; k < vs.length; k++) f.count[vs[k]]++; };
      outer: for (let i = 0; i < recs.length; i++) {
        const r = recs[i];
        if (bounded && (r.rv === null || (s.lo !== null && r.rv < s.lo) || (s.hi !== null && r.rv > s.hi))) continue;
        const score = qs.length ? this.score(r, qs) : 1;
        if (!score) continue;
        let miss = -1;
        for (let j = 0; j < F.length; j++) {
          const f = F[j];
          if (!f.nsel) continue;
          const vs = r.fv[j];
          let ok = false;
          for (let k = 0; k < vs.length && !ok; k++) ok = f.selected[vs[k]] === 1;
          if (!ok) {
            if (miss >= 0) continue outer; // fails two facets: counts nowhere
            miss = j;
          }
        }
        if (miss >= 0) bump(F[miss], r.fv[miss]);
        else {
          match[i] = score;
          for (let j = 0; j < F.length; j++) bump(F[j], r.fv[j]);
        }
      }
      return match;
    }

    // Record indices sorted by columns, ties by `rank` (the default order) then position.
    sortIndices(sorts, rank) {
      const keys = sorts.map((sort) => {
        const col = this.columns.find((c) => c.field === sort.field);
        const isNum = !!col && col.kind === "number";
        return { desc: sort.desc, isNum, vals: this.records.map((r) => {
          const v = r.cells[sort.field];
          return isNum ? toNum(v) : cellText(v) || null;
        }) };
      });
      const idx = this.records.map((r, i) => i);
      idx.sort((a, b) => {
        for (const k of keys) {
          const x = k.vals[a], y = k.vals[b];
          if (x === y) continue;
          if (x === null || y === null) return x === null ? 1 : -1; // nulls last, both ways
          const c = k.isNum ? x - y : collator.compare(x, y);
          if (c) return k.desc ? -c : c;
        }
        return rank ? rank[a] - rank[b] : a - b;
      });
      if (rank) return idx;
      const position = new Int32Array(idx.length); // record index -> place in this order
      idx.forEach((i, k) => { position[i] = k; });
      return position;
    }

    // Record indices in a column's order; cached because the data never changes.
    orderOf(sort) {
      const key = sort.field + (sort.desc ? "-desc" : "-asc");
      if (!this.orders.has(key)) this.orders.set(key, this.sortIndices([sort], this.rank));
      return this.orders.get(key);
    }

    link(r, text, className) {
      const href = safeHref(this.root, r.href);
      return href ? h("a", { href, text, className, rel: /^https?:/i.test(href) ? "noopener noreferrer" : null })
        : h("span", { text, className });
    }

    row(r) {
      if (r.row) return r.row;
      const tr = h("tr", { "data-key": r.key });
      for (const c of this.tableColumns) {
        const v = r.cells[c.field], text = cellText(v);
        const td = h("td", { className: c.kind === "number" ? "pp-num" : null, "data-field": c.field });
        if (c.link) {
          td.appendChild(this.link(r, text));
          const meta = this.metaLine(r, this.underTitle);
          if (meta) td.appendChild(meta);
        }
        else if (Array.isArray(v) && v.length > 1) v.forEach((one) => td.appendChild(h("span", { className: "pp-line", text: cellText(one) })));
        else td.textContent = text;
        tr.appendChild(td);
      }
      return (r.row = tr);
    }

    // A result as a card (narrow screens): the linked title, a line of the plain
    // columns (authors, year, venue), then each vocabulary value as a tag.
    card(r) {
      if (r.card) return r.card;
      const titled = this.columns.find((c) => c.link) || this.columns[0];
      const tags = [];
      for (const c of this.columns) {
        if (!c.tag || c === titled) continue;
        for (const one of [].concat(r.cells[c.field] == null ? [] : r.cells[c.field])) {
          const text = cellText(one);
          if (text) tags.push(h("li", { className: "pp-tag" }, [this.fieldName(c), document.createTextNode(text)]));
        }
      }
      const title = cellText(r.cells[titled && titled.field]) || r.key;
      return (r.card = h("li", { className: "pp-card", "data-key": r.key }, [
        h("h2", { className: "pp-card-title" }, [titled && titled.link ? this.link(r, title) : document.createTextNode(title)]),
        this.metaLine(r, this.columns.filter((c) => c !== titled && !c.tag)),
        tags.length ? h("ul", { className: "pp-tags" }, tags) : null,
      ]));
    }

    // A column's name for screen readers, before a value shown without it.
    fieldName(c) {
      return h("span", { className: "pp-sr", text: cellText(c.label || c.field) + ": " });
    }

    // The plain columns' values on one line, "Luo et al. · 2025 · arXiv" (null: none).
    metaLine(r, columns) {
      const items = columns.filter((c) => cellText(r.cells[c.field])).map((c) => h("span",
        { className: "pp-meta-item", "data-field": c.field }, [this.fieldName(c), document.createTextNode(cellText(r.cells[c.field]))]));
      return items.length ? h("span", { className: "pp-meta" }, items) : null;
    }

    // The active filters as chips: each a button that removes its filter. Chips are
    // rebuilt only when the filters change: the press on a chip may first end an edit of
    // the range (its change event re-renders), and the chip must still be there to click.
    renderChips() {
      const found = []; // [field's name, value's text, how to remove it]
      const s = this.state;
      if (this.range && (s.lo !== null || s.hi !== null)) {
        const text = s.lo !== null && s.hi !== null ? (s.lo === s.hi ? String(s.lo) : s.lo + "\u2013" + s.hi)
          : s.lo !== null ? "from " + s.lo : "to " + s.hi;
        found.push([cellText(this.range.label || this.range.field), text, () => { s.lo = s.hi = null; }]);
      }
      for (const f of this.facets) {
        f.values.forEach((v, i) => { if (f.selected[i]) found.push([f.label, v.label, () => this.select(f, i, false)]); });
      }
      this.clear.hidden = found.length === 0 && !s.q.trim();
      const signature = JSON.stringify(found.map((c) => c.slice(0, 2)));
      if (signature === this.chipSignature) return;
      this.chipSignature = signature;
      const frag = document.createDocumentFragment();
      for (const [name, value, remove] of found) {
        const button = h("button", { type: "button", className: "pp-chip", "aria-label": "Remove filter " + name + ": " + value,
          onclick: () => {
            const at = Array.from(this.chips.querySelectorAll("button")).indexOf(button);
            remove();
            this.syncControls();
            this.changed();
            const left = this.chips.querySelectorAll("button");
            (left[Math.min(at, left.length - 1)] || this.toggle).focus(); // the focus stays near
          } }, [h("span", { className: "pp-chip-name", text: name }), h("span", { text: value }),
          h("span", { className: "pp-chip-x", "aria-hidden": "true", text: "\u00d7" })]);
        frag.appendChild(h("li", {}, [button]));
      }
      fill(this.chips, frag);
      this.chips.hidden = found.length === 0;
      this.activeBadge.hidden = found.length === 0;
      this.activeBadge.textContent = String(found.length);
      this.toggle.setAttribute("aria-label", "Filters" + (found.length ? ", " + found.length + " active" : ""));
    }

    render() {
      const qs = this.queryWords();
      const match = this.compute(qs), recs = this.records;
      for (const f of this.facets) {
        f.labels.forEach((label, i) => {
          f.countNodes[i].textContent = String(f.count[i]);
          label.setAttribute("data-count", String(f.count[i]));
          label.classList.toggle("pp-zero", f.count[i] === 0); // greyed, not hidden: gaps show
        });
      }
      const sort = this.effectiveSort();
      const seq = sort ? this.orderOf(sort) : null;
      let current = [];
      for (let k = 0; k < recs.length; k++) {
        const i = seq ? seq[k] : k;
        if (match[i]) current.push(i);
      }
      // best match: the highest score first, ties in the default order
      if (!sort) current = current.sort((a, b) => match[b] - match[a] || (this.rank[a] - this.rank[b]));
      this.current = current;
      // Laying out thousands of rows costs the browser far more than filtering does, so
      // a long result shows its first ROW_LIMIT rows plus a "Show all" button.
      const shown = this.showAll ? current.length : Math.min(current.length, ROW_LIMIT);
      const narrow = NARROW.matches;
      const frag = document.createDocumentFragment();
      for (let k = 0; k < shown; k++) frag.appendChild(narrow ? this.card(recs[current[k]]) : this.row(recs[current[k]]));
      fill(narrow ? this.cards : this.tbody, frag);
      const list = narrow ? this.cards : this.table;
      if (this.results.firstChild !== list) fill(this.results, list);
      this.more.hidden = shown === current.length;
      this.more.textContent = "Show all " + current.length + " " + this.noun[1] + " (" + shown + " listed)";

      this.tableColumns.forEach((c, i) => {
        if (sort && sort.field === c.field) this.heads[i].setAttribute("aria-sort", sort.desc ? "descending" : "ascending");
        else this.heads[i].removeAttribute("aria-sort");
      });
      const relevance = this.order.querySelector('option[value="relevance"]');
      relevance.hidden = relevance.disabled = !qs.length && !!this.defaultOrder.length;
      relevance.textContent = qs.length ? "Best match" : "Unsorted";
      this.order.value = sort ? sort.field + (sort.desc ? "-desc" : "-asc") : "relevance";
      const total = recs.length, noun = this.noun[total === 1 ? 0 : 1];
      this.total.textContent = "Showing " + current.length + " of " + total + " " + noun;
      this.total.setAttribute("data-shown", String(current.length));
      this.total.setAttribute("data-total", String(total));
      this.panelCount.textContent = "Show " + current.length + " " + this.noun[current.length === 1 ? 0 : 1];
      this.empty.hidden = current.length > 0;
      this.results.hidden = current.length === 0;
      this.renderChips();
      if (this.bibButton) {
        const n = current.reduce((acc, i) => acc + (recs[i].bib ? 1 : 0), 0);
        this.bibButton.textContent = "Download " + n + " as BibTeX";
        this.bibButton.setAttribute("data-count", String(n));
        this.bibButton.disabled = n === 0;
      }
    }

    download() {
      const text = this.current.map((i) => this.records[i].bib).filter(Boolean)
        .map((b) => (b.endsWith("\n") ? b : b + "\n")).join("\n");
      const url = URL.createObjectURL(new Blob([text], { type: "application/x-bibtex;charset=utf-8" }));
      const a = h("a", { href: url, download: (this.name || "selection").replace(/[^\w.-]+/g, "_") + "-selection.bib" });
      document.body.appendChild(a); // Firefox only follows clicks on attached links
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 5000); // the download must start before revoking
    }
  }

  // The data script may run after us (it sits below the mount), so retry briefly.
  const started = new WeakSet();
  function start(mount, prefix, tries) {
    const name = mount.getAttribute("data-dataset");
    const data = window.paperpoolData && window.paperpoolData[name];
    if (!data || !Array.isArray(data.records)) {
      if (tries < 40) setTimeout(() => start(mount, prefix, tries + 1), 50);
      else {
        mount.setAttribute("data-pp-state", "error");
        fill(mount, h("p", { className: "pp-error", text: "The table data (" + name + ") could not be loaded." }));
      }
      return;
    }
    browsers.push(new Browser(mount, data, prefix));
  }

  function init() {
    const mounts = Array.from(document.querySelectorAll("div.pp-browser[data-dataset]"));
    // Short parameter names for the common single-table page; namespaced otherwise.
    const prefixed = mounts.length > 1;
    for (const m of mounts) {
      if (started.has(m)) continue;
      started.add(m);
      start(m, prefixed ? m.getAttribute("data-dataset") + "." : "", 0);
    }
  }

  // A link to "#stage=abstract_screen" on the browser's own page (the exclusion log's
  // stage links) sets the filters; the browser also comes into view, since no anchor of
  // that name scrolls to it. Only a link, the back button or an edited address get here:
  // the browser's own changes use replaceState, which fires no hashchange.
  window.addEventListener("hashchange", () => {
    for (let i = browsers.length - 1; i >= 0; i--) {
      const b = browsers[i];
      if (!b.mount.isConnected) { browsers.splice(i, 1); continue; } // content swapped out (instant navigation)
      const before = b.stateKey();
      b.readHash();
      b.render();
      const box = b.mount.getBoundingClientRect();
      if (b.stateKey() !== before && (box.top < 0 || box.top > window.innerHeight)) b.mount.scrollIntoView();
    }
  });

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
  // mkdocs-material's instant navigation swaps content without a page load.
  if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(init);
})();
