// DOM helpers. Every string that reaches the page goes through `h` or `text`, which
// create text nodes only; the one HTML sink is `setSanitisedHtml`, for Markdown the
// backend rendered and sanitised, through the only Trusted Types policy the page's CSP
// allows.

const policy = globalThis.trustedTypes
  ? globalThis.trustedTypes.createPolicy('rsrc-markdown', { createHTML: (s) => s })
  : { createHTML: (s) => s };

/** An element: `attrs` are attributes (`class`, `aria-*`, …), `on*` functions listeners,
 *  and `children` strings (as text), nodes, or arrays of them; null and false are skipped. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), v);
    } else if (k === 'hidden' || k === 'disabled') {
      el[k] = Boolean(v);
    } else if (k === 'value') {
      el.value = v;
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

/** Appends strings (as text) and nodes. */
export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'string' || typeof c === 'number' ? String(c) : c);
  }
  return el;
}

/** Removes every child. */
export function clear(el) {
  el.replaceChildren();
  return el;
}

/** Sets HTML that the backend rendered from Markdown and sanitised. */
export function setSanitisedHtml(el, html) {
  el.innerHTML = policy.createHTML(html);
}

/** A size in bytes, for people. */
export function formatSize(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return '';
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** A number with separators. */
export function formatCount(n) {
  return Number(n).toLocaleString('en');
}

/** A failure shown in place: its code and message, as the server said them. */
export function errorBox(err, what) {
  const code = err && err.code !== undefined ? `error ${err.code}: ` : '';
  const kind = err && err.kind && err.kind !== 'rpc' ? ` (${err.kind})` : '';
  return h('div', { class: 'error', role: 'alert' },
    what ? h('strong', {}, `${what}: `) : null,
    `${code}${err && err.message ? err.message : String(err)}${kind}`,
    err && err.data !== undefined ? h('pre', { class: 'error-data' }, JSON.stringify(err.data, null, 2)) : null);
}

/** Waits for the next frame, so long work gives the page a chance to paint. */
export function nextFrame() {
  return new Promise((resolve) => requestAnimationFrame(() => resolve()));
}

/** The name people see for a resource: its title where it has one. */
export function displayName(r) {
  return (r && (r.title || r.name)) || (r && r.uri) || '';
}
