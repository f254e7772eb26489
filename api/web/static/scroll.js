// scroll.js — keeps the newest text in view while an answer streams,
// until the reader scrolls up, and offers "Jump to latest" meanwhile.
//
// Whether the view follows the end is decided by what the reader does
// (wheel, touch, keys, the scroll bar), never by where the view happens to
// be: the plan appearing or the composer growing shrinks the area and
// moves the end away without any reader scrolling, and a reload mid-turn
// starts with the end far below. Scrolling back to the end follows again.

const NEAR = 48; // px from the end that count as "at the end"

export class ScrollKeeper {
  constructor(area, jump) {
    this.area = area;
    this.jump = jump;
    this.follow = true; // the view follows the end
    this.userScrolling = false; // the reader moved the view since the last scroll event
    this.pending = false; // a scroll to the end is due at the next frame
    this.lastTop = 0;
    const intent = () => {
      this.userScrolling = true;
    };
    area.addEventListener('wheel', intent, { passive: true });
    area.addEventListener('touchmove', intent, { passive: true });
    area.addEventListener('pointerdown', (e) => {
      if (e.target === area) intent(); // the scroll bar
    });
    area.addEventListener('keydown', (e) => {
      if (['ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home', 'End', ' '].includes(e.key)) intent();
    });
    area.addEventListener('scroll', () => this.onScroll(), { passive: true });
    jump.addEventListener('click', () => this.toEnd());
    // The area or its content changing size (the plan, the composer, a
    // typeset formula, an image) keeps the end in view when following.
    this.resize = new ResizeObserver(() => this.keep());
    this.resize.observe(area);
  }

  distance() {
    const a = this.area;
    return a.scrollHeight - a.scrollTop - a.clientHeight;
  }

  onScroll() {
    const up = this.area.scrollTop < this.lastTop;
    this.lastTop = this.area.scrollTop;
    if (this.distance() <= NEAR) this.follow = true;
    else if (this.userScrolling && up) this.follow = false;
    this.userScrolling = false;
    this.showJump();
  }

  showJump() {
    this.jump.hidden = this.follow || this.distance() <= NEAR;
  }

  /** watch watches the area and els (a conversation's messages, whose math and fonts may grow after they show) instead of what it watched. */
  watch(els) {
    this.resize.disconnect();
    this.resize.observe(this.area);
    for (const el of els) this.resize.observe(el);
  }

  /** observe watches an element whose size changes as content streams in. */
  observe(el) {
    this.resize.observe(el);
  }

  /** keep scrolls to the end at the next frame when following. */
  keep() {
    if (!this.follow) {
      this.showJump();
      return;
    }
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      if (this.follow) this.set(this.area.scrollHeight);
      this.showJump();
    });
  }

  /** toEnd follows the end again, now. */
  toEnd() {
    this.follow = true;
    this.set(this.area.scrollHeight);
    this.showJump();
  }

  /** reveal stops following and puts el in the middle of the view (scrolling the messages only). */
  reveal(el) {
    this.follow = false;
    const a = this.area.getBoundingClientRect();
    const r = el.getBoundingClientRect();
    this.set(this.area.scrollTop + r.top - a.top - (this.area.clientHeight - Math.min(r.height, this.area.clientHeight)) / 2);
    this.showJump();
  }

  set(top) {
    this.area.scrollTop = top;
    this.lastTop = this.area.scrollTop;
  }
}
