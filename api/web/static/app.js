// app.js — the toolmark page: conversations, messages, live turns.
//
// Every answer, stored or streaming, is HTML rendered and sanitised by the
// server (package markdown): stored messages come with their `html`, a live
// turn's answer arrives as blocks in the "render" frames of its event
// stream (see live.js). The page inserts that HTML and builds everything
// else with DOM calls and textContent. The status bubble and the tool
// widgets' texts are the server's too (statustext), so no rule is copied
// here.

import { LiveBlocks, parseHTML } from './live.js';

const $ = (sel) => document.querySelector(sel);
const els = {
  list: $('#conversation-list'),
  newBtn: $('#new-conversation'),
  title: $('#conversation-title'),
  messages: $('#messages'),
  empty: $('#empty-state'),
  examples: $('#examples'),
  banner: $('#demo-banner'),
  kbBanner: $('#kb-banner'),
  error: $('#error-banner'),
  form: $('#composer'),
  input: $('#input'),
  send: $('#send'),
  stop: $('#stop'),
  todos: $('#todos'),
  todoList: $('#todo-list'),
  todoCount: $('#todo-count'),
  login: $('#login'),
  loginForm: $('#login-form'),
  token: $('#token'),
  app: $('#app'),
  status: $('#stream-status'),
  model: $('#model-name'),
  announce: $('#announce'),
  signOut: $('#sign-out'),
  menu: $('#menu'),
  sidebar: $('#sidebar'),
  scrim: $('#scrim'),
};

const state = {
  conversations: [],
  currentId: null,
  live: null, // the turn being followed, see follow()
  loadSeq: 0, // bumped by every conversation load, so a late answer is dropped
};

// ---------------------------------------------------------------- API

