// JSON as a collapsible tree: objects and arrays are <details> whose children are built
// only when opened, so a large document costs only what is looked at. Every key and value
// is set as text.

import { h } from './dom.js';

/** Levels open at first. */
const OPEN_LEVELS = 2;
/** Members shown per object or array (then a note). */
const MEMBERS_SHOWN = 1000;

function scalar(v) {
  if (v === null) return h('span', { class: 'j-null' }, 'null');
  switch (typeof v) {
    case 'string': return h('span', { class: 'j-string' }, JSON.stringify(v));
    case 'number': return h('span', { class: 'j-number' }, String(v));
    case 'boolean': return h('span', { class: 'j-bool' }, String(v));
    default: return h('span', {}, String(v));
  }
}

function node(key, value, level) {
  const label = key === null ? null : h('span', { class: 'j-key' }, `${JSON.stringify(String(key))}: `);
  if (value === null || typeof value !== 'object') {
    return h('div', { class: 'j-leaf' }, label, scalar(value));
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const brackets = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  const summary = h('summary', {}, label, `${brackets[0]} ${entries.length} ${Array.isArray(value) ? 'items' : 'members'} ${brackets[1]}`);
  const details = h('details', { class: 'j-node' }, summary);
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    const list = h('div', { class: 'j-children' });
    for (const [k, v] of entries.slice(0, MEMBERS_SHOWN)) list.append(node(Array.isArray(value) ? null : k, v, level + 1));
    if (entries.length > MEMBERS_SHOWN) list.append(h('div', { class: 'note' }, `… and ${entries.length - MEMBERS_SHOWN} more`));
    details.append(list);
  };
  details.addEventListener('toggle', () => {
    if (details.open) build();
  });
  if (level < OPEN_LEVELS) {
    build();
    details.open = true;
  }
  return details;
}

/** The tree of a parsed JSON value. */
export function jsonTree(value) {
  return h('div', { class: 'json', role: 'group', 'aria-label': 'JSON' }, node(null, value, 0));
}
