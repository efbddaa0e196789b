// The metadata panel: every field of the resource as listed, what `resources/metadata`
// says where the server offers it (rsrc's SEP-2093 extension, declared), and the caching hints of the last answer. Fields are
// shown generically (a nested list of names and values), so nothing a server adds is
// hidden; icons are shown only from data: URLs, as images.

import { h, clear, errorBox, formatSize } from './dom.js';

const ORDER = ['uri', 'name', 'title', 'description', 'mimeType', 'size', 'resourceType', 'capabilities', 'annotations', 'icons', '_meta'];

function value(key, v) {
  if (key === 'size' && typeof v === 'number') return `${v} bytes (${formatSize(v)})`;
  if (key === 'icons' && Array.isArray(v)) {
    return h('ul', { class: 'icons' }, v.map((icon) => h('li', {},
      typeof icon.src === 'string' && /^data:image\//i.test(icon.src)
        ? h('img', { src: icon.src, alt: '', width: '16', height: '16' }) : null,
      h('code', {}, String(icon.src).slice(0, 120)),
      icon.mimeType ? ` ${icon.mimeType}` : '',
      icon.sizes ? ` ${[].concat(icon.sizes).join(' ')}` : '')));
  }
  if (v === null || typeof v !== 'object') return String(v);
  if (Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object')) return v.join(', ');
  return fields(v);
}

/** A definition list of an object's fields, known ones first. */
export function fields(obj) {
  const keys = Object.keys(obj).sort((a, b) => {
    const ia = ORDER.indexOf(a);
    const ib = ORDER.indexOf(b);
    return (ia < 0 ? ORDER.length : ia) - (ib < 0 ? ORDER.length : ib) || a.localeCompare(b);
  });
  return h('dl', { class: 'fields' }, keys.map((k) => [h('dt', {}, k), h('dd', {}, value(k, obj[k]))]));
}

export class Metadata {
  constructor(region) {
    this.region = region;
    this.empty();
  }

  empty() {
    clear(this.region).append(h('h2', {}, 'Metadata'), h('p', { class: 'note' }, 'Nothing chosen.'));
  }

  /** Shows a resource's metadata; `metadata` is a promise of the /api/metadata answer. */
  async show({ listing, read, readError, metadata }) {
    const parts = [h('h2', {}, 'Metadata')];
    const fromRead = read && read.contents && read.contents[0] ? read.contents[0].resource : null;
    parts.push(h('h3', {}, listing ? 'As listed' : 'As read'));
    const shown = listing || fromRead;
    parts.push(shown ? fields(shown) : h('p', { class: 'note' }, 'Not listed.'));
    const answer = h('div', { class: 'part' }, h('h3', {}, 'Last answer'));
    if (read) {
      answer.append(fields({
        ttlMs: read.ttlMs ?? '(none)',
        cacheScope: read.cacheScope ?? '(none)',
        ...(read.resultType ? { resultType: read.resultType } : {}),
        entries: read.contents.length,
        ...(read._meta ? { _meta: read._meta } : {}),
      }));
    } else if (readError) {
      answer.append(errorBox(readError, 'resources/read'));
    }
    parts.push(answer);
    const meta = h('div', { class: 'part' }, h('h3', {}, 'resources/metadata'), h('p', { class: 'note' }, 'Asking…'));
    parts.push(meta);
    clear(this.region).append(...parts);
    try {
      const m = await metadata;
      meta.lastChild.remove();
      if (m.unsupported) {
        meta.append(h('p', { class: 'note' },
          'Not offered by this server: it does not declare rsrc\'s resource metadata extension (SEP-2093, not part of the MCP standard).'));
      } else meta.append(fields(m.resource));
    } catch (e) {
      meta.lastChild.remove();
      meta.append(errorBox(e, 'resources/metadata'));
    }
  }

  /** Shows a template's fields. */
  template(t) {
    clear(this.region).append(h('h2', {}, 'Metadata'), h('h3', {}, 'Template'), fields(t));
  }
}
