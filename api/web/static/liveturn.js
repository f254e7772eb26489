// liveturn.js — one turn followed live, over its stream of render frames
// (GET /api/turns/{id}/events?render=html, docs/api.md): one listener, one
// cursor. A frame's id is the seq it reflects, so the browser's
// EventSource resumes by itself with Last-Event-ID; a resumed stream starts
// with a reset frame. Frames carry the blocks of rendered HTML that
// changed, the status bubble's text, the plan when it changed and, on the
// last one, the turn's end. When the turn has ended, the stored answer
// takes the live one's place (the same HTML, so nothing moves).

import { api, APIError, sleep, backoff } from './api.js';
import { answered, whenBack } from './reach.js';
import { setStreamStatus, announce } from './dom.js';
import { LiveBlocks } from './live.js';
import { decorate } from './decorate.js';
import { showReasoning } from './reasoning.js';
import { ToolNews } from './toolnews.js';

const RECONNECTING = 'Connection lost — reconnecting…';
const RECOVERING = 'The server writing this answer stopped. Recovering the answer…';
const WAITING = 'Waiting for the answer to continue…';

export class LiveTurn {
  /**
   * turnId is the turn; after the seq its stored answer html reflects
   * (0 for a turn just sent); status the bubble's text until the first frame;
   * list the MessageList; plan the PinnedPlan;
   * isCurrent tells whether its conversation is still the one shown;
   * onEnd is called once when the turn has ended or can no longer be followed.
   */
  constructor({ turnId, conversationId, after = 0, html = '', status = '', list, plan, isCurrent, onEnd }) {
    this.turnId = turnId;
    this.conversationId = conversationId;
    this.seq = after; // the cursor: the seq of the last frame shown
    this.list = list;
    this.plan = plan;
    this.isCurrent = isCurrent;
    this.onEnd = onEnd;
    const shell = list.liveShell(turnId);
    this.art = shell.art;
    this.body = shell.body;
    this.bubble = shell.bubble;
    this.bubbleText = shell.bubbleText;
    this.fold = shell.fold;
    this.blocks = new LiveBlocks(this.body);
    this.es = null; // the EventSource
    this.status = status; // the server's status bubble text
    this.notice = ''; // the page's own: reconnecting, recovering
    this.todos = [];
    this.end = null; // the turn's end, from the final frame
    this.error = ''; // why the turn can no longer be followed
    this.done = false;
    this.lost = false; // the stream dropped and has not come back yet
    this.retries = 0;
    this.retryTimer = null;
    this.quietTimer = null;
    this.checking = false;
    if (html) this.blocks.apply({ reset: true, count: 1, blocks: [{ i: 0, html }] });
    decorate(this.body);
    this.news = new ToolNews(this.body); // says what the tools do from here on
    this.body.classList.toggle('message__body--empty', !html);
    this.showBubble();
    this.bubble.hidden = !!html; // the dots show until the first frame
  }

  start() {
    this.open();
    this.list.keeper.keep();
  }

  open() {
    if (this.done) return;
    const url = api.renderURL(this.turnId) + (this.seq > 0 ? '&after=' + this.seq : '');
    const es = new EventSource(url);
    this.es = es;
    es.addEventListener('render', (ev) => this.onFrame(es, ev));
    es.addEventListener('open', () => this.onOpen(es));
    es.addEventListener('error', () => this.onError(es));
  }

  onOpen(es) {
    if (this.es !== es) return;
    this.retries = 0;
    setStreamStatus('');
    answered();
    if (this.lost) {
      // Back after a drop: if the answer does not move on, the server that
      // wrote it may be gone, and another one will finish it.
      this.lost = false;
      this.watchQuiet();
    }
  }

  /** whenBack calls fn once the server can be reached again (this turn's stream opens, or a request gets through), unless the turn has ended first. */
  whenBack(fn) {
    whenBack(fn, () => api.turn(this.turnId), () => this.done);
  }

  onError(es) {
    if (this.done || this.es !== es) return;
    this.lost = true;
    if (es.readyState === EventSource.CLOSED) {
      // The browser gave up (an error answer, or the server is away):
      // reconnect from the cursor, with backoff.
      this.reconnect();
    } else {
      setStreamStatus(RECONNECTING);
      this.check();
    }
  }

