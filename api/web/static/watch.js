// watch.js — the conversation shown, watched for turns started elsewhere
// (another tab, the terminal client): GET /api/conversations/{id}/events
// sends a "turn" event when a turn starts in it, the first at once when one
// is being answered. The browser's EventSource reconnects by itself.

export class ConversationWatch {
  /** onTurn(conversationId, turnId) is called for each turn the server announces. */
  constructor(onTurn) {
    this.onTurn = onTurn;
    this.id = null; // the conversation watched
    this.es = null;
  }

  /** watch watches conversation id (null: none). */
  watch(id) {
    if (id === this.id) return;
    this.stop();
    this.id = id;
    if (!id) return;
    this.es = new EventSource('/api/conversations/' + encodeURIComponent(id) + '/events');
    this.es.addEventListener('turn', (e) => {
      let data;
      try {
        data = JSON.parse(e.data);
      } catch {
        return;
      }
      if (data.conversationId === this.id) this.onTurn(data.conversationId, data.turnId);
    });
  }

  stop() {
    if (this.es) this.es.close();
    this.es = null;
    this.id = null;
  }
}
