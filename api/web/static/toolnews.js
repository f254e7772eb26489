// toolnews.js — what a live answer's tools do, said briefly in the page's
// one live region (dom.js announce): "search documents started",
// "fetch url failed: the host did not answer". The widgets are no live
// regions themselves (a turn may hold dozens, each would talk at once):
// after each frame the widgets' statuses are compared with the ones they
// had, and each change to running or to a final status is announced.

import { announce } from './dom.js';

/** SAID is what a change to each status is called; pending is not said. */
const SAID = { running: 'started', success: 'finished', error: 'failed', cancelled: 'stopped' };

export class ToolNews {
  /** root holds the live answer's widgets; those already there are not announced. */
  constructor(root) {
    this.root = root;
    this.seen = new Map(); // toolCallId → the status last seen
    this.scan(false);
  }

  /** scan announces the widgets whose status changed since the last scan. */
  scan(say = true) {
    for (const w of this.root.querySelectorAll('.toolcall[data-tool-call-id]')) {
      const { toolCallId: id, status } = w.dataset;
      if (this.seen.get(id) === status) continue;
      this.seen.set(id, status);
      if (say && SAID[status]) announce(newsOf(w, status));
    }
  }
}

/** newsOf says what happened to widget w: its tool and its new status, with the reason of a failure. */
function newsOf(w, status) {
  const name = (w.dataset.toolType || 'tool').replace(/_/g, ' ');
  let msg = `${name} ${SAID[status]}`;
  const why = status === 'error' ? (w.querySelector(':scope > .toolcall__error')?.textContent || '').trim() : '';
  if (why) msg += ': ' + (why.length > 120 ? why.slice(0, 119) + '…' : why);
  return msg;
}
