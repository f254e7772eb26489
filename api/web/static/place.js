// place.js — a reload keeps the reader's place: where the messages are
// scrolled to (the first message in view and how far into it) is kept in
// the tab's sessionStorage, and put back the first time that conversation
// is shown after the page loads. A reader at the end stays at the end
// (following a running answer, as after any load).

const KEY = 'toolmark.place';
const NEAR = 48; // px from the end that count as "at the end", as scroll.js

export class PlaceKeeper {
  /** area is the message list; keeper its ScrollKeeper; current() the conversation shown. */
  constructor(area, keeper, current) {
    this.area = area;
    this.keeper = keeper;
    this.current = current;
    this.timer = null;
    try {
      this.saved = JSON.parse(sessionStorage.getItem(KEY) || 'null');
    } catch {
      this.saved = null;
    }
    area.addEventListener('scroll', () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.save(), 200);
    }, { passive: true });
    // The list is drawn anew (MessageList.show): put the place back, once.
    this.seen = new MutationObserver(() => this.restore());
    this.seen.observe(area, { childList: true });
  }

  save() {
    const id = this.current();
    if (!id || this.saved) return; // not before the saved place is put back
    const top = this.area.getBoundingClientRect().top;
    const art = [...this.area.querySelectorAll(':scope > .message')].find((a) => a.getBoundingClientRect().bottom > top);
    const end = this.area.scrollHeight - this.area.scrollTop - this.area.clientHeight <= NEAR;
    const place = { id, end, msg: art?.dataset.messageId || '', off: art ? art.getBoundingClientRect().top - top : 0 };
    try {
      sessionStorage.setItem(KEY, JSON.stringify(place));
    } catch {
      // No storage (a private window's quota): a reload opens at the end.
    }
  }

  restore() {
    const p = this.saved;
    if (!p || !this.area.querySelector(':scope > .message')) return;
    this.saved = null; // once: the first conversation shown decides
    this.seen.disconnect();
    if (p.id !== this.current() || p.end || !p.msg) return;
    const art = this.area.querySelector(`:scope > .message[data-message-id="${CSS.escape(p.msg)}"]`);
    if (!art) return;
    this.keeper.follow = false;
    this.keeper.set(this.area.scrollTop + art.getBoundingClientRect().top - this.area.getBoundingClientRect().top - p.off);
    this.keeper.showJump();
  }
}
