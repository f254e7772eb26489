// messages.js — the message list: stored messages as the server rendered
// them (html), the user's own text as text, the shell a live turn streams
// into, and the footer of each answer (Copy answer, and the actions of
// actions.js). Every answer's HTML is the server's; the page adds only its
// controls (decorate.js).

import { make, timeEl, copyText, showError } from './dom.js';
import { parseHTML } from './live.js';
import { decorate } from './decorate.js';
import { newPlan } from './plan.js';
import { answerMarkdown } from './answer.js';
import { newFold, showReasoning } from './reasoning.js';
import { switcher } from './versions.js';
import { chips } from './attach.js';
import { modelLabel } from './models.js';

const count = new Intl.NumberFormat();

/** usageOf is the line of an answer's model and tokens (each when known). */
function usageOf(m) {
  const u = m.usage;
  const tokens = u && (u.inputTokens || u.outputTokens)
    ? make('span', { className: 'message__usage', attrs: { title: 'Tokens the model read and wrote for this answer' } },
      `${count.format(u.inputTokens || 0)} tokens in · ${count.format(u.outputTokens || 0)} out`) : null;
  if (!m.model) return tokens;
  const model = make('span', { className: 'message__model', attrs: { title: 'The model that wrote this answer' } }, modelLabel(m.model));
  return make('span', { className: 'message__meta' }, model, tokens);
}

export class MessageList {
  constructor(area, empty, keeper) {
    this.area = area;
    this.empty = empty;
    this.keeper = keeper;
    this.older = null; // { before, load } while there are earlier messages
    this.earlier = null; // the "Show earlier messages" button
    this.loading = null; // the load of earlier messages under way
    this.onEarlier = null; // called when earlier messages were put above
  }

  /**
   * show draws a conversation's messages (none: the empty state). older,
   * when the conversation has earlier messages, is { before, load }: load(before)
   * fetches the page before the position before ({ messages, more, before }).
   */
  show(messages, older = null) {
    this.seen?.disconnect();
    this.older = older;
    this.earlier = older ? this.earlierButton() : null;
    this.area.replaceChildren(...[this.earlier, this.empty].filter(Boolean), ...messages.map((m) => this.stored(m)));
    this.empty.hidden = messages.length > 0;
    this.keeper.watch(this.area.querySelectorAll(':scope > .message')); // typeset math grows them after this
    this.keeper.toEnd();
  }

  /** earlierButton loads earlier messages when pressed or scrolled to. */
  earlierButton() {
    const b = make('button', { type: 'button', className: 'btn btn--small btn--ghost messages__earlier' }, 'Show earlier messages');
    b.addEventListener('click', () => this.loadEarlier());
    this.seen = new IntersectionObserver((es) => {
      if (es.some((e) => e.isIntersecting)) this.loadEarlier();
    }, { root: this.area });
    this.seen.observe(b);
    return b;
  }

  /** loadEarlier puts the page before the first message shown above it, keeping what the reader sees in place; one load at a time. */
  loadEarlier() {
    if (this.older && !this.loading) this.loading = this.fetchEarlier().finally(() => { this.loading = null; });
    return this.loading || Promise.resolve();
  }

  async fetchEarlier() {
    const older = this.older;
    const b = this.earlier;
    b.disabled = true;
    b.textContent = 'Loading earlier messages…';
    try {
      const page = await older.load(older.before);
      if (this.older !== older) return; // another conversation meanwhile
      const fromEnd = this.area.scrollHeight - this.area.scrollTop;
      b.after(...(page.messages || []).map((m) => this.stored(m)));
      this.onEarlier?.(); // their controls, before the view is put back in place
      this.area.scrollTop = this.area.scrollHeight - fromEnd;
      if (page.more) {
        older.before = page.before;
      } else {
        this.seen.disconnect();
        b.remove();
        this.older = this.earlier = null;
      }
    } catch (e) {
      showError('Could not load earlier messages: ' + e.message);
    } finally {
      b.disabled = false;
      b.textContent = 'Show earlier messages';
    }
  }

  shell(role, createdAt) {
    const body = make('div', { className: 'message__body' });
    const art = make('article', { className: 'message message--' + role },
      make('header', { className: 'message__head' },
        make('h2', { className: 'message__role' }, role === 'user' ? 'You' : 'Assistant'),
        createdAt ? timeEl(createdAt, 'message__time') : null),
      body);
    return { art, body };
  }

  /** stored returns the article of a stored message. */
  stored(m) {
    const { art, body } = this.shell(m.role, m.createdAt);
    art.dataset.messageId = m.id;
    art.dataset.status = m.status;
    if (m.turnId) art.dataset.turnId = m.turnId;
    if (m.role === 'user') {
      body.classList.add('message__body--plain');
      body.textContent = m.content; // what the user typed, as text
      const files = chips(m.attachments);
      if (files) body.after(files);
      const versions = switcher(m);
      if (versions) art.querySelector('.message__head').append(versions);
      return art;
    }
    body.classList.add('markdown');
    if (m.reasoning) {
      const fold = newFold();
      showReasoning(fold, m.reasoning);
      body.before(fold);
    }
    body.classList.toggle('message__body--empty', !m.html); // an answer that failed before its first word
    body.append(...parseHTML(m.html || '')); // rendered and sanitised by the server
    decorate(body);
    this.finishAnswer(art, m, m.error || '');
    return art;
  }

  /** finishAnswer adds what a finished answer has under its text: a note, its plan, its footer. */
  finishAnswer(art, m, error = '') {
    art.dataset.status = m.status;
    art.append(make('p', { className: 'message__note' }, error));
    if (m.todos && m.todos.length) art.append(newPlan(m.todos, m.status));
    const copy = make('button', { type: 'button', className: 'btn btn--small btn--ghost copy-answer' }, 'Copy answer');
    // An answer that failed before its first word copies why it failed.
    const note = art.querySelector('.message__note');
    copy.addEventListener('click', () => copyText(answerMarkdown(m.content || '').trim() || note.textContent, copy));
    // .message__actions is where the actions on an answer go (actions.js).
    art.append(make('footer', { className: 'message__foot' }, make('div', { className: 'message__actions' }, copy), usageOf(m)));
  }

  /** appendUser shows a message just sent. */
  appendUser(text, id, files) {
    const { art, body } = this.shell('user', new Date().toISOString());
    body.classList.add('message__body--plain');
    body.textContent = text;
    const list = chips(files);
    if (list) body.after(list);
    art.dataset.messageId = id;
    this.area.append(art);
    this.empty.hidden = true;
    this.keeper.toEnd();
  }

  /** liveShell adds the article a live turn streams into. */
  liveShell(turnId) {
    const { art, body } = this.shell('assistant', new Date().toISOString());
    art.classList.add('message--live');
    art.dataset.turnId = turnId;
    body.classList.add('markdown', 'live');
    const text = make('span', { className: 'bubble__text' });
    // Not a live region: the page's one region (dom.js announce) says what changed.
    const bubble = make('div', { className: 'bubble', hidden: true },
      make('span', { className: 'bubble__dots', attrs: { 'aria-hidden': 'true' } }, make('i'), make('i'), make('i')),
      text);
    body.before(bubble);
    const fold = newFold();
    bubble.before(fold);
    this.area.append(art);
    this.empty.hidden = true;
    this.keeper.observe(art);
    return { art, body, bubble, bubbleText: text, fold };
  }
}
