// The preview of one resource, by the view the backend chose for each entry: text
// (streamed into the page a piece per frame, with its size, however large), Markdown
// (rendered and sanitised by the backend), JSON (a collapsible tree), CSV (a table),
// images (an <img> from a blob: URL), and anything else as its size, the hex of its first
// bytes and a download. Several entries for one URI are format alternatives, with a
// switcher.

import { h, clear, append, formatSize, errorBox, nextFrame, setSanitisedHtml, displayName } from './dom.js';
import * as api from './api.js';
import { jsonTree } from './jsonview.js';

/** Text set at once up to this size; beyond it, a piece per frame. */
const TEXT_AT_ONCE = 64 * 1024;
/** Text appended per frame while a large one streams in. */
const TEXT_PIECE = 256 * 1024;
/** Largest JSON shown as a tree. */
const JSON_TREE_MAX = 4 * 1024 * 1024;
/** Entries of a collection's read shown. */
const ENTRIES_SHOWN = 20;

export class Preview {
  constructor(region, handlers) {
    this.region = region;
    this.handlers = handlers;
    this.generation = 0;
    this.urls = [];
    this.current = null;
  }

  release() {
    for (const u of this.urls) URL.revokeObjectURL(u);
    this.urls = [];
  }

  /** Shows a resource: `listing` is what a listing said of it, if anything. */
  async show(server, uri, listing, { refreshed = false } = {}) {
    const gen = (this.generation += 1);
    const keepTab = refreshed && this.current && this.current.uri === uri ? this.current.tab : undefined;
    const scroll = refreshed ? this.region.scrollTop : 0;
    this.current = { server, uri, listing, tab: keepTab, resource: listing || { uri, name: uri } };
    const title = displayName(listing) || uri;
    const status = h('p', { class: 'preview-status', role: 'status' }, refreshed ? '' : 'Reading…');
    const head = h('header', { class: 'preview-head' },
      h('h2', {}, title),
      h('code', { class: 'uri' }, uri),
      h('div', { class: 'actions' },
        h('button', { type: 'button', onclick: () => this.handlers.onBasket(server, this.current.resource) }, 'Add to basket'),
        h('button', { type: 'button', onclick: () => this.refresh() }, 'Reload')),
      status);
    let read;
    try {
      read = await api.get('read', { server, uri });
    } catch (e) {
      if (gen !== this.generation) return;
      this.release();
      clear(this.region).append(head, errorBox(e, 'Reading failed'));
      status.textContent = '';
      this.handlers.onRead(server, uri, listing, null, e);
      return;
    }
    if (gen !== this.generation) return;
    this.release();
    const body = h('div', { class: 'preview-body' });
    clear(this.region).append(head, body);
    if (!listing && read.contents && read.contents[0]) this.current.resource = read.contents[0].resource;
    this.handlers.onRead(server, uri, listing, read, null);
    const entries = read.contents || [];
    status.textContent = refreshed ? `Updated at ${new Date().toLocaleTimeString()}` : '';
    if (entries.length === 0) {
      body.append(h('p', { class: 'note' }, 'The server returned no contents.'));
    } else if (entries.every((e) => e.resource.uri === uri)) {
      await this.alternatives(body, entries, keepTab !== undefined && keepTab < entries.length ? keepTab : read.shown || 0, gen);
    } else {
      body.append(h('p', { class: 'note' }, `This read returned ${entries.length} entries${entries.length > ENTRIES_SHOWN ? `; the first ${ENTRIES_SHOWN} are shown` : ''}.`));
      for (const entry of entries.slice(0, ENTRIES_SHOWN)) {
        const section = h('section', { class: 'entry', 'aria-label': entry.resource.uri },
          h('h3', {}, entry.resource.name || entry.resource.uri), h('code', { class: 'uri' }, entry.resource.uri));
        body.append(section);
        await this.entry(section, entry, gen);
        if (gen !== this.generation) return;
      }
    }
    if (refreshed) this.region.scrollTop = scroll;
  }

