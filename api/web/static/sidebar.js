// sidebar.js — the conversation list: read a page at a time (more as the
// list scrolls), the open conversation marked and scrolled into view, a
// mark on those with an answer being written, delete with a confirmation.
// The items are kept by id and updated in place, so a focused link keeps
// its focus when the list changes. On a phone the list is a drawer: open,
// the rest of the page is inert (focus stays in the drawer), Esc closes it.

import { api } from './api.js';
import { make, timeEl, narrow } from './dom.js';

export class Sidebar {
  constructor({ app, list, more, menu, scrim, main, onDelete }) {
    this.app = app;
    this.list = list;
    this.more = more; // the "More conversations" button at the end of the list
    this.menu = menu;
    this.scrim = scrim;
    this.main = main;
    this.onDelete = onDelete;
    this.conversations = []; // in the server's order
    this.items = new Map(); // id → <li>
    this.next = ''; // cursor of the next page, '' when none
    this.currentId = null;
    this.runningId = null; // the conversation whose turn this page follows
    this.loading = null;
    more.addEventListener('click', () => this.loadMore());
    new IntersectionObserver((es) => {
      if (es.some((e) => e.isIntersecting)) this.loadMore();
    }, { root: list.closest('nav') }).observe(more);
    menu.addEventListener('click', () => (this.isOpen() ? this.close() : this.open()));
    this.drawer = app.querySelector('#sidebar');
    this.drawer.addEventListener('keydown', (e) => this.trapTab(e));
    scrim.addEventListener('click', () => this.close());
    window.matchMedia('(max-width: 720px)').addEventListener('change', () => this.close());
    this.close();
  }

  /** load reads the first page again, keeping the pages read after it. */
  async load() {
    const data = await api.conversations();
    const first = data.conversations || [];
    const ids = new Set(first.map((c) => c.id));
    const tail = this.conversations.length > first.length ? this.conversations.slice(first.length).filter((c) => !ids.has(c.id)) : [];
    this.conversations = first.concat(tail);
    if (!tail.length) this.next = data.next || '';
    this.render();
  }

  async loadMore() {
    if (!this.next || this.loading) return this.loading;
    const after = this.next;
    this.loading = api.conversations(after).then((data) => {
      const have = new Set(this.conversations.map((c) => c.id));
      this.conversations.push(...(data.conversations || []).filter((c) => !have.has(c.id)));
      this.next = data.next || '';
      this.render();
    }).finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  /** reveal reads the list again and pages until id is listed (at most 20), and shows it. */
  async reveal(id) {
    if (!this.items.has(id)) await this.load();
    for (let i = 0; i < 20 && !this.items.has(id) && this.next; i++) await this.loadMore();
    this.setCurrent(id);
  }

  render() {
    const keep = new Set();
    let prev = null;
    for (const c of this.conversations) {
      keep.add(c.id);
      let li = this.items.get(c.id);
      if (!li) {
        li = this.item(c.id);
        this.items.set(c.id, li);
      }
      this.update(li, c);
      if ((prev ? prev.nextSibling : this.list.firstChild) !== li) this.list.insertBefore(li, prev ? prev.nextSibling : this.list.firstChild);
      prev = li;
    }
    for (const [id, li] of this.items) {
      if (!keep.has(id)) {
        li.remove();
        this.items.delete(id);
      }
    }
    this.more.hidden = !this.next;
  }

  item(id) {
    const open = make('a', { className: 'conversation__open', href: '#' + encodeURIComponent(id) },
      make('span', { className: 'conversation__title' }),
      make('span', { className: 'conversation__meta' },
        make('span', { className: 'conversation__running', hidden: true }, 'Writing…')));
    open.addEventListener('click', () => this.close(true));
    const del = make('button', { type: 'button', className: 'conversation__delete' }, make('span', { attrs: { 'aria-hidden': 'true' } }, '×'));
    del.addEventListener('click', () => this.onDelete(id));
    return make('li', { className: 'conversation', dataset: { id } }, open, del);
  }

  update(li, c) {
    const title = c.title || 'Untitled conversation';
    const open = li.querySelector('.conversation__open');
    const t = li.querySelector('.conversation__title');
    if (t.textContent !== title) t.textContent = title;
    open.title = title;
    const meta = li.querySelector('.conversation__meta');
    const time = timeEl(c.updatedAt || c.createdAt, 'conversation__time');
    const old = meta.querySelector('.conversation__time');
    if (!old || old.dateTime !== time.dateTime) (old ? old.replaceWith(time) : meta.prepend(time));
    const running = !!c.running || c.id === this.runningId;
    li.querySelector('.conversation__running').hidden = !running;
    li.classList.toggle('conversation--running', running);
    const del = li.querySelector('.conversation__delete');
    del.setAttribute('aria-label', 'Delete conversation: ' + title);
    const current = c.id === this.currentId;
    li.classList.toggle('conversation--current', current);
    if (current) open.setAttribute('aria-current', 'page');
    else open.removeAttribute('aria-current');
  }

  /** setCurrent marks the conversation shown (null: a new one) and scrolls it into view. */
  setCurrent(id) {
    this.currentId = id;
    this.render();
    const li = id && this.items.get(id);
    if (li) li.scrollIntoView({ block: 'nearest' });
  }

  /** setRunning marks the conversation whose turn the page follows (null: none). */
  setRunning(id) {
    this.runningId = id;
    for (const c of this.conversations) if (!id && c.running) c.running = false;
    this.render();
  }

  /** remove drops a deleted conversation from the list. */
  remove(id) {
    this.conversations = this.conversations.filter((c) => c.id !== id);
    this.render();
  }

  isOpen() {
    return this.app.classList.contains('app--sidebar-open');
  }

  open() {
    this.app.classList.add('app--sidebar-open');
    this.menu.setAttribute('aria-expanded', 'true');
    this.scrim.hidden = false;
    this.drawer.inert = false;
    this.main.inert = true; // the drawer keeps the focus
    const target = this.list.querySelector('[aria-current="page"]') || this.app.querySelector('#new-conversation');
    target.focus();
  }

  /** trapTab keeps Tab and Shift+Tab inside the open drawer. */
  trapTab(e) {
    if (e.key !== 'Tab' || !this.isOpen()) return;
    const all = [...this.drawer.querySelectorAll('a[href], button, input')].filter((el) => el.getClientRects().length && !el.disabled);
    if (!all.length) return;
    const first = all[0];
    const last = all[all.length - 1];
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  }

  /** close closes the drawer; toInput moves the focus to the message box. */
  close(toInput = false) {
    const was = this.isOpen();
    this.app.classList.remove('app--sidebar-open');
    this.menu.setAttribute('aria-expanded', 'false');
    this.scrim.hidden = true;
    this.main.inert = false;
    this.drawer.inert = narrow(); // off screen on a phone
    if (was) (toInput ? document.querySelector('#input') : this.menu).focus();
  }
}
