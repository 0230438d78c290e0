/* paperpool faceted browser.
 *
 * Turns every <div class="pp-browser" data-dataset="NAME" data-root="../"> into a
 * filterable, sortable table fed by window.paperpoolData[NAME] (a plain script, so the
 * site also works from file://). Pages without a mount are left untouched.
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
      // Precompute once what each filter pass needs: value indices, range number, text.
      this.records = data.records.filter(Boolean).map((r) => {
        const cells = r.cells || {};
        return {
          key: cellText(r.key), href: r.href, cells,
          fv: this.facets.map((f) => { // known value indices, deduplicated so counts stay exact
            const ids = [].concat((r.facets && r.facets[f.field]) || []);
            return Array.from(new Set(ids.map((id) => f.index.get(String(id))).filter((i) => i !== undefined)));
          }),
          rv: toNum(r.range),
          text: (typeof r.text === "string" ? r.text
            : this.columns.map((c) => cellText(cells[c.field])).join(" ")).toLowerCase(),
          bib: typeof r.bibtex === "string" && r.bibtex.trim() ? r.bibtex : null,
          row: null, // <tr>, built lazily and reused across renders
        };
      });
      this.hasBib = this.records.some((r) => r.bib);
      this.state = { lo: null, hi: null, q: "", sort: null };
      this.orders = new Map(); // "field-desc" -> sorted record indices
      this.current = [];
      this.showAll = false;
      this.build();
      this.readHash();
      this.render();
      mount.setAttribute("data-pp-state", "ready");
    }

    // ---- DOM scaffolding ------------------------------------------------------------
    build() {
      const filterNow = debounce(() => this.changed(), DEBOUNCE_MS);
      this.q = h("input", {
        type: "search", className: "pp-q", autocomplete: "off", spellcheck: "false",
        placeholder: "Words in any field",
        oninput: () => { this.state.q = this.q.value; filterNow.later(); },
        onchange: filterNow,
      });
      const filters = [h("label", { className: "pp-search" }, [h("span", { text: "Search" }), this.q])];

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

      this.total = h("p", { className: "pp-total", role: "status", "aria-live": "polite" });
      this.clear = h("button", { type: "button", className: "pp-clear", text: "Clear filters",
        onclick: () => this.clearFilters() });
      this.bibButton = this.hasBib ? h("button", { type: "button", className: "pp-download",
        onclick: () => this.download() }) : null;

      this.heads = this.columns.map((c) => h("th", {
        scope: "col", "data-field": c.field, className: c.kind === "number" ? "pp-num" : null,
      }, [h("button", { type: "button", className: "pp-sort", text: cellText(c.label || c.field),
        // Sort on the press, not the click: leaving the search box on that press may
        // re-filter the table and move the columns, and the release would then land on
        // another header, so the click would be lost. Keyboard clicks (detail 0) sort too.
        onpointerdown: (event) => { if (event.button === 0) this.sortBy(c.field); },
        onclick: (event) => { if (event.detail === 0) this.sortBy(c.field); } })]));
      this.tbody = h("tbody");
      const plural = this.noun[1];
      this.table = h("table", { className: "pp-table", "aria-label": plural.charAt(0).toUpperCase() + plural.slice(1) }, [
        h("thead", {}, [h("tr", {}, this.heads)]), this.tbody,
      ]);
      // Focusable so keyboard users can scroll a wide table.
      this.scroller = h("div", { className: "pp-scroll", tabindex: "0", role: "region",
        "aria-label": "Table of " + plural }, [this.table]);
      this.more = h("button", { type: "button", className: "pp-more", hidden: true,
        onclick: () => { this.showAll = true; this.render(); this.scroller.focus(); } });
      this.empty = h("p", { className: "pp-empty", hidden: true, text: "No " + plural + " match these filters." });

      fill(this.mount, h("div", { className: "pp-layout" }, [
        h("div", { className: "pp-filters", role: "search", "aria-label": "Filter " + plural }, filters),
        h("div", { className: "pp-main" }, [
          h("div", { className: "pp-toolbar" }, [this.total, this.clear, this.bibButton]),
          this.scroller, this.more, this.empty,
        ]),
      ]));
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
      const s = this.state.sort;
      this.state.sort = { field, desc: !!s && s.field === field && !s.desc };
      this.changed();
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
    // One pass: a record that fails exactly one facet still counts towards that facet's
    // values (selecting one of them would admit it); one that fails none counts everywhere.
    compute() {
      const F = this.facets, recs = this.records, s = this.state;
      const words = s.q.toLowerCase().split(/\s+/).filter(Boolean);
      const bounded = s.lo !== null || s.hi !== null;
      const match = new Uint8Array(recs.length);
      for (const f of F) f.count.fill(0);
      const bump = (f, vs) => { for (let k = 0; k < vs.length; k++) f.count[vs[k]]++; };
      outer: for (let i = 0; i < recs.length; i++) {
        const r = recs[i];
        if (bounded && (r.rv === null || (s.lo !== null && r.rv < s.lo) || (s.hi !== null && r.rv > s.hi))) continue;
        for (let w = 0; w < words.length; w++) if (r.text.indexOf(words[w]) < 0) continue outer;
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
          match[i] = 1;
          for (let j = 0; j < F.length; j++) bump(F[j], r.fv[j]);
        }
      }
      return match;
    }

    // Record indices sorted by a column; cached because the data never changes.
    order(sort) {
      const key = sort.field + (sort.desc ? "-desc" : "-asc");
      if (this.orders.has(key)) return this.orders.get(key);
      const col = this.columns.find((c) => c.field === sort.field);
      const isNum = col && col.kind === "number";
      const vals = this.records.map((r) => {
        const v = r.cells[sort.field];
        return isNum ? toNum(v) : cellText(v) || null;
      });
      const idx = this.records.map((r, i) => i);
      idx.sort((a, b) => {
        const x = vals[a], y = vals[b];
        if (x === null || y === null) return x === y ? a - b : x === null ? 1 : -1; // nulls last, both ways
        const c = isNum ? x - y : collator.compare(x, y);
        return (sort.desc ? -c : c) || a - b; // ties keep the records' order
      });
      this.orders.set(key, idx);
      return idx;
    }

    row(r) {
      if (r.row) return r.row;
      const tr = h("tr", { "data-key": r.key });
      for (const c of this.columns) {
        const text = cellText(r.cells[c.field]);
        const td = h("td", { className: c.kind === "number" ? "pp-num" : null });
        const href = c.link ? safeHref(this.root, r.href) : null;
        if (href) td.appendChild(h("a", { href, text, rel: /^https?:/i.test(href) ? "noopener noreferrer" : null }));
        else td.textContent = text;
        tr.appendChild(td);
      }
      return (r.row = tr);
    }

    render() {
      const match = this.compute(), recs = this.records, s = this.state;
      for (const f of this.facets) {
        f.labels.forEach((label, i) => {
          f.countNodes[i].textContent = String(f.count[i]);
          label.setAttribute("data-count", String(f.count[i]));
          label.classList.toggle("pp-zero", f.count[i] === 0); // greyed, not hidden: gaps show
        });
      }
      const seq = s.sort ? this.order(s.sort) : null;
      const current = [];
      for (let k = 0; k < recs.length; k++) {
        const i = seq ? seq[k] : k;
        if (match[i]) current.push(i);
      }
      this.current = current;
      // Laying out thousands of table rows costs the browser far more than filtering does,
      // so a long result shows its first ROW_LIMIT rows plus a "Show all" button.
      const shown = this.showAll ? current.length : Math.min(current.length, ROW_LIMIT);
      const frag = document.createDocumentFragment();
      for (let k = 0; k < shown; k++) frag.appendChild(this.row(recs[current[k]]));
      fill(this.tbody, frag);
      this.more.hidden = shown === current.length;
      this.more.textContent = "Show all " + current.length + " " + this.noun[1] + " (" + shown + " listed)";

      this.columns.forEach((c, i) => {
        if (s.sort && s.sort.field === c.field) this.heads[i].setAttribute("aria-sort", s.sort.desc ? "descending" : "ascending");
        else this.heads[i].removeAttribute("aria-sort");
      });
      const total = recs.length;
      this.total.textContent = "Showing " + current.length + " of " + total + " " + this.noun[total === 1 ? 0 : 1];
      this.total.setAttribute("data-shown", String(current.length));
      this.total.setAttribute("data-total", String(total));
      this.empty.hidden = current.length > 0;
      this.table.classList.toggle("pp-hidden", current.length === 0);
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
