// modelmenu.js — "another model" beside an answer's Regenerate or Retry:
// a split button whose arrow opens a small menu of the server's models (the
// one that wrote the answer marked) and answers again with the one picked.
// Keyboard: Enter, Space or ↓ on the arrow opens the menu on the marked
// model; ↑/↓/Home/End move; Enter picks; Esc closes (focus back on the
// arrow), as does Tab or a click elsewhere. Labels go in as text only.

import { make } from './dom.js';
import { modelChoices, modelNamed } from './models.js';

/** VERB is what each action's menu says it does. */
const VERB = { regenerate: 'Regenerate', retry: 'Retry' };

/** moreButton is the arrow that opens the models menu of an action ('' when there is no choice). */
export function moreButton(action) {
  if (modelChoices().length === 0) return null;
  return make('button', {
    type: 'button', className: 'btn btn--small btn--ghost again__more',
    title: VERB[action] + ' with another model',
    attrs: { 'aria-label': VERB[action] + ' with another model', 'aria-haspopup': 'menu', 'aria-expanded': 'false' },
  }, '▾');
}

export class ModelMenu {
  /** onPick(group, model) answers again with model the answer whose action group is group. */
  constructor(onPick) {
    this.onPick = onPick;
    this.open = null; // {group, more, menu} while a menu is open
    document.addEventListener('click', (e) => {
      if (this.open && !this.open.group.contains(e.target)) this.close(false);
    });
  }

  /** toggle opens the menu of the arrow more, or closes it. */
  toggle(more) {
    if (this.open && this.open.more === more) return this.close(true);
    this.close(false);
    const group = more.closest('.again');
    const action = group.querySelector('.action').dataset.action;
    const art = group.closest('.message');
    const current = modelNamed(art.querySelector('.message__model')?.textContent || '');
    const items = modelChoices().map((m) => make('button', {
      type: 'button', className: 'again__model', dataset: { model: m.id },
      attrs: { role: 'menuitemradio', 'aria-checked': String(m.id === current), tabindex: '-1' },
    }, m.label));
    const menu = make('div', { className: 'again__menu', attrs: { role: 'menu', 'aria-label': VERB[action] + ' with' } },
      make('div', { className: 'again__caption', attrs: { 'aria-hidden': 'true' } }, VERB[action] + ' with'), ...items);
    menu.addEventListener('keydown', (e) => this.key(e, items));
    menu.addEventListener('click', (e) => {
      const item = e.target.closest('.again__model');
      if (!item) return;
      this.close(false);
      this.onPick(group, item.dataset.model);
    });
    menu.addEventListener('focusout', (e) => {
      if (e.relatedTarget && !group.contains(e.relatedTarget)) this.close(false);
    });
    group.append(menu);
    // It opens upwards, over the answer; downwards where the list's top would cut it.
    if (menu.getBoundingClientRect().top < art.parentElement.getBoundingClientRect().top) menu.classList.add('again__menu--down');
    more.setAttribute('aria-expanded', 'true');
    this.open = { group, more, menu };
    (items.find((i) => i.getAttribute('aria-checked') === 'true') || items[0]).focus();
  }

  /** arrowKey opens the menu of an arrow on ↓ or ↑, as a menu button does. */
  arrowKey(e) {
    if ((e.key === 'ArrowDown' || e.key === 'ArrowUp') && e.target.matches('.again__more') && !this.open) {
      e.preventDefault();
      this.toggle(e.target);
    }
  }

  /** key moves in the menu, and closes it on Esc or Tab. */
  key(e, items) {
    const at = items.indexOf(document.activeElement);
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: items.length - 1 }[e.key];
    if (to !== undefined) {
      e.preventDefault();
      items[(to + items.length) % items.length].focus();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation(); // not the page's Esc (stop an answer)
      this.close(true);
    } else if (e.key === 'Tab') {
      this.close(true); // Tab goes on from the arrow
    }
  }

  /** close closes the open menu; focus gives the focus back to its arrow. */
  close(focus) {
    const o = this.open;
    if (!o) return;
    this.open = null;
    o.menu.remove();
    o.more.setAttribute('aria-expanded', 'false');
    if (focus && o.more.isConnected) o.more.focus();
  }
}
