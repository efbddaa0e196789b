// The search box: names, titles, URIs and descriptions across every connected server. A
// server that declares SEP-2564 filtering is asked for the names and URIs that match;
// the others are listed and matched by the backend. Results can be narrowed by MIME type
// and resource type.

import { h, clear, errorBox, displayName, formatSize } from './dom.js';
import * as api from './api.js';
import { isCollection } from './tree.js';

const DEBOUNCE_MS = 250;

export class Search {
  constructor({ input, results, tree, note, facets, mime, kind }, handlers) {
    Object.assign(this, { input, results, tree, note, facets, mime, kind, handlers });
    this.asked = 0;
    this.answer = null;
    let timer = 0;
    input.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.run(), DEBOUNCE_MS);
    });
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        input.value = '';
        this.run();
      } else if (e.key === 'ArrowDown' && !this.results.hidden) {
        const first = this.results.querySelector('button');
        if (first) first.focus();
        e.preventDefault();
      }
    });
    mime.addEventListener('change', () => this.render());
    kind.addEventListener('change', () => this.render());
  }

  /** Every resource the results hold (for the basket's suggestions). */
  *resources() {
    for (const s of (this.answer && this.answer.servers) || []) {
      for (const r of s.resources || []) yield { server: s.server, resource: r };
    }
  }

  async run() {
    const q = this.input.value.trim();
    const ask = (this.asked += 1);
    if (!q) {
      this.answer = null;
      this.results.hidden = true;
      this.facets.hidden = true;
      this.tree.hidden = false;
      this.note.textContent = '';
      return;
    }
    this.note.textContent = 'Searching…';
    try {
      const answer = await api.get('search', { q });
      if (ask !== this.asked) return;
      this.answer = answer;
      this.facetOptions();
      this.render();
    } catch (e) {
      if (ask !== this.asked) return;
      this.answer = null;
      this.note.textContent = '';
      clear(this.results).append(h('li', {}, errorBox(e, 'Search failed')));
      this.results.hidden = false;
      this.tree.hidden = true;
    }
  }

  facetOptions() {
    const mimes = new Set();
    for (const { resource } of this.resources()) mimes.add(resource.mimeType || '(none)');
    const fill = (select, label, values) => {
      const was = select.value;
      select.replaceChildren(h('option', { value: '' }, `Any ${label}`), ...[...values].sort().map((v) => h('option', { value: v }, v)));
      select.value = [...values].includes(was) ? was : '';
    };
    fill(this.mime, 'MIME type', mimes);
    fill(this.kind, 'kind', new Set(['document', 'collection', 'template']));
    this.facets.hidden = false;
  }

  keep(kind, mime) {
    return (!this.kind.value || this.kind.value === kind) && (!this.mime.value || this.mime.value === (mime || '(none)'));
  }

  render() {
    if (!this.answer) return;
    clear(this.results);
    let count = 0;
    const notes = [];
    for (const s of this.answer.servers) {
      const server = this.handlers.serverLabel(s.server);
      if (s.error) {
        this.results.append(h('li', { class: 'result-server' }, h('strong', {}, server), errorBox(s.error)));
        continue;
      }
      const items = [];
      for (const r of s.resources) {
        const kind = isCollection(r) ? 'collection' : 'document';
        if (!this.keep(kind, r.mimeType)) continue;
        items.push(h('li', {}, h('button', {
          type: 'button',
          class: 'result',
          title: r.uri,
          onclick: () => this.handlers.onOpen(s.server, r),
        }, h('span', { class: 'label' }, displayName(r)), h('span', { class: 'uri' }, r.uri),
        r.size !== undefined ? h('span', { class: 'hint' }, formatSize(r.size)) : null)));
      }
      for (const t of s.templates) {
        if (!this.keep('template', t.template.mimeType)) continue;
        items.push(h('li', {}, h('button', {
          type: 'button',
          class: 'result',
          title: t.template.uriTemplate,
          onclick: () => this.handlers.onTemplate(s.server, t.template, t.variables, t.error),
        }, h('span', { class: 'label' }, `${displayName(t.template)} (template)`), h('span', { class: 'uri' }, t.template.uriTemplate))));
      }
      count += items.length;
      notes.push(`${server}: ${s.byServer ? 'filtered by the server' : 'matched here'}${s.truncated ? ', more exist' : ''}`);
      if (items.length) this.results.append(h('li', { class: 'result-server' }, h('strong', {}, server), h('ul', {}, items)));
    }
    if (!count) this.results.append(h('li', { class: 'note' }, 'No match.'));
    this.note.textContent = `${count} ${count === 1 ? 'match' : 'matches'} (${notes.join('; ')})`;
    this.results.hidden = false;
    this.tree.hidden = true;
  }
}
