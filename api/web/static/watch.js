// watch.js — the conversation shown, watched for turns started elsewhere
// (another tab, the terminal client): GET /api/conversations/{id}/events
// sends a "turn" event when a turn starts in it, the first at once when one
// is being answered. The browser's EventSource reconnects by itself. A turn
// announced while this page sends a message or an action of its own waits
// until that request has answered (settle): it is most likely that very
// turn, which the page then follows already. The stream opening says the
// server can be reached (reach.js).

import { answered } from './reach.js';

export class ConversationWatch {
  /**
   * busy() tells whether the page is sending a request that starts a turn;
   * following() whether it follows a turn; open(id) reads conversation id
   * again and follows its turn.
   */
  constructor({ busy, following, open }) {
    this.busy = busy;
    this.following = following;
    this.open = open;
    this.id = null; // the conversation watched
    this.es = null;
    this.pending = false; // a turn was announced while busy
  }

  /** watch watches conversation id (null: none). */
  watch(id) {
    if (id === this.id) {
      this.pending = false; // the conversation is read again, with its turn
      return;
    }
    this.stop();
    this.id = id;
    if (!id) return;
    this.es = new EventSource('/api/conversations/' + encodeURIComponent(id) + '/events');
    this.es.addEventListener('open', () => answered());
    this.es.addEventListener('turn', (e) => {
      let data;
      try {
        data = JSON.parse(e.data);
      } catch {
        return;
      }
      if (data.conversationId !== this.id || this.following()) return;
      if (this.busy()) this.pending = true;
      else this.open(this.id);
    });
  }

  /** settle follows a turn announced while the page was busy, unless the page follows one now. */
  settle() {
    const pending = this.pending;
    this.pending = false;
    if (pending && this.id && !this.following()) this.open(this.id);
  }

  stop() {
    if (this.es) this.es.close();
    this.es = null;
    this.id = null;
    this.pending = false;
  }
}