class APIError extends Error {
  constructor(status, code, message) {
    super(message || code || String(status));
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body, headers = {}) {
  const opts = { method, headers: { Accept: 'application/json', ...headers }, credentials: 'same-origin' };
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const resp = await fetch(path, opts);
  if (resp.status === 204) return null;
  let data = null;
  try {
    data = await resp.json();
  } catch {
    data = null;
  }
  if (!resp.ok) {
    const e = (data && data.error) || {};
    throw new APIError(resp.status, e.code, e.message || resp.statusText);
  }
  return data;
}

function showError(msg) {
  els.error.textContent = msg || '';
  els.error.hidden = !msg;
}

function setStreamStatus(msg) {
  els.status.textContent = msg || '';
  els.status.hidden = !msg;
}

// ---------------------------------------------------------------- small helpers

/** shortTitle cuts a question to at most n characters at a word boundary. */
export function shortTitle(text, n = 60) {
  const t = text.trim().replace(/\s+/g, ' ');
  if (t.length <= n) return t;
  const cut = t.slice(0, n - 1);
  const sp = cut.lastIndexOf(' ');
  return (sp >= n / 2 ? cut.slice(0, sp) : cut).replace(/[\s,.;:!?-]+$/, '') + '…';
}

const timeFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dateFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
const fullFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** timeEl returns a <time> element: the time today, else the date. */
function timeEl(iso, className) {
  const el = document.createElement('time');
  el.className = className;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return el;
  el.dateTime = d.toISOString();
  const now = new Date();
  el.textContent = d.toDateString() === now.toDateString() ? timeFmt.format(d) : dateFmt.format(d);
  el.title = fullFmt.format(d);
  return el;
}

async function copyText(text, btn) {
  try {
    await navigator.clipboard.writeText(text);
    flash(btn, 'Copied');
  } catch {
    flash(btn, 'Copy failed');
  }
}

function flash(btn, label) {
  const prev = btn.dataset.label || btn.textContent;
  btn.dataset.label = prev;
  btn.textContent = label;
  clearTimeout(btn.flashTimer);
  btn.flashTimer = setTimeout(() => {
    btn.textContent = prev;
  }, 1500);
}

/** plainText returns the text a reader sees in a rendered answer, widgets left out. */
function plainText(body) {
  const clone = body.cloneNode(true);
  for (const el of clone.querySelectorAll('.toolcall, [data-ui]')) el.remove();
  const box = document.createElement('div');
  box.className = 'offscreen markdown';
  box.append(clone);
  document.body.append(box);
  const text = clone.innerText.replace(/\n{3,}/g, '\n\n').trim();
  box.remove();
  return text;
}

/** decorate adds the page's own controls to rendered HTML: copy buttons on code blocks. */
function decorate(root) {
  for (const pre of root.querySelectorAll('pre')) {
    if (pre.querySelector(':scope > .copy-code')) continue;
    const btn = document.createElement('button');
    btn.type = 'button';
    btn.className = 'copy-code';
    btn.dataset.ui = '';
    btn.textContent = 'Copy';
    btn.setAttribute('aria-label', 'Copy code');
    pre.append(btn);
  }
}

// One listener for the controls inside rendered answers.
function onAnswerClick(e) {
  const copy = e.target.closest('.copy-code');
  if (copy) {
    const code = copy.parentElement.querySelector('code');
    copyText(code ? code.textContent : '', copy);
    return;
  }
  // A sub-agent's widget folds its nested calls away, and back.
  const widget = e.target.closest('.toolcall');
  if (widget && widget.querySelector(':scope > .toolcall__children') && !e.target.closest('.toolcall__children')) {
    const folded = widget.hasAttribute('data-ui-folded');
    if (folded) widget.removeAttribute('data-ui-folded');
    else widget.setAttribute('data-ui-folded', '');
  }
}

// ---------------------------------------------------------------- sidebar

async function loadConversations() {
  const data = await api('GET', '/api/conversations');
  state.conversations = data.conversations || [];
  renderConversationList();
}

function renderConversationList() {
  els.list.replaceChildren();
  for (const c of state.conversations) {
    const li = document.createElement('li');
    li.className = 'conversation' + (c.id === state.currentId ? ' conversation--current' : '');
    const open = document.createElement('a');
    open.className = 'conversation__open';
    open.href = '#' + encodeURIComponent(c.id);
    const title = document.createElement('span');
    title.className = 'conversation__title';
    title.textContent = c.title || 'Untitled conversation';
    open.title = c.title || '';
    open.append(title, timeEl(c.updatedAt || c.createdAt, 'conversation__time'));
    if (c.id === state.currentId) open.setAttribute('aria-current', 'page');
    open.addEventListener('click', () => closeSidebar());
    const del = document.createElement('button');
    del.type = 'button';
    del.className = 'conversation__delete';
    del.textContent = '×';
    del.setAttribute('aria-label', 'Delete conversation ' + (c.title || c.id));
    del.addEventListener('click', () => deleteConversation(c.id));
    li.append(open, del);
    els.list.append(li);
  }
}

async function deleteConversation(id) {
  if (!window.confirm('Delete this conversation?')) return;
  try {
    await api('DELETE', '/api/conversations/' + encodeURIComponent(id));
    if (id === state.currentId) {
      showNewConversation();
      setHash('');
    }
    await loadConversations();
  } catch (e) {
    showError('Could not delete the conversation: ' + e.message);
  }
}

function setHash(id) {
  const want = id ? '#' + encodeURIComponent(id) : '';
  if (location.hash !== want) history.pushState(null, '', want || location.pathname);
}

/** showNewConversation shows the empty page of a conversation not yet started. */
function showNewConversation() {
  stopFollowing();
  state.loadSeq++;
  state.currentId = null;
  renderConversationList();
  renderMessages([]);
  setTodos([], '');
  els.title.textContent = 'New conversation';
}

function newConversation() {
  showError('');
  showNewConversation();
  setHash('');
  closeSidebar();
  els.input.focus();
}

function openSidebar() {
  els.app.classList.add('app--sidebar-open');
  els.menu.setAttribute('aria-expanded', 'true');
  els.scrim.hidden = false;
}

function closeSidebar() {
  els.app.classList.remove('app--sidebar-open');
  els.menu.setAttribute('aria-expanded', 'false');
  els.scrim.hidden = true;
}

// ---------------------------------------------------------------- messages

function messageShell(role, createdAt) {
  const art = document.createElement('article');
  art.className = 'message message--' + role;
  const head = document.createElement('header');
  head.className = 'message__head';
  const who = document.createElement('h2');
  who.className = 'message__role';
  who.textContent = role === 'user' ? 'You' : 'Assistant';
  head.append(who);
  if (createdAt) head.append(timeEl(createdAt, 'message__time'));
  const body = document.createElement('div');
  body.className = 'message__body';
  art.append(head, body);
  return { art, body };
}

/** answerFooter adds the copy button under an answer. */
function answerFooter(art, body) {
  const foot = document.createElement('footer');
  foot.className = 'message__foot';
  const btn = document.createElement('button');
  btn.type = 'button';
  btn.className = 'btn btn--small btn--ghost copy-answer';
  btn.textContent = 'Copy answer';
  btn.addEventListener('click', () => copyText(plainText(body), btn));
  foot.append(btn);
  art.append(foot);
  return foot;
}

const NOTES = { failed: 'The answer failed.', interrupted: 'The answer was interrupted.', cancelled: 'Stopped.' };

function renderStoredMessage(m) {
  const { art, body } = messageShell(m.role, m.createdAt);
  art.dataset.messageId = m.id;
  art.dataset.status = m.status;
  if (m.role === 'user') {
    body.classList.add('message__body--plain');
    body.textContent = m.content; // what the user typed, as text
    return art;
  }
  body.classList.add('markdown');
  body.append(...parseHTML(m.html || '')); // rendered and sanitised by the server
  decorate(body);
  if (NOTES[m.status]) {
    const note = document.createElement('p');
    note.className = 'message__note';
    note.textContent = NOTES[m.status];
    art.append(note);
  }
  answerFooter(art, body);
  return art;
}

function renderMessages(messages) {
  els.messages.replaceChildren(els.empty, ...messages.map(renderStoredMessage));
  els.empty.hidden = messages.length > 0;
  scrollToEnd(true);
}

let scrollPending = false;

/** scrollToEnd keeps the newest text in view, at most once a frame, unless
 * the reader has scrolled up (force scrolls anyway). */
function scrollToEnd(force) {
  const m = els.messages;
  if (force) {
    m.scrollTop = m.scrollHeight;
    return;
  }
  if (scrollPending) return;
  const near = m.scrollHeight - m.scrollTop - m.clientHeight < 160;
  if (!near) return;
  scrollPending = true;
  requestAnimationFrame(() => {
    scrollPending = false;
    m.scrollTop = m.scrollHeight;
  });
}

const TODO_MARKS = { done: '✓', in_progress: '◐', cancelled: '⊘', interrupted: '!' };
const TODO_WORDS = { done: 'done', in_progress: 'in progress', cancelled: 'cancelled', interrupted: 'interrupted' };

/**
 * setTodos draws the plan: a checklist that folds away, with how many items
 * are done. turnStatus is the status of the turn the plan belongs to: once
 * it has ended nothing is in progress any more, so items it left open show
 * as it ended (the server stores them so; older answers may not).
 */
function setTodos(todos, turnStatus) {
  els.todoList.replaceChildren();
  const list = todos || [];
  const ended = { cancelled: 'cancelled', failed: 'interrupted', interrupted: 'interrupted', completed: 'interrupted' }[turnStatus];
  let done = 0;
  for (const t of list) {
    let st = t.status || 'pending';
    if (ended && (st === 'pending' || st === 'in_progress')) st = ended;
    if (st === 'done') done++;
    const li = document.createElement('li');
    li.className = 'todo todo--' + st;
    const mark = document.createElement('span');
    mark.className = 'todo__mark';
    mark.setAttribute('aria-hidden', 'true');
    mark.textContent = TODO_MARKS[st] || '○';
    const text = document.createElement('span');
    text.className = 'todo__text';
    text.textContent = t.text;
    const sr = document.createElement('span');
    sr.className = 'visually-hidden';
    sr.textContent = ' (' + (TODO_WORDS[st] || 'to do') + ')';
    li.dataset.status = st;
    li.append(mark, text, sr);
    els.todoList.append(li);
  }
  els.todoCount.textContent = list.length ? `${done}/${list.length} done` : '';
  els.todos.hidden = list.length === 0;
}

async function selectConversation(id, { quiet } = {}) {
  stopFollowing();
  closeSidebar();
  if (!quiet) showError('');
  state.currentId = id;
  const seq = ++state.loadSeq;
  renderConversationList();
  let data;
  try {
    data = await api('GET', '/api/conversations/' + encodeURIComponent(id));
  } catch (e) {
    if (seq !== state.loadSeq) return;
    if (e.status === 404) {
      showNewConversation();
      setHash('');
      if (!quiet) showError('That conversation no longer exists.');
      return;
    }
    showError('Could not load the conversation: ' + e.message);
    return;
  }
  if (seq !== state.loadSeq) return; // another one was selected meanwhile
  showConversation(data);
}

/** showConversation draws a fetched conversation and follows its active turn. */
function showConversation(data) {
  stopFollowing();
  els.title.textContent = data.conversation.title || 'Untitled conversation';
  const messages = data.messages || [];
  const active = data.activeTurn;
  const lastAssistant = [...messages].reverse().find((m) => m.role === 'assistant');
  if (active) {
    // The active turn's answer is followed live: the stream's first render
    // frame holds it whole.
    const idx = messages.findIndex((m) => m.role === 'assistant' && m.turnId === active.id);
    const stored = idx >= 0 ? messages[idx] : null;
    renderMessages(idx >= 0 ? messages.slice(0, idx).concat(messages.slice(idx + 1)) : messages);
    setTodos(stored ? stored.todos : [], '');
    follow(active.id, stored ? stored.seq || 0 : 0, stored ? stored.html : '');
  } else {
    renderMessages(messages);
    setTodos(lastAssistant ? lastAssistant.todos : [], lastAssistant ? turnStatusOf(lastAssistant.status) : '');
  }
  setBusy(!!active);
}

/** turnStatusOf maps a message status to the status of its turn. */
const turnStatusOf = (s) => ({ complete: 'completed', completed: 'completed', failed: 'failed', cancelled: 'cancelled', interrupted: 'interrupted' })[s] || '';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- live turns

const TERMINAL = new Set(['turn_completed', 'turn_failed', 'turn_cancelled']);
const EVENT_TYPES = [
  'turn_queued', 'turn_started', 'round_started', 'text_delta',
  'tool_call_started', 'tool_call_delta', 'tool_call_running', 'tool_call_success', 'tool_call_error',
  'todo_update', 'subagent_status', 'snapshot', 'turn_completed', 'turn_failed', 'turn_cancelled',
];

/**
 * follow shows turn `turnId` live. after is the seq its stored message
 * reflects (html its rendering, shown until the first render frame).
 */
function follow(turnId, after, html) {
  stopFollowing();
  const { art, body } = messageShell('assistant', new Date().toISOString());
  art.classList.add('message--live');
  art.dataset.turnId = turnId;
  body.classList.add('markdown', 'live');
  const bubble = document.createElement('div');
  bubble.className = 'bubble';
  bubble.setAttribute('role', 'status');
  bubble.setAttribute('aria-live', 'polite');
  const dots = document.createElement('span');
  dots.className = 'bubble__dots';
  dots.setAttribute('aria-hidden', 'true');
  dots.append(document.createElement('i'), document.createElement('i'), document.createElement('i'));
  const text = document.createElement('span');
  text.className = 'bubble__text';
  bubble.append(dots, text);
  bubble.hidden = true;
  body.before(bubble);
  els.messages.append(art);
  els.empty.hidden = true;
  const blocks = new LiveBlocks(body);
  if (html) blocks.apply({ reset: true, count: 1, blocks: [{ i: 0, html }] });
  decorate(body);
  body.classList.toggle('message__body--empty', !html);
  const live = {
    turnId,
    conversationId: state.currentId,
    lastSeq: after || 0,
    es: null,
    blocks,
    art,
    body,
    bubble,
    bubbleText: text,
    status: '', // the server's status bubble
    notice: '', // the page's own: reconnecting, recovering
    done: false,
    retries: 0,
    timer: null,
    todos: [],
  };
  if (!after && !html) {
    // A turn just sent: the model is at work before the stream's first
    // frame can say so.
    live.status = 'Thinking…';
    showBubble(live);
  }
  live.finalFrame = new Promise((resolve) => {
    live.gotFinal = resolve;
  });
  state.live = live;
  setBusy(true);
  openStream(live);
  scrollToEnd(true);
}

function showBubble(live) {
  const msg = live.notice || live.status;
  live.bubbleText.textContent = msg;
  live.bubble.hidden = !msg;
  live.bubble.classList.toggle('bubble--notice', !!live.notice);
}

function openStream(live) {
  if (live.done) return;
  const q = new URLSearchParams({ render: 'html' });
  if (live.lastSeq > 0) q.set('after', String(live.lastSeq));
  const es = new EventSource('/api/turns/' + encodeURIComponent(live.turnId) + '/events?' + q);
  live.es = es;
  const handler = (ev) => onStreamEvent(live, es, ev);
  for (const t of EVENT_TYPES) es.addEventListener(t, handler);
  es.addEventListener('render', (ev) => onRenderFrame(live, es, ev));
  es.addEventListener('open', () => {
    if (live.es !== es) return;
    live.retries = 0;
    setStreamStatus('');
    if (live.lost) {
      // Back after a drop: if the answer does not move on, the server
      // that wrote it is gone, and another one will finish it.
      live.lost = false;
      watchRecovery(live);
    }
  });
  es.addEventListener('error', () => {
    if (live.done || live.es !== es) return;
    live.lost = true;
    if (es.readyState === EventSource.CLOSED) {
      // The browser gave up (an error answer, or the server is away):
      // reconnect ourselves from the last seq, with backoff.
      scheduleReconnect(live);
    } else {
      setStreamStatus('Connection lost — reconnecting…');
      checkTurn(live);
    }
  });
}

/**
 * watchRecovery runs after a reconnection: if the answer stays silent, the
 * server that was writing it may be gone. The turn says so when the server
 * reports it ("recovering"); otherwise the page says it is waiting.
 */
function watchRecovery(live) {
  clearTimeout(live.recoverTimer);
  const seq = live.lastSeq;
  live.recoverTimer = setTimeout(async () => {
    if (live.done || live.lastSeq !== seq) return;
    await checkTurn(live);
    if (!live.done && live.lastSeq === seq && !live.notice) setNotice(live, 'Waiting for the answer to continue…');
  }, 5000);
}

function setNotice(live, msg) {
  live.notice = msg;
  showBubble(live);
}

/** checkTurn asks the server about the turn; it may end the live view. */
async function checkTurn(live) {
  if (live.checking) return;
  live.checking = true;
  try {
    const t = await api('GET', '/api/turns/' + encodeURIComponent(live.turnId));
    if (!t || !t.turn || live.done) return;
    if (isTurnFinal(t.turn.status)) finishTurn(live);
    else if (t.turn.recovering) setNotice(live, RECOVERING);
  } catch (e) {
    if (e.status === 404 || e.status === 401) {
      live.done = true;
      if (live.es) live.es.close();
      setStreamStatus('');
      setBusy(false);
      showError(e.status === 404 ? 'This answer is no longer available.' : 'Please sign in again.');
    }
  } finally {
    live.checking = false;
  }
}

function scheduleReconnect(live) {
  if (live.done) return;
  if (live.es) live.es.close();
  live.es = null;
  live.retries++;
  const delay = Math.min(1000 * 2 ** Math.min(live.retries - 1, 4), 15000);
  setStreamStatus('Connection lost — reconnecting…');
  clearTimeout(live.timer);
  live.timer = setTimeout(async () => {
    if (live.done) return;
    await checkTurn(live);
    if (!live.done) openStream(live);
  }, delay);
}

const RECOVERING = 'The server writing this answer stopped. Recovering the answer…';

const isTurnFinal = (s) => ['completed', 'failed', 'cancelled', 'interrupted'].includes(s);

function onRenderFrame(live, es, msg) {
  if (live.done && !live.finishing) return;
  if (live.es !== es && !live.finishing) return;
  let f;
  try {
    f = JSON.parse(msg.data);
  } catch {
    return;
  }
  live.blocks.apply(f);
  decorate(live.body);
  live.body.classList.toggle('message__body--empty', live.blocks.serverHTML() === '');
  if (f.final) {
    live.final = true;
    live.gotFinal();
  }
  live.status = f.status || '';
  showBubble(live); // (f.seq may be ahead of the events received: lastSeq follows the events only)
  scrollToEnd(false);
}

function onStreamEvent(live, es, msg) {
  if (live.done || live.es !== es) return;
  let ev;
  try {
    ev = JSON.parse(msg.data);
  } catch {
    return;
  }
  const type = ev.type || msg.type;
  const d = ev.data || {};
  if (type === 'snapshot') {
    if (d.todos) setTodos(d.todos, '');
    live.lastSeq = d.seq || ev.seq || live.lastSeq;
    if (isTurnFinal(d.status)) finishTurn(live);
    return;
  }
  if (typeof ev.seq !== 'number' || ev.seq <= live.lastSeq) return; // already applied
  live.lastSeq = ev.seq;
  clearTimeout(live.recoverTimer);
  if (live.notice) setNotice(live, '');
  switch (type) {
    case 'turn_queued':
      setStreamStatus(d.position > 0 ? `Waiting for a free slot (position ${d.position})…` : '');
      break;
    case 'turn_started':
      setStreamStatus('');
      break;
    case 'todo_update':
      live.todos = d.todos || [];
      setTodos(live.todos, '');
      break;
  }
  if (TERMINAL.has(type)) {
    live.endData = d;
    finishTurn(live, es);
  }
}

async function finishTurn(live, es) {
  if (live.finishing) return;
  live.done = true;
  live.finishing = true;
  clearTimeout(live.timer);
  clearTimeout(live.recoverTimer);
  // The terminal event's render frame follows it on the stream: wait for
  // it (briefly), then close the stream so that EventSource does not
  // reconnect.
  if (es) await Promise.race([live.finalFrame, sleep(2000)]);
  if (live.es) live.es.close();
  live.es = null;
  live.notice = '';
  live.status = '';
  showBubble(live);
  setStreamStatus('');
  if (state.live === live) state.live = null;
  setBusy(false);
  const status = (live.endData && live.endData.status) || '';
  if (status === 'failed' && live.endData.error) showError('The answer failed: ' + live.endData.error);
  els.announce.textContent = { completed: 'Answer complete.', cancelled: 'Answer stopped.', failed: 'The answer failed.' }[status] || '';
  live.art.classList.remove('message--live');
  live.art.classList.add('message--ended');
  await showStoredAnswer(live);
  loadConversations().catch(() => {});
}

/**
 * showStoredAnswer puts the stored message in place of the live one. When
 * the stored html is the HTML the live view already shows — what the
 * server's renderer guarantees — the DOM is kept as it is.
 */
async function showStoredAnswer(live) {
  for (let attempt = 0; ; attempt++) {
    if (state.currentId !== live.conversationId || state.live) return;
    try {
      const data = await api('GET', '/api/conversations/' + encodeURIComponent(live.conversationId));
      if (state.currentId !== live.conversationId || state.live) return;
      setStreamStatus('');
      const m = (data.messages || []).find((x) => x.role === 'assistant' && x.turnId === live.turnId);
      if (!m || data.activeTurn) {
        showConversation(data);
        return;
      }
      const same = m.html === live.blocks.serverHTML();
      if (live.final && !same) console.error('the live answer differs from the stored one');
      const fresh = renderStoredMessage(m);
      if (same) {
        // Keep the live body (and its widgets' state); take the rest.
        const body = fresh.querySelector('.message__body');
        body.replaceWith(live.body);
        live.body.classList.remove('live', 'message__body--empty');
        const copy = fresh.querySelector('.copy-answer');
        const fresh2 = copy.cloneNode(true);
        fresh2.addEventListener('click', () => copyText(plainText(live.body), fresh2));
        copy.replaceWith(fresh2);
      }
      live.bubble.remove();
      live.art.replaceWith(fresh);
      scrollToEnd(false);
      els.title.textContent = data.conversation.title || els.title.textContent;
      setTodos(m.todos && m.todos.length ? m.todos : live.todos, turnStatusOf(m.status));
      return;
    } catch (e) {
      if (e instanceof APIError) {
        setStreamStatus('');
        if (e.status !== 404) showError('Could not load the final answer: ' + e.message);
        return;
      }
      setStreamStatus('Connection lost — the final answer will show when it is back…');
      await sleep(Math.min(1000 * 2 ** attempt, 10000));
    }
  }
}

function stopFollowing() {
  const live = state.live;
  if (!live) return;
  live.done = true;
  clearTimeout(live.timer);
  clearTimeout(live.recoverTimer);
  if (live.es) live.es.close();
  live.es = null;
  state.live = null;
  setStreamStatus('');
  setBusy(false);
}

function setBusy(busy) {
  els.stop.hidden = !busy;
  els.stop.disabled = false;
  els.stop.textContent = 'Stop';
  els.send.hidden = busy;
  els.send.disabled = busy;
  els.form.setAttribute('aria-busy', busy ? 'true' : 'false');
}

// ---------------------------------------------------------------- sending

async function send() {
  const text = els.input.value;
  if (!text.trim() || state.live) return;
  showError('');
  els.send.disabled = true;
  try {
    if (!state.currentId) {
      const title = shortTitle(text);
      const data = await api('POST', '/api/conversations', { title });
      state.currentId = data.conversation.id;
      state.loadSeq++;
      setHash(state.currentId);
      els.title.textContent = data.conversation.title || title;
      loadConversations().catch(() => {});
    }
    const key = crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random();
    const data = await api('POST', '/api/conversations/' + encodeURIComponent(state.currentId) + '/turns', { content: text }, { 'Idempotency-Key': key });
    els.input.value = '';
    const { art, body } = messageShell('user', new Date().toISOString());
    body.classList.add('message__body--plain');
    body.textContent = text;
    art.dataset.messageId = data.turn.userMessageId;
    els.messages.append(art);
    setTodos([], '');
    follow(data.turn.id, 0, '');
  } catch (e) {
    els.send.disabled = false;
    if (e.code === 'conflict') showError('An answer is still being written in this conversation.');
    else showError('Could not send the message: ' + e.message);
  }
}

async function stopTurn() {
  const live = state.live;
  if (!live) return;
  els.stop.disabled = true;
  els.stop.textContent = 'Stopping…';
  try {
    await api('POST', '/api/turns/' + encodeURIComponent(live.turnId) + '/cancel', {});
  } catch (e) {
    els.stop.disabled = false;
    els.stop.textContent = 'Stop';
    showError('Could not stop the answer: ' + e.message);
  }
}

// ---------------------------------------------------------------- routing

/** route shows the conversation the URL's fragment names. */
async function route() {
  const id = decodeURIComponent(location.hash.slice(1));
  if (id === (state.currentId || '')) return;
  if (id) await selectConversation(id);
  else newConversation();
}

// ---------------------------------------------------------------- start-up

async function start() {
  els.form.addEventListener('submit', (e) => {
    e.preventDefault();
    send();
  });
  els.input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  els.stop.addEventListener('click', stopTurn);
  els.newBtn.addEventListener('click', newConversation);
  els.menu.addEventListener('click', () => (els.app.classList.contains('app--sidebar-open') ? closeSidebar() : openSidebar()));
  els.scrim.addEventListener('click', closeSidebar);
  els.messages.addEventListener('click', onAnswerClick);
  els.examples.addEventListener('click', (e) => {
    const b = e.target.closest('.example');
    if (!b) return;
    els.input.value = b.textContent;
    send();
  });
  window.addEventListener('hashchange', () => route());
  window.addEventListener('popstate', () => route());
  els.signOut.addEventListener('click', async () => {
    stopFollowing();
    await api('DELETE', '/api/session').catch(() => {});
    location.hash = '';
    location.reload();
  });
  els.loginForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await api('POST', '/api/session', { token: els.token.value.trim() });
      els.token.value = '';
      els.login.hidden = true;
      els.app.hidden = false;
      await boot();
    } catch (err) {
      showLoginError(err.status === 401 ? 'That token was not accepted.' : err.message);
    }
  });
  await boot();
}

function showLoginError(msg) {
  const p = $('#login-error');
  p.textContent = msg;
  p.hidden = !msg;
}

async function boot() {
  let info;
  try {
    info = await api('GET', '/api/info');
  } catch (e) {
    if (e.status === 401) {
      els.app.hidden = true;
      els.login.hidden = false;
      els.token.focus();
      return;
    }
    showError('The server is not answering: ' + e.message);
    return;
  }
  els.banner.hidden = !info.demo;
  els.kbBanner.hidden = !(info.documents === 0);
  els.signOut.hidden = info.auth !== 'token';
  els.model.textContent = info.model ? 'Model: ' + info.model : '';
  try {
    await loadConversations();
  } catch (e) {
    showError('Could not load the conversations: ' + e.message);
  }
  const fromHash = decodeURIComponent(location.hash.slice(1));
  if (fromHash) await selectConversation(fromHash);
  else showNewConversation();
  document.body.dataset.ready = 'true'; // for the browser tests
}

start();
