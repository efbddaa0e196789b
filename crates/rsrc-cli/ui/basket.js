// The context basket: resources gathered to hand to a model, one by one or suggested by
// their annotations (audience includes the assistant, priority at or above a threshold).
// It shows the summed size and an estimated token count from the listed sizes before
// anything is read, and exports as one bundle (JSON with embedded resources, or Markdown),
// read by the backend at export.

import { h, clear, append, formatSize, formatCount, errorBox, displayName } from './dom.js';
import * as api from './api.js';

/** Bytes per token, for the estimate. */
const BYTES_PER_TOKEN = 4;

export class Basket {
  constructor(region, handlers) {
    this.region = region;
    this.handlers = handlers;
    this.items = new Map();
    this.render();
  }

  add(server, resource) {
    const key = `${server} ${resource.uri}`;
    if (!this.items.has(key)) this.items.set(key, { server, resource });
    this.render();
  }

  remove(key) {
    this.items.delete(key);
    this.render();
  }

  suggest(threshold) {
    let added = 0;
    for (const { server, resource } of this.handlers.known()) {
      const a = resource.annotations || {};
      const forAssistant = Array.isArray(a.audience) && a.audience.includes('assistant');
      if (forAssistant && typeof a.priority === 'number' && a.priority >= threshold) {
        const key = `${server} ${resource.uri}`;
        if (!this.items.has(key)) {
          this.items.set(key, { server, resource });
          added += 1;
        }
      }
    }
    this.render(`${added} suggested by their annotations.`);
  }

  async export(format) {
    const items = [...this.items.values()].map(({ server, resource }) => ({ server, uri: resource.uri }));
    try {
      const blob = await api.postForBlob('bundle', { format, items });
      const url = URL.createObjectURL(blob);
      const a = h('a', { href: url, download: format === 'json' ? 'context.json' : 'context.md', hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      this.render(`Exported ${items.length} as ${format === 'json' ? 'JSON' : 'Markdown'}.`);
    } catch (e) {
      this.render(null, e);
    }
  }

  render(message, error) {
    let bytes = 0;
    let unknown = 0;
    for (const { resource } of this.items.values()) {
      if (typeof resource.size === 'number') bytes += resource.size;
      else unknown += 1;
    }
    const tokens = Math.ceil(bytes / BYTES_PER_TOKEN);
    const threshold = h('input', { type: 'number', min: '0', max: '1', step: '0.1', value: '0.5', id: 'basket-threshold', class: 'threshold' });
    const list = h('ul', { class: 'basket-items' }, [...this.items].map(([key, { server, resource }]) => h('li', {},
      h('span', { class: 'label', title: resource.uri }, displayName(resource)),
      h('span', { class: 'hint' }, typeof resource.size === 'number' ? formatSize(resource.size) : 'size unknown'),
      h('span', { class: 'hint' }, this.handlers.serverLabel(server)),
      h('button', { type: 'button', 'aria-label': `Remove ${displayName(resource)}`, onclick: () => this.remove(key) }, '×'))));
    append(clear(this.region), [
      h('h2', {}, 'Context basket'),
      h('p', { class: 'summary', role: 'status' },
        `${this.items.size} ${this.items.size === 1 ? 'resource' : 'resources'} · ${formatSize(bytes)} · about ${formatCount(tokens)} tokens`,
        unknown ? ` (${unknown} of unknown size)` : ''),
      this.items.size ? list : h('p', { class: 'note' }, 'Empty. Add the open resource, or let annotations suggest.'),
      h('div', { class: 'suggest' },
        h('label', { for: 'basket-threshold' }, 'Priority at least'), threshold,
        h('button', { type: 'button', onclick: () => this.suggest(Number(threshold.value) || 0) }, 'Suggest for the assistant')),
      h('div', { class: 'actions' },
        h('button', { type: 'button', disabled: !this.items.size, onclick: () => this.export('json') }, 'Export JSON'),
        h('button', { type: 'button', disabled: !this.items.size, onclick: () => this.export('markdown') }, 'Export Markdown'),
        h('button', { type: 'button', disabled: !this.items.size, onclick: () => { this.items.clear(); this.render(); } }, 'Empty')),
      message ? h('p', { class: 'note', role: 'status' }, message) : null,
      error ? errorBox(error, 'Export failed') : null]);
  }
}