  onFrame(es, ev) {
    if (this.done || this.es !== es) return;
    let f;
    try {
      f = JSON.parse(ev.data);
    } catch {
      return;
    }
    if (typeof f.seq === 'number' && f.seq > this.seq) {
      this.seq = f.seq;
      clearTimeout(this.quietTimer);
      this.notice = '';
    }
    if (f.reasoning) showReasoning(this.fold, f.reasoning);
    this.blocks.apply(f);
    decorate(this.body);
    this.news.scan();
    this.body.classList.toggle('message__body--empty', this.blocks.serverHTML() === '');
    if (f.todos) {
      this.todos = f.todos;
      this.plan.show(this.todos);
    }
    this.status = f.status || '';
    this.showBubble();
    this.list.keeper.keep();
    if (f.final) {
      this.end = f.turn || {};
      es.close(); // before EventSource sees the stream end and reconnects
      // After this task, so the final frame is on screen first.
      setTimeout(() => this.finish(), 0);
    }
  }

  showBubble() {
    const msg = this.notice || this.status;
    this.bubbleText.textContent = msg;
    this.bubble.hidden = !msg;
    this.bubble.classList.toggle('bubble--notice', !!this.notice);
  }

  setNotice(msg) {
    if (msg && msg !== this.notice) announce(msg);
    this.notice = msg;
    this.showBubble();
  }

  /** watchQuiet says so when the answer stays silent after a reconnection. */
  watchQuiet() {
    clearTimeout(this.quietTimer);
    const seq = this.seq;
    this.quietTimer = setTimeout(async () => {
      if (this.done || this.seq !== seq) return;
      await this.check();
      if (!this.done && this.seq === seq && !this.notice) this.setNotice(WAITING);
    }, 5000);
  }

  /** check asks the server about the turn: gone, or being recovered. */
  async check() {
    if (this.checking) return;
    this.checking = true;
    try {
      const t = await api.turn(this.turnId);
      if (!this.done && t && t.turn && t.turn.recovering) this.setNotice(RECOVERING);
    } catch (e) {
      if (e.status === 404 || e.status === 401) {
        this.error = e.status === 404 ? 'This answer is no longer available.' : 'Please sign in again.';
        this.finish();
      }
    } finally {
      this.checking = false;
    }
  }

  reconnect() {
    if (this.done) return;
    if (this.es) this.es.close();
    this.es = null;
    setStreamStatus(RECONNECTING);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(async () => {
      if (this.done) return;
      await this.check();
      this.open();
    }, backoff(this.retries++));
  }

  /** stop stops following (the turn goes on on the server). */
  stop() {
    this.done = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.quietTimer);
    if (this.es) this.es.close();
    this.es = null;
    setStreamStatus('');
  }

  finish() {
    if (this.done) return;
    this.stop();
    this.notice = '';
    this.status = '';
    this.showBubble();
    this.art.classList.replace('message--live', 'message--ended');
    this.onEnd(this);
  }

  /**
   * showStored puts the stored answer in place of the live one. When its
   * html is the HTML the live view shows (what the server's renderer
   * guarantees), the live body stays, with its widgets' state.
   */
  async showStored() {
    for (let attempt = 0; ; attempt++) {
      if (!this.isCurrent(this)) return null;
      try {
        const data = await api.conversation(this.conversationId);
        if (!this.isCurrent(this)) return null;
        setStreamStatus('');
        const m = (data.messages || []).find((x) => x.role === 'assistant' && x.turnId === this.turnId);
        if (!m) return data;
        const fresh = this.list.stored(m);
        if (m.html === this.blocks.serverHTML()) {
          fresh.querySelector('.message__body').replaceWith(this.body);
          this.body.classList.remove('live');
          this.body.classList.toggle('message__body--empty', !m.html);
        } else if (this.end) {
          console.error('the live answer differs from the stored one');
        }
        const fold = fresh.querySelector('.reasoning');
        if (fold && this.fold.open) fold.open = true;
        const note = fresh.querySelector('.message__note');
        if (note && this.end && this.end.error) note.textContent = this.end.error;
        this.art.replaceWith(fresh);
        this.list.keeper.keep();
        return data;
      } catch (e) {
        if (e instanceof APIError && !e.retryable) {
          setStreamStatus('');
          return null;
        }
        setStreamStatus('Connection lost — the final answer will show when it is back…');
        await sleep(backoff(attempt));
      }
    }
  }
}
