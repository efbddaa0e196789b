// The tree: one node per server, then its resources. Collections (SEP-2093, on servers
// that declare rsrc's extension for it) are listed with `resources/list` and their URI
// when they are opened, page after page with a count
// while they load; a server's default listing is grouped by URI path segments. Templates
// sit under a node of their own. It is an ARIA tree: arrow keys, Home/End, Enter, and
// type-ahead; only the children of open nodes are in the page.

import { h, clear, formatSize, formatCount, displayName, nextFrame } from './dom.js';
import * as api from './api.js';

/** Items listed for one node before the rest waits for "Load more". */
const CHILD_CAP = 5000;
/** Pages followed for one listing at most (a server repeating cursors stops sooner). */
const PAGE_CAP = 1000;
/** Tree items added per frame. */
const RENDER_BATCH = 400;

export function isCollection(r) {
  return Boolean(r && (r.resourceType === 'collection' || (r.capabilities && r.capabilities.list === true)));
}

/** A URI split for grouping: its origin (`scheme://authority` or `scheme:`), then the
 *  non-empty path segments. */
function uriKey(uri) {
  const i = uri.indexOf('://');
  let origin;
  let path;
  if (i >= 0) {
    const rest = uri.slice(i + 3);
    const slash = rest.indexOf('/');
    const end = slash < 0 ? rest.length : slash;
    origin = uri.slice(0, i + 3 + end);
    path = rest.slice(end);
  } else {
    const j = uri.indexOf(':');
    origin = j >= 0 ? uri.slice(0, j + 1) : '';
    path = j >= 0 ? uri.slice(j + 1) : uri;
  }
  return [origin, ...path.split(/[?#]/)[0].split('/').filter((s) => s)];
}

/** Lists every page of a listing (up to the cap), reporting the count as it grows. */
async function listAll(params, onCount, start) {
  const items = [];
  const seen = new Set();
  let cursor = start;
  for (let pages = 0; pages < PAGE_CAP; pages += 1) {
    const page = await api.get('list', { ...params, cursor });
    items.push(...(page.resources || []));
    onCount(items.length);
    cursor = page.nextCursor || undefined;
    if (!cursor || seen.has(cursor)) return { items, cursor: undefined };
    seen.add(cursor);
    if (items.length >= CHILD_CAP) return { items, cursor };
  }
  return { items, cursor };
}

let ids = 0;

class Node {
  constructor(tree, parent, props) {
    Object.assign(this, props);
    this.tree = tree;
    this.parent = parent;
    this.level = parent ? parent.level + 1 : 1;
    this.children = [];
    this.loaded = !['server', 'collection', 'templates'].includes(this.kind);
    this.rendered = false;
    this.expanded = false;
    this.id = `node-${(ids += 1)}`;
  }

  get key() {
    return `${this.kind}:${this.uri || this.label}`;
  }

  expandable() {
    return ['server', 'group', 'collection', 'templates'].includes(this.kind) || this.children.length > 0;
  }

  /** The name people and screen readers get: the title where there is one, with the name. */
  names() {
    const r = this.resource || this.template;
    if (r) return { label: displayName(r), aria: r.title ? `${r.title} (${r.name})` : r.name || r.uri };
    return { label: this.label, aria: this.label };
  }

  build() {
    const { label, aria } = this.names();
    this.twisty = h('span', { class: 'twisty', 'aria-hidden': 'true' });
    this.hint = h('span', { class: 'hint' });
    this.labelEl = h('span', { class: 'label' }, label);
    const icon = this.icon();
    this.row = h('div', { class: `row kind-${this.kind}` }, this.twisty, icon, this.labelEl, this.hint);
    this.group = h('ul', { role: 'group', hidden: true });
    this.li = h('li', {
      role: 'treeitem',
      id: this.id,
      'aria-level': this.level,
      'aria-selected': 'false',
      'aria-label': aria,
      tabindex: '-1',
      'data-label': label.toLowerCase(),
    }, this.row, this.group);
    this.li.node = this;
    this.refreshState();
    const r = this.resource;
    if (r && r.size !== undefined && this.kind !== 'collection') this.hint.textContent = formatSize(r.size);
    if (r && r.uri) this.row.title = r.uri;
    if (this.template) this.row.title = this.template.uriTemplate;
    return this.li;
  }

  icon() {
    const glyph = {
      server: '◉', group: '▤', collection: '▤', templates: '{ }', template: '{}', more: '…', info: 'ℹ',
    }[this.kind] || '·';
    return h('span', { class: 'glyph', 'aria-hidden': 'true' }, glyph);
  }

  refreshState() {
    if (!this.li) return;
    if (this.expandable()) {
      this.li.setAttribute('aria-expanded', String(this.expanded));
    } else {
      this.li.removeAttribute('aria-expanded');
    }
    this.twisty.textContent = this.expandable() ? (this.expanded ? '▾' : '▸') : '';
  }

  setBusy(busy, text) {
    if (!this.li) return;
    this.li.setAttribute('aria-busy', String(busy));
    if (text !== undefined) this.hint.textContent = text;
  }

  setChildren(children) {
    this.children = children;
    this.rendered = false;
    clear(this.group);
    this.refreshState();
  }

  async renderChildren() {
    if (this.rendered) return;
    this.rendered = true;
    clear(this.group);
    const children = this.children;
    for (let i = 0; i < children.length; i += RENDER_BATCH) {
      const batch = children.slice(i, i + RENDER_BATCH).map((c) => c.build());
      this.group.append(...batch);
      if (i + RENDER_BATCH < children.length) await nextFrame();
      if (this.children !== children) return;
    }
    const n = children.length;
    children.forEach((c, i) => {
      c.li.setAttribute('aria-setsize', String(n));
      c.li.setAttribute('aria-posinset', String(i + 1));
    });
  }

  *walk() {
    yield this;
    for (const c of this.children) yield* c.walk();
  }
}

export class Tree {
  constructor(root, handlers) {
    this.root = root;
    this.handlers = handlers;
    this.servers = new Map();
    this.noChildren = new Set();
    this.typed = '';
    this.typedAt = 0;
    root.addEventListener('keydown', (e) => this.onKey(e));
    root.addEventListener('click', (e) => this.onClick(e));
  }

  /** Adds or updates a server's node from its status. */
  setServer(status) {
    let node = this.servers.get(status.id);
    if (!node) {
      node = new Node(this, null, { kind: 'server', server: status.id, label: status.label });
      this.servers.set(status.id, node);
      this.root.append(node.build());
      if (this.servers.size === 1) node.li.tabIndex = 0;
    }
    const was = node.state;
    node.state = status.state;
    node.status = status;
    const state = { connected: 'connected', connecting: 'connecting…', disconnected: 'disconnected' }[status.state];
    node.li.setAttribute('aria-label', `${status.label}, ${state}`);
    node.row.dataset.state = status.state;
    if (!node.loaded || node.children.length === 0) node.hint.textContent = state;
    if (status.state === 'connected' && was !== 'connected') {
      // Connected (again): list it afresh, and open it.
      node.loaded = false;
      node.rendered = false;
      this.refresh(node, true);
    }
  }

  async load(node) {
    if (node.loading) return node.loading;
    node.loading = (async () => {
      try {
        if (node.kind === 'server') await this.loadServer(node);
        else if (node.kind === 'templates') await this.loadTemplates(node);
        else await this.loadChildren(node);
      } finally {
        node.loading = null;
        node.setBusy(false);
      }
    })();
    return node.loading;
  }

  async loadServer(node) {
    node.setBusy(true, 'loading…');
    let listed;
    try {
      listed = await listAll({ server: node.server }, (n) => node.setBusy(true, `loading… ${formatCount(n)}`));
    } catch (e) {
      node.setChildren([this.info(node, e)]);
      node.loaded = true;
      node.hint.textContent = '';
      return;
    }
    node.rootTruncated = Boolean(listed.cursor);
    const children = this.nest(node, listed.items);
    if (listed.cursor) {
      const scoped = Boolean(node.status && node.status.resourceMetadata);
      children.push(new Node(this, node, {
        kind: 'info',
        server: node.server,
        label: scoped
          ? `The first ${formatCount(listed.items.length)} resources; open a folder to list all of its own.`
          : `The first ${formatCount(listed.items.length)} resources; this server cannot list a folder's own (it does not declare rsrc's resource metadata extension).`,
      }));
    }
    children.push(new Node(this, node, { kind: 'templates', server: node.server, label: 'Templates' }));
    node.setChildren(children);
    node.loaded = true;
    node.hint.textContent = `${formatCount(listed.items.length)}${listed.cursor ? '+' : ''} resources`;
  }

  /** Arranges a listing by the path segments of its URIs (one shared origin is not a level). */
  nest(parent, resources) {
    const root = { children: new Map() };
    for (const r of resources) {
      let at = root;
      for (const segment of uriKey(r.uri)) {
        if (!at.children.has(segment)) at.children.set(segment, { children: new Map() });
        at = at.children.get(segment);
      }
      if (at.resource) {
        at.children.set(`${r.name}#${at.children.size}`, { resource: r, children: new Map() });
      } else {
        at.resource = r;
      }
    }
    let start = root;
    let prefix = '';
    if (root.children.size === 1) {
      const [[origin, only]] = root.children;
      if (!only.resource) {
        start = only;
        prefix = origin;
      }
    }
    const build = (trie, prefix, parentNode) => [...trie.children].map(([segment, t]) => {
      const uri = !prefix ? segment : prefix.endsWith(':') || prefix.endsWith('/') ? `${prefix}${segment}` : `${prefix}/${segment}`;
      const node = t.resource
        ? this.resourceNode(parentNode, t.resource)
        : new Node(this, parentNode, { kind: 'group', server: parent.server, label: segment, uri });
      node.children = build(t, (t.resource ? t.resource.uri : uri).replace(/\/+$/, ''), node);
      return node;
    });
    return build(start, prefix, parent);
  }

  resourceNode(parent, r) {
    return new Node(this, parent, {
      kind: isCollection(r) ? 'collection' : 'resource',
      server: parent.server,
      resource: r,
      uri: r.uri,
    });
  }

  info(parent, error, label) {
    const said = error ? `${error.code !== undefined ? `error ${error.code}: ` : ''}${error.message}` : '';
    const node = new Node(this, parent, { kind: 'info', server: parent.server, label: label || said });
    node.error = error;
    return node;
  }

  /** A collection's children (or a group's, probed when the default listing was cut short). */
  async loadChildren(node, more) {
    const server = this.servers.get(node.server);
    const probe = node.kind === 'group' && server.rootTruncated;
    // Children are asked for only where the server declares scoped listings (rsrc's
    // SEP-2093 extension); the rest of a server is its default listing, grouped.
    const scoped = Boolean(server.status && server.status.resourceMetadata);
    if ((node.kind !== 'collection' && !probe) || !scoped || this.noChildren.has(node.server)) {
      node.loaded = true;
      return;
    }
    const before = more ? node.children.filter((c) => c.kind !== 'more') : [];
    node.setBusy(true, 'loading…');
    let listed;
    try {
      listed = await listAll({ server: node.server, uri: node.uri },
        (n) => node.setBusy(true, `loading… ${formatCount(before.length + n)}`), more);
    } catch (e) {
      node.loaded = true;
      node.hint.textContent = '';
      if (e.code === -32601 || e.kind === 'unsupported') {
        this.noChildren.add(node.server);
      } else if (!probe) {
        node.setChildren([this.info(node, e), ...node.children.filter((c) => c.kind !== 'info')]);
      }
      return;
    }
    node.loaded = true;
    // A server without SEP-2093 may answer its whole listing, with the collection in it.
    if (listed.items.some((c) => c.uri === node.uri)) {
      this.noChildren.add(node.server);
      node.hint.textContent = '';
      return;
    }
    const children = [...before, ...listed.items.map((r) => this.resourceNode(node, r))];
    if (listed.cursor) {
      const m = new Node(this, node, { kind: 'more', server: node.server, label: `Load more (${formatCount(children.length)} shown)` });
      m.cursor = listed.cursor;
      children.push(m);
    }
    node.setChildren(children);
    node.hint.textContent = formatCount(children.length - (listed.cursor ? 1 : 0));
  }

  async loadTemplates(node) {
    node.setBusy(true, 'loading…');
    const children = [];
    let cursor;
    const seen = new Set();
    try {
      for (let pages = 0; pages < PAGE_CAP; pages += 1) {
        const page = await api.get('templates', { server: node.server, cursor });
        for (const t of page.templates) {
          const n = new Node(this, node, { kind: 'template', server: node.server, template: t.template, uri: t.template.uriTemplate });
          n.variables = t.variables;
          n.templateError = t.error;
          children.push(n);
        }
        cursor = page.nextCursor;
        if (!cursor || seen.has(cursor)) break;
        seen.add(cursor);
      }
    } catch (e) {
      children.push(this.info(node, e));
    }
    if (children.length === 0) children.push(this.info(node, null, 'No templates'));
    node.setChildren(children);
    node.loaded = true;
    node.hint.textContent = formatCount(children.filter((c) => c.kind === 'template').length);
  }

  async expand(node) {
    if (!node.expandable() || node.expanded) return;
    node.expanded = true;
    node.group.hidden = false;
    node.refreshState();
    if (!node.loaded) await this.load(node);
    if (node.expanded) {
      node.group.hidden = false;
      await node.renderChildren();
      node.refreshState();
    }
  }

  collapse(node) {
    node.expanded = false;
    node.group.hidden = true;
    node.refreshState();
  }

  /** Lists `node` again (a server, or an open collection), keeping what was open. */
  async refresh(node, open) {
    const opened = new Set();
    for (const n of node.walk()) if (n.expanded) opened.add(n.key);
    if (open) opened.add(node.key);
    const selected = this.selected && this.selected.key;
    node.loaded = false;
    node.expanded = false;
    node.setChildren([]);
    if (!opened.has(node.key)) return;
    await this.expand(node);
    const reopen = async (n) => {
      for (const c of n.children) {
        if (opened.has(c.key) && c.expandable()) {
          await this.expand(c);
          await reopen(c);
        }
        if (selected && c.key === selected && c.li) this.select(c, false);
      }
    };
    await reopen(node);
  }

  /** The open collection with this URI on this server, if any. */
  findOpen(server, uri) {
    const root = this.servers.get(server);
    if (!root) return null;
    for (const n of root.walk()) if (n.uri === uri && n.expanded && n.kind === 'collection') return n;
    return null;
  }

  /** Every resource the tree knows (for the basket's suggestions). */
  *resources() {
    for (const root of this.servers.values()) {
      for (const n of root.walk()) if (n.resource) yield { server: n.server, resource: n.resource };
    }
  }

  /** The collection above a node, if it has one (what to watch besides the resource). */
  parentCollection(node) {
    for (let p = node && node.parent; p; p = p.parent) if (p.kind === 'collection') return p.uri;
    return null;
  }

  select(node, focus = true) {
    if (this.selected && this.selected.li) {
      this.selected.li.setAttribute('aria-selected', 'false');
    }
    for (const li of this.root.querySelectorAll('[role="treeitem"][tabindex="0"]')) li.tabIndex = -1;
    this.selected = node;
    node.li.setAttribute('aria-selected', 'true');
    node.li.tabIndex = 0;
    if (focus) node.li.focus();
  }

  async activate(node) {
    this.select(node);
    switch (node.kind) {
      case 'resource':
        this.handlers.onOpen(node.server, node.resource, node);
        if (node.children.length) await this.toggle(node);
        break;
      case 'collection':
        this.handlers.onOpen(node.server, node.resource, node);
        await this.expand(node);
        break;
      case 'template':
        this.handlers.onTemplate(node.server, node.template, node.variables, node.templateError);
        break;
      case 'more': {
        const parent = node.parent;
        await this.loadChildren(parent, node.cursor);
        await parent.renderChildren();
        break;
      }
      case 'info':
        if (node.error) this.handlers.onError(node.error);
        break;
      default:
        await this.toggle(node);
    }
  }

  async toggle(node) {
    if (node.expanded) this.collapse(node);
    else await this.expand(node);
  }

  visible() {
    return [...this.root.querySelectorAll('[role="treeitem"]')].filter((li) => !li.parentElement.closest('ul[hidden]'));
  }

  onClick(e) {
    const li = e.target.closest('[role="treeitem"]');
    if (!li || !this.root.contains(li)) return;
    e.stopPropagation();
    const node = li.node;
    if (e.target.classList.contains('twisty')) {
      this.select(node);
      this.toggle(node);
    } else {
      this.activate(node);
    }
  }

  onKey(e) {
    const li = e.target.closest('[role="treeitem"]');
    if (!li) return;
    const node = li.node;
    const items = this.visible();
    const at = items.indexOf(li);
    const go = (i) => {
      const target = items[Math.max(0, Math.min(items.length - 1, i))];
      if (target) this.select(target.node);
    };
    switch (e.key) {
      case 'ArrowDown': go(at + 1); break;
      case 'ArrowUp': go(at - 1); break;
      case 'Home': go(0); break;
      case 'End': go(items.length - 1); break;
      case 'ArrowRight':
        if (node.expandable() && !node.expanded) this.expand(node);
        else if (node.expanded && node.children[0] && node.children[0].li) this.select(node.children[0]);
        break;
      case 'ArrowLeft':
        if (node.expanded) this.collapse(node);
        else if (node.parent) this.select(node.parent);
        break;
      case 'Enter':
      case ' ':
        this.activate(node);
        break;
      case '*':
        for (const s of node.parent ? node.parent.children : []) if (s.expandable()) this.expand(s);
        break;
      default:
        if (e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) {
          this.typeAhead(e.key, items, at);
        } else {
          return;
        }
    }
    e.preventDefault();
  }

  /** Moves to the next visible item whose name starts with what was typed just now. */
  typeAhead(key, items, at) {
    const now = Date.now();
    this.typed = now - this.typedAt > 700 ? key.toLowerCase() : this.typed + key.toLowerCase();
    this.typedAt = now;
    const order = [...items.slice(at + (this.typed.length === 1 ? 1 : 0)), ...items.slice(0, at + 1)];
    const found = order.find((li) => li.dataset.label.startsWith(this.typed));
    if (found) this.select(found.node);
  }
}
