// The page: wires the tree, the search, the preview, the metadata, the basket and the
// template forms together, follows the event stream (servers' status, changes), keeps
// the subscriptions on what is open, and shows the connection status at all times.

import { h, clear, errorBox } from './dom.js';
import * as api from './api.js';
import { Tree } from './tree.js';
import { Preview } from './preview.js';
import { Metadata } from './meta.js';
import { Search } from './search.js';
import { templateForm } from './template.js';
import { Basket } from './basket.js';

const $ = (id) => document.getElementById(id);
const statuses = new Map();
/** The resource open in the preview, and what is watched for it. */
let open = null;
let pageConnected = true;

function serverLabel(id) {
  const s = statuses.get(id);
  return s ? s.label : `server ${id}`;
}

const metadata = new Metadata($('metadata'));
const basket = new Basket($('basket'), {
  known: () => [...tree.resources(), ...search.resources()],
  serverLabel,
});
const preview = new Preview($('preview'), {
  onBasket: (server, resource) => basket.add(server, resource),
  onRead: (server, uri, listing, read, readError) => metadata.show({
    listing, read, readError, metadata: api.get('metadata', { server, uri }),
  }),
  onLink: confirmLink,
  onOpenUri: (server, uri) => openResource(server, null, null, uri),
});
const tree = new Tree($('tree'), {
  onOpen: (server, resource, node) => openResource(server, resource, node),
  onTemplate: openTemplate,
  onError: (e) => preview.replace(errorBox(e)),
});
const search = new Search({
  input: $('search'),
  results: $('results'),
  tree: $('tree'),
  note: $('search-note'),
  facets: $('facets'),
  mime: $('facet-mime'),
  kind: $('facet-kind'),
}, {
  onOpen: (server, resource) => openResource(server, resource, null),
  onTemplate: openTemplate,
  serverLabel,
});

function watch() {
  if (!open) return;
  api.post(`servers/${open.server}/watch`, { uris: open.watched }).catch(() => {});
}

/** Opens a resource in the preview and watches it (and its collection). */
function openResource(server, resource, node, uri = resource.uri) {
  const watched = [uri];
  const parent = node ? tree.parentCollection(node) : null;
  if (parent && parent !== uri) watched.push(parent);
  if (open && open.server !== server) {
    api.post(`servers/${open.server}/watch`, { uris: [] }).catch(() => {});
  }
  open = { server, uri, watched };
  watch();
  preview.show(server, uri, resource);
}

function openTemplate(server, template, variables, error) {
  metadata.template(template);
  preview.replace(templateForm(server, template, variables || [], error,
    (uri) => openResource(server, null, null, uri)));
  const first = $('preview').querySelector('input');
  if (first) first.focus();
}

/** Opens an http(s) link in a new tab, after the user confirms it. */
function confirmLink(url) {
  const openIt = h('button', { type: 'button', class: 'primary' }, 'Open in a new tab');
  const cancel = h('button', { type: 'button' }, 'Cancel');
  const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': 'confirm-title' },
    h('h2', { id: 'confirm-title' }, 'Open this link?'),
    h('p', {}, 'The link comes from the server. It will open outside this page:'),
    h('p', {}, h('code', { class: 'link' }, url)),
    h('div', { class: 'actions' }, cancel, openIt));
  openIt.addEventListener('click', () => {
    window.open(url, '_blank', 'noopener,noreferrer');
    dialog.close();
  });
  cancel.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  cancel.focus();
}

function renderServers() {
  const list = $('servers');
  clear(list);
  for (const s of [...statuses.values()].sort((a, b) => a.id - b.id)) {
    const name = s.info ? `${s.info.name}${s.info.version ? ` ${s.info.version}` : ''}` : null;
    list.append(h('li', { class: `server state-${s.state}` },
      h('span', { class: 'dot', 'aria-hidden': 'true' }),
      h('span', { class: 'label' }, s.label),
      h('span', { class: 'state' }, s.state === 'connected'
        ? `connected${s.version ? ` · ${s.version}` : ''}${name ? ` · ${name}` : ''}${s.live ? ' · live' : ''}${s.filtering ? ' · filtering' : ''}${s.resourceMetadata ? ' · collections' : ''}`
        : s.state === 'connecting' ? 'connecting…' : `disconnected: ${s.error || ''}`),
      s.state === 'disconnected'
        ? h('button', { type: 'button', onclick: () => api.post(`servers/${s.id}/retry`, {}).catch(() => {}) }, `Retry ${s.label}`)
        : null));
  }
}

function renderStatus() {
  const all = [...statuses.values()];
  const down = all.filter((s) => s.state === 'disconnected').length;
  const connecting = all.filter((s) => s.state === 'connecting').length;
  let text;
  if (!pageConnected) text = 'Lost contact with rsrc ui: reconnecting…';
  else if (down) text = `${down} of ${all.length} ${all.length === 1 ? 'server' : 'servers'} disconnected`;
  else if (connecting) text = `Connecting to ${connecting} ${connecting === 1 ? 'server' : 'servers'}…`;
  else text = `${all.length} ${all.length === 1 ? 'server' : 'servers'} connected`;
  const el = $('status');
  el.textContent = text;
  el.dataset.state = !pageConnected || down ? 'bad' : connecting ? 'pending' : 'good';
}

function onStatus(status) {
  const was = statuses.get(status.id);
  statuses.set(status.id, status);
  tree.setServer(status);
  renderServers();
  renderStatus();
  // A server connected again watches what is open on it again.
  if (open && open.server === status.id && status.state === 'connected' && (!was || was.state !== 'connected')) {
    watch();
  }
}

function onEvent(event) {
  switch (event.type) {
    case 'status':
      onStatus(event.status);
      break;
    case 'updated': {
      if (open && open.server === event.server && open.uri === event.uri) preview.refresh();
      const node = tree.findOpen(event.server, event.uri);
      if (node) tree.refresh(node, true);
      break;
    }
    case 'list_changed': {
      const root = tree.servers.get(event.server);
      if (root && root.loaded) tree.refresh(root, true);
      if (search.input.value.trim()) search.run();
      break;
    }
    case 'resync':
      for (const root of tree.servers.values()) if (root.loaded) tree.refresh(root, true);
      if (open) preview.refresh();
      break;
    default:
      break;
  }
}

function connectEvents() {
  const events = new EventSource('/api/events');
  events.addEventListener('open', () => {
    pageConnected = true;
    renderStatus();
  });
  events.addEventListener('error', () => {
    pageConnected = false;
    renderStatus();
  });
  events.addEventListener('message', (m) => {
    let event;
    try {
      event = JSON.parse(m.data);
    } catch {
      return;
    }
    onEvent(event);
  });
}

document.addEventListener('keydown', (e) => {
  if (e.key === '/' && !['INPUT', 'TEXTAREA', 'SELECT'].includes(document.activeElement.tagName)) {
    e.preventDefault();
    $('search').focus();
  }
});

async function start() {
  try {
    const { servers } = await api.get('servers');
    for (const s of servers) onStatus(s);
  } catch (e) {
    preview.replace(errorBox(e, 'The page could not reach rsrc ui'));
  }
  connectEvents();
}

start();