  async refresh() {
    if (!this.current) return;
    const { server, uri, listing } = this.current;
    await this.show(server, uri, listing, { refreshed: true });
  }

  /** Format alternatives: a tab per entry when there are several. */
  async alternatives(body, entries, shown, gen) {
    const panel = h('div', { class: 'entry', role: entries.length > 1 ? 'tabpanel' : null, id: 'preview-panel' });
    if (entries.length > 1) {
      const tabs = entries.map((e, i) => h('button', {
        type: 'button',
        role: 'tab',
        id: `format-${i}`,
        'aria-selected': String(i === shown),
        'aria-controls': 'preview-panel',
        tabindex: i === shown ? '0' : '-1',
        onclick: () => select(i),
      }, `${e.resource.mimeType || e.kind} · ${formatSize(e.size)}`));
      const list = h('div', { class: 'formats', role: 'tablist', 'aria-label': 'Formats' }, tabs);
      list.addEventListener('keydown', (ev) => {
        const at = tabs.indexOf(document.activeElement);
        if (at < 0) return;
        if (ev.key === 'ArrowRight' || ev.key === 'ArrowLeft') {
          const next = (at + (ev.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length;
          tabs[next].focus();
          select(next);
          ev.preventDefault();
        }
      });
      const select = async (i) => {
        tabs.forEach((t, j) => {
          t.setAttribute('aria-selected', String(i === j));
          t.tabIndex = i === j ? 0 : -1;
        });
        panel.setAttribute('aria-labelledby', `format-${i}`);
        this.current.tab = i;
        clear(panel);
        await this.entry(panel, entries[i], gen);
      };
      body.append(list, panel);
      await select(shown);
    } else {
      body.append(panel);
      await this.entry(panel, entries[0], gen);
    }
  }

  /** One entry, by its view. */
  async entry(el, entry, gen) {
    const facts = h('p', { class: 'facts' },
      `${entry.resource.mimeType || 'no MIME type'} · ${entry.kind} · ${formatSize(entry.size)}`);
    el.append(facts);
    try {
      switch (entry.view) {
        case 'markdown':
          if (entry.html !== undefined) this.markdown(el, entry);
          else await this.text(el, entry, gen);
          break;
        case 'json':
          await this.json(el, entry, gen);
          break;
        case 'csv':
          if (entry.table) this.table(el, entry.table);
          else await this.text(el, entry, gen);
          break;
        case 'image':
          await this.image(el, entry);
          break;
        case 'pdf':
        case 'binary':
          this.binary(el, entry);
          break;
        default:
          await this.text(el, entry, gen);
      }
    } catch (e) {
      el.append(errorBox(e, 'Showing this content failed'));
    }
  }

  async text(el, entry, gen) {
    const progress = h('p', { class: 'progress', role: 'status' });
    const pre = h('pre', { class: 'text', tabindex: '0' });
    el.append(progress, pre);
    // Text goes in as blocks ending at line ends; off-screen blocks are neither laid out
    // nor painted (`content-visibility`), so a large text costs what is on screen.
    let carry = '';
    const put = (piece, last) => {
      const text = carry + piece;
      const cut = last ? text.length : text.lastIndexOf('\n') + 1;
      carry = text.slice(cut);
      if (cut > 0) pre.append(h('div', { class: 'chunk' }, text.slice(0, cut)));
    };
    if (entry.text !== undefined) {
      for (let i = 0; i < entry.text.length; i += TEXT_AT_ONCE) {
        put(entry.text.slice(i, i + TEXT_AT_ONCE), i + TEXT_AT_ONCE >= entry.text.length);
        if (i + TEXT_AT_ONCE < entry.text.length) await nextFrame();
        if (gen !== this.generation) return;
      }
      return;
    }
    // Too large to come inside the JSON: streamed, a piece per frame, with the count.
    const resp = await fetch(entry.href);
    if (!resp.ok) throw new Error(`HTTP ${resp.status}: ${(await resp.text()).slice(0, 200)}`);
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    let got = 0;
    let pending = '';
    progress.textContent = `Loading… 0 B of ${formatSize(entry.size)}`;
    for (;;) {
      const { done, value } = await reader.read();
      if (gen !== this.generation) {
        reader.cancel();
        return;
      }
      if (done) break;
      got += value.length;
      pending += decoder.decode(value, { stream: true });
      if (pending.length >= TEXT_PIECE) {
        put(pending, false);
        pending = '';
        progress.textContent = `Loading… ${formatSize(got)} of ${formatSize(entry.size)}`;
        await nextFrame();
      }
    }
    put(pending + decoder.decode(), true);
    progress.textContent = `${formatSize(entry.size)}, all shown`;
  }

  markdown(el, entry) {
    const div = h('div', { class: 'markdown' });
    setSanitisedHtml(div, entry.html);
    const base = entry.resource.uri;
    const server = this.current.server;
    div.addEventListener('click', (e) => {
      const a = e.target.closest('a');
      if (!a || !div.contains(a)) return;
      e.preventDefault();
      const href = a.getAttribute('href');
      if (!href || href.startsWith('#')) return;
      let absolute = null;
      try {
        absolute = new URL(href);
      } catch {
        absolute = null;
      }
      if (absolute) {
        if (absolute.protocol === 'http:' || absolute.protocol === 'https:') this.handlers.onLink(absolute.href);
        return;
      }
      // A relative link: the resource it names, on the same server.
      try {
        this.handlers.onOpenUri(server, new URL(href, base).href);
      } catch {
        /* not resolvable against this URI: nothing to open */
      }
    });
    el.append(div);
  }

  async json(el, entry, gen) {
    let text = entry.text;
    if (text === undefined && entry.size <= JSON_TREE_MAX) {
      const resp = await fetch(entry.href);
      text = await resp.text();
      if (gen !== this.generation) return;
    }
    if (text === undefined) {
      el.append(h('p', { class: 'note' }, 'Too large for a tree: shown as text.'));
      await this.text(el, entry, gen);
      return;
    }
    let value;
    try {
      value = JSON.parse(text);
    } catch (e) {
      el.append(h('p', { class: 'note' }, `Not valid JSON (${e.message}): shown as text.`));
      await this.text(el, { ...entry, text }, gen);
      return;
    }
    el.append(jsonTree(value));
  }

  table(el, table) {
    const [head, ...rows] = table.rows;
    const t = h('table', { class: 'csv' },
      head ? h('thead', {}, h('tr', {}, head.map((c) => h('th', { scope: 'col' }, c)))) : null,
      h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, c))))));
    el.append(h('div', { class: 'table-wrap', tabindex: '0' }, t));
    if (table.truncated) el.append(h('p', { class: 'note' }, `The first ${table.rows.length} rows.`));
    if (table.error) el.append(h('p', { class: 'note' }, `Stopped at a row that could not be read: ${table.error}`));
  }

  async image(el, entry) {
    const resp = await fetch(entry.href);
    if (!resp.ok) throw new Error(`HTTP ${resp.status}`);
    const blob = new Blob([await resp.arrayBuffer()], { type: entry.resource.mimeType });
    const url = URL.createObjectURL(blob);
    this.urls.push(url);
    el.append(h('img', { class: 'image', src: url, alt: entry.resource.title || entry.resource.name || 'image' }));
  }

  binary(el, entry) {
    if (entry.view === 'pdf') {
      el.append(h('p', { class: 'note' }, 'A PDF: where the server offers its text as a format alternative, it is shown instead.'));
    }
    append(el, [
      h('pre', { class: 'hex', tabindex: '0', 'aria-label': 'First bytes in hexadecimal' }, entry.hex || ''),
      h('p', {}, h('a', { href: `${entry.href}?download=1`, download: '' }, `Download (${formatSize(entry.size)})`)),
    ]);
  }

  /** Shows something else in the preview region (a template's form, a message). */
  replace(...children) {
    this.generation += 1;
    this.current = null;
    this.release();
    append(clear(this.region), children);
  }
}
