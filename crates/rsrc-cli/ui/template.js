// A template's form: one field per variable, each an ARIA combobox completed by the
// server (`completion/complete`) as the user types, with the variables already filled
// sent as context; the URI the values make, expanded by the backend (RFC 6570); and a
// button to open it.

import { h, errorBox, displayName } from './dom.js';
import * as api from './api.js';

const DEBOUNCE_MS = 150;

let forms = 0;

/** The form for `template` of `server`; `open(uri)` opens the URI it makes. */
export function templateForm(server, template, variables, parseError, open) {
  const n = (forms += 1);
  const values = {};
  const uriOut = h('output', { class: 'uri', id: `tpl-${n}-uri`, 'aria-live': 'polite' });
  const problem = h('div', { class: 'form-problem' });
  const openButton = h('button', { type: 'submit', disabled: true }, 'Open');
  const fieldsEl = variables.map((name, i) => field(name, i));
  const form = h('form', { class: 'template-form', 'aria-label': `Template ${displayName(template)}`, novalidate: true },
    h('h2', {}, displayName(template)),
    h('code', { class: 'uri' }, template.uriTemplate),
    template.description ? h('p', {}, template.description) : null,
    parseError ? h('p', { class: 'note' }, `This template cannot be expanded here: ${parseError}`) : null,
    fieldsEl,
    h('p', {}, 'URI: ', uriOut),
    problem,
    h('div', { class: 'actions' }, openButton));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const uri = await expand();
    if (uri) open(uri);
  });

  async function expand() {
    problem.replaceChildren();
    try {
      const { uri } = await api.post('expand', { template: template.uriTemplate, values });
      uriOut.textContent = uri;
      openButton.disabled = !uri;
      return uri;
    } catch (e) {
      uriOut.textContent = '';
      openButton.disabled = true;
      problem.append(errorBox(e));
      return null;
    }
  }

  function field(name, i) {
    const id = `tpl-${n}-${i}`;
    const listId = `${id}-list`;
    const input = h('input', {
      id,
      type: 'text',
      role: 'combobox',
      'aria-autocomplete': 'list',
      'aria-expanded': 'false',
      'aria-controls': listId,
      autocomplete: 'off',
      spellcheck: 'false',
    });
    const list = h('ul', { id: listId, role: 'listbox', class: 'completions', 'aria-label': `Values for ${name}`, hidden: true });
    const note = h('span', { class: 'note' });
    let timer = 0;
    let asked = 0;
    let active = -1;
    const options = () => [...list.children];
    const close = () => {
      list.hidden = true;
      input.setAttribute('aria-expanded', 'false');
      input.removeAttribute('aria-activedescendant');
      active = -1;
    };
    const choose = (value) => {
      input.value = value;
      values[name] = value;
      close();
      expand();
    };
    const highlight = (i) => {
      const all = options();
      if (!all.length) return;
      active = (i + all.length) % all.length;
      all.forEach((o, j) => o.setAttribute('aria-selected', String(j === active)));
      input.setAttribute('aria-activedescendant', all[active].id);
      all[active].scrollIntoView({ block: 'nearest' });
    };
    const complete = async () => {
      const ask = (asked += 1);
      const context = Object.fromEntries(Object.entries(values).filter(([k, v]) => k !== name && v));
      try {
        const done = await api.post('complete', { server, template: template.uriTemplate, argument: name, value: input.value, context });
        if (ask !== asked) return;
        list.replaceChildren(...done.values.map((v, j) => h('li', {
          id: `${id}-opt-${j}`,
          role: 'option',
          'aria-selected': 'false',
          onmousedown: (e) => {
            e.preventDefault();
            choose(v);
          },
        }, v)));
        const more = done.hasMore ? ` of ${done.total ?? 'more'}` : '';
        note.textContent = done.values.length ? `${done.values.length}${more} ${done.values.length === 1 ? 'suggestion' : 'suggestions'}` : 'no suggestions';
        list.hidden = done.values.length === 0;
        input.setAttribute('aria-expanded', String(!list.hidden));
        active = -1;
      } catch (e) {
        if (ask !== asked) return;
        close();
        note.textContent = `completion failed: ${e.code !== undefined ? `error ${e.code}: ` : ''}${e.message}`;
      }
    };
    input.addEventListener('input', () => {
      values[name] = input.value;
      clearTimeout(timer);
      timer = setTimeout(complete, DEBOUNCE_MS);
      expand();
    });
    input.addEventListener('focus', () => {
      clearTimeout(timer);
      timer = setTimeout(complete, DEBOUNCE_MS);
    });
    input.addEventListener('blur', () => setTimeout(close, 100));
    input.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowDown') {
        if (list.hidden) complete();
        else highlight(active + 1);
      } else if (e.key === 'ArrowUp') {
        highlight(active - 1);
      } else if (e.key === 'Enter' && !list.hidden && active >= 0) {
        choose(options()[active].textContent);
      } else if (e.key === 'Escape') {
        close();
      } else {
        return;
      }
      e.preventDefault();
    });
    return h('div', { class: 'field' }, h('label', { for: id }, name), h('div', { class: 'combo' }, input, list), note);
  }

  expand();
  return form;
}
