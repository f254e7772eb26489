// search.js — the sidebar's search box: what is typed is looked up a
// moment after the typing stops (GET /api/conversations?q=), and the
// conversations that hold it show in place of the list, each with the
// server's snippet of the match, the text found marked. More results come
// a page at a time. Esc empties the box and brings the list back. Opening
// a result opens its conversation at the message of the snippet (hit.js).

import { api } from './api.js';
import { make, timeEl, announce } from './dom.js';

const DEBOUNCE = 250; // ms after the last key

export class SidebarSearch {
  /** els: input, browse (the list and its More button), results, more, status; onOpen when a result is opened. */
  constructor(els, onOpen) {
    this.els = els;
    this.onOpen = onOpen;
    this.q = ''; // the text the results are for
    this.next = ''; // cursor of the next page of results
    this.seq = 0; // bumped by every lookup, so a late answer is dropped
    this.timer = null;
    els.input.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.lookup(), DEBOUNCE);
    });
    els.input.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape' || e.isComposing || !els.input.value) return;
      e.preventDefault();
      e.stopPropagation(); // the first Esc empties the box; the next closes the drawer
      this.clear();
    });
    els.more.addEventListener('click', () => this.lookup(true));
    els.results.addEventListener('click', (e) => {
      const li = e.target.closest('a') && e.target.closest('.search__result');
      if (!li) return;
      if (e.button || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return; // a new tab or window: the link as it is
      e.preventDefault();
      this.onOpen({ id: li.dataset.id, messageId: li.dataset.hit || '', q: this.q });
    });
  }

  /** clear empties the box and shows the list again. */
  clear() {
    clearTimeout(this.timer);
    this.seq++;
    this.els.input.value = '';
    this.q = '';
    this.show(false);
  }

  show(searching) {
    this.els.browse.hidden = searching;
    this.els.results.hidden = !searching;
    this.els.status.hidden = !searching;
    if (!searching) {
      this.els.results.replaceChildren();
      this.els.more.hidden = true;
      this.els.status.textContent = '';
    }
  }

  /** lookup asks for the box's text (more: the next page of the same). */
  async lookup(more = false) {
    const q = more ? this.q : this.els.input.value.trim();
    if (!q) {
      this.clear();
      return;
    }
    const seq = ++this.seq;
    let data;
    try {
      data = await api.search(q, more ? this.next : '');
    } catch (e) {
      if (seq === this.seq) this.say('The search failed: ' + e.message);
      return;
    }
    if (seq !== this.seq) return;
    this.q = q;
    this.next = data.next || '';
    const found = (data.conversations || []).map((c) => this.item(c, q));
    if (more) this.els.results.append(...found);
    else this.els.results.replaceChildren(...found);
    this.els.more.hidden = !this.next;
    this.show(true);
    const n = this.els.results.children.length;
    if (!n) this.say('No conversation holds “' + q + '”.');
    else this.say(n === 1 ? '1 conversation' : n + (this.next ? '+' : '') + ' conversations');
  }

  say(msg) {
    this.show(true);
    this.els.status.textContent = msg;
    announce(msg);
  }

  item(c, q) {
    const title = c.title || 'Untitled conversation';
    return make('li', { className: 'conversation search__result', dataset: { id: c.id, hit: c.hitMessageId || '' } },
      make('a', { className: 'conversation__open', href: '#' + encodeURIComponent(c.id), title },
        make('span', { className: 'conversation__title' }, ...marked(title, q)),
        c.snippet ? make('span', { className: 'search__snippet' }, ...marked(c.snippet, q)) : null,
        make('span', { className: 'conversation__meta' }, timeEl(c.updatedAt || c.createdAt, 'conversation__time'))));
  }
}

/** marked returns text as nodes with each occurrence of q (any case) in a <mark>. */
function marked(text, q) {
  const out = [];
  const low = text.toLowerCase();
  const needle = q.toLowerCase();
  if (low.length !== text.length) return [text]; // a case change that changes lengths: left unmarked
  let at = 0;
  for (let i = low.indexOf(needle); needle && i >= 0; i = low.indexOf(needle, at)) {
    if (i > at) out.push(text.slice(at, i));
    out.push(make('mark', {}, text.slice(i, i + needle.length)));
    at = i + needle.length;
  }
  out.push(text.slice(at));
  return out;
}
