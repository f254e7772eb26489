// app.js — the toolmark page: conversations, messages, live turns.
//
// Stored messages are shown with the server's rendered, sanitised `html`
// (the only innerHTML in the page). A live turn is followed with
// EventSource and drawn with DOM APIs only: text as plain text, tool calls
// as widgets shaped like the server's. When the turn ends the conversation
// is fetched again and the server's html replaces the live view.

import { parseMarkup, scanContent, restoreText, renderWidget, childList, isFinal } from './toolcall.js';

const $ = (sel) => document.querySelector(sel);
const els = {
  list: $('#conversation-list'),
  newBtn: $('#new-conversation'),
  title: $('#conversation-title'),
  messages: $('#messages'),
  empty: $('#empty-state'),
  banner: $('#demo-banner'),
  error: $('#error-banner'),
  form: $('#composer'),
  input: $('#input'),
  send: $('#send'),
  stop: $('#stop'),
  todos: $('#todos'),
  todoList: $('#todo-list'),
  login: $('#login'),
  loginForm: $('#login-form'),
  token: $('#token'),
  app: $('#app'),
  status: $('#stream-status'),
  model: $('#model-name'),
  announce: $('#announce'),
  signOut: $('#sign-out'),
};

const state = {
  conversations: [],
  currentId: null,
  live: null, // the turn being followed, see follow()
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
  if (!msg) {
    els.error.hidden = true;
    els.error.textContent = '';
    return;
  }
  els.error.textContent = msg;
  els.error.hidden = false;
}

function setStreamStatus(msg) {
  els.status.textContent = msg || '';
  els.status.hidden = !msg;
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
    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'conversation__open';
    open.textContent = c.title || 'Untitled conversation';
    open.title = c.title || '';
    if (c.id === state.currentId) open.setAttribute('aria-current', 'page');
    open.addEventListener('click', () => selectConversation(c.id));
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
      stopFollowing();
      state.currentId = null;
      history.replaceState(null, '', location.pathname);
      renderMessages([]);
    }
    await loadConversations();
  } catch (e) {
    showError('Could not delete the conversation: ' + e.message);
  }
}

function newConversation() {
  stopFollowing();
  showError('');
  state.currentId = null;
  history.replaceState(null, '', location.pathname);
  renderConversationList();
  renderMessages([]);
  setTodos([]);
  els.title.textContent = 'New conversation';
  els.input.focus();
}

// ---------------------------------------------------------------- messages

function messageShell(role) {
  const art = document.createElement('article');
  art.className = 'message message--' + role;
  const who = document.createElement('h2');
  who.className = 'message__role';
  who.textContent = role === 'user' ? 'You' : 'Assistant';
  const body = document.createElement('div');
  body.className = 'message__body';
  art.append(who, body);
  return { art, body };
}

function renderStoredMessage(m) {
  const { art, body } = messageShell(m.role);
  art.dataset.messageId = m.id;
  art.dataset.status = m.status;
  if (m.role === 'user') {
    body.classList.add('message__body--plain');
    body.textContent = m.content; // what the user typed, as text
  } else {
    body.classList.add('markdown');
    body.innerHTML = m.html || ''; // sanitised by the server: the page's only innerHTML
    if (m.status === 'failed' || m.status === 'interrupted' || m.status === 'cancelled') {
      const note = document.createElement('p');
      note.className = 'message__note';
      note.textContent = { failed: 'The answer failed.', interrupted: 'The answer was interrupted.', cancelled: 'Stopped.' }[m.status];
      art.append(note);
    }
  }
  return art;
}

function renderMessages(messages) {
  els.messages.replaceChildren(...messages.map(renderStoredMessage));
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

function setTodos(todos) {
  els.todoList.replaceChildren();
  for (const t of todos || []) {
    const li = document.createElement('li');
    li.className = 'todo todo--' + (t.status || 'pending');
    const mark = document.createElement('span');
    mark.className = 'todo__mark';
    mark.setAttribute('aria-hidden', 'true');
    mark.textContent = { done: '✓', in_progress: '◐' }[t.status] || '○';
    const text = document.createElement('span');
    text.className = 'todo__text';
    text.textContent = t.text;
    const sr = document.createElement('span');
    sr.className = 'visually-hidden';
    sr.textContent = { done: ' (done)', in_progress: ' (in progress)' }[t.status] || ' (to do)';
    li.append(mark, text, sr);
    els.todoList.append(li);
  }
  els.todos.hidden = !todos || todos.length === 0;
}

async function selectConversation(id, { quiet } = {}) {
  stopFollowing();
  if (!quiet) showError('');
  state.currentId = id;
  history.replaceState(null, '', '#' + encodeURIComponent(id));
  renderConversationList();
  let data;
  try {
    data = await api('GET', '/api/conversations/' + encodeURIComponent(id));
  } catch (e) {
    if (e.status === 404) {
      state.currentId = null;
      history.replaceState(null, '', location.pathname);
      if (!quiet) showError('That conversation no longer exists.');
      renderMessages([]);
      return;
    }
    showError('Could not load the conversation: ' + e.message);
    return;
  }
  if (state.currentId !== id) return; // another one was selected meanwhile
  showConversation(data);
}

/** showConversation draws a fetched conversation and follows its active turn. */
function showConversation(data) {
  stopFollowing();
  els.title.textContent = data.conversation.title || 'Untitled conversation';
  const messages = data.messages || [];
  const active = data.activeTurn;
  const lastAssistant = [...messages].reverse().find((m) => m.role === 'assistant');
  setTodos(lastAssistant ? lastAssistant.todos : []);
  if (active) {
    // Stored messages, but the active turn's answer is followed live from
    // its stored content and seq.
    const idx = messages.findIndex((m) => m.role === 'assistant' && m.turnId === active.id);
    const stored = idx >= 0 ? messages[idx] : null;
    renderMessages(idx >= 0 ? messages.slice(0, idx).concat(messages.slice(idx + 1)) : messages);
    const base = stored && stored.seq > 0 ? { content: stored.content, seq: stored.seq } : { content: '', seq: 0 };
    follow(active.id, base);
  } else {
    renderMessages(messages);
  }
  setBusy(!!active);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * refreshAfterTurn replaces the live view of a finished turn by the
 * server's rendering, retrying while the network is away. Until then the
 * live view stays, with its final statuses.
 */
async function refreshAfterTurn(live) {
  for (let attempt = 0; ; attempt++) {
    if (state.currentId !== live.conversationId || state.live) return;
    try {
      const data = await api('GET', '/api/conversations/' + encodeURIComponent(live.conversationId));
      if (state.currentId !== live.conversationId || state.live) return;
      setStreamStatus('');
      showConversation(data);
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

// ---------------------------------------------------------------- live turns

/**
 * LiveView draws an answer as it streams: text segments (plain text) and
 * tool widgets, kept in the order of the content, nested calls inside their
 * parent's widget.
 */
class LiveView {
  constructor(container) {
    this.root = container;
    this.widgets = new Map();
    this.calls = new Map();
    this.lastText = null;
  }

  reset(content) {
    this.root.replaceChildren();
    this.widgets.clear();
    this.calls.clear();
    this.lastText = null;
    if (content) this.build(scanContent(content), this.root, null);
  }

  build(nodes, container, parent) {
    for (const n of nodes) {
      if (n.text !== undefined) {
        if (!parent) this.appendText(restoreText(n.text));
        continue; // text inside a tool element's body is not shown
      }
      this.addWidget(n.call, container, parent);
      if (n.children.length) this.build(n.children, null, n.call.id);
      this.lastText = null;
    }
  }

  appendText(text) {
    if (!text) return;
    if (!this.lastText) {
      this.lastText = document.createElement('div');
      this.lastText.className = 'live-text';
      this.lastText.hidden = true;
      this.lastText.raw = '';
      this.lastText.started = false;
      this.lastText.newlines = 0;
      this.root.append(this.lastText);
    }
    const seg = this.lastText;
    seg.raw += text;
    // The blank lines that separate text from tool calls in markdown would
    // show as gaps in plain text: newlines at the start of a segment are
    // dropped, newlines at its end wait for more text, and a run of them
    // shows as at most one blank line. Only the new part is appended, so a
    // long answer costs linear time.
    let out = '';
    for (const part of text.split(/(\n+)/)) {
      if (!part) continue;
      if (part[0] === '\n') {
        if (seg.started) seg.newlines += part.length;
        continue;
      }
      if (seg.newlines) out += seg.newlines > 1 ? '\n\n' : '\n';
      seg.newlines = 0;
      seg.started = true;
      out += part;
    }
    if (out) {
      seg.append(out);
      seg.hidden = seg.hidden && out.trim() === '';
    }
  }

  addWidget(call, container, parentId) {
    if (this.widgets.has(call.id)) return this.updateWidget(call);
    const el = renderWidget(call);
    this.widgets.set(call.id, el);
    this.calls.set(call.id, call);
    const pid = parentId || call.parentId;
    const parent = pid ? this.widgets.get(pid) : null;
    if (parent) {
      const li = document.createElement('li');
      li.className = 'toolcall__child';
      li.append(el);
      childList(parent).append(li);
    } else {
      (container || this.root).append(el);
      this.lastText = null;
    }
    return el;
  }

  updateWidget(call) {
    const el = this.widgets.get(call.id);
    if (!el) return this.addWidget(call, null, call.parentId);
    const prev = this.calls.get(call.id);
    // A final tag never changes again; statuses only move forward.
    if (prev && isFinal(prev.status) && prev.status !== call.status) return el;
    this.calls.set(call.id, call);
    renderWidget(call, el);
    return el;
  }

  /** finalizeOpen marks widgets still pending/running with the given status. */
  finalizeOpen(status) {
    for (const call of this.calls.values()) {
      if (!isFinal(call.status)) this.updateWidget({ ...call, status });
    }
  }
}

const TERMINAL = new Set(['turn_completed', 'turn_failed', 'turn_cancelled']);
const EVENT_TYPES = [
  'turn_queued', 'turn_started', 'round_started', 'text_delta',
  'tool_call_started', 'tool_call_delta', 'tool_call_running', 'tool_call_success', 'tool_call_error',
  'todo_update', 'subagent_status', 'snapshot', 'turn_completed', 'turn_failed', 'turn_cancelled',
];

/**
 * follow shows turn `turnId` live, starting from `base` ({content, seq}):
 * the events after base.seq are applied on top of base.content.
 */
function follow(turnId, base) {
  stopFollowing();
  const { art, body } = messageShell('assistant');
  art.classList.add('message--live');
  art.dataset.turnId = turnId;
  body.classList.add('live');
  els.messages.append(art);
  els.empty.hidden = true;
  const view = new LiveView(body);
  view.reset(base.content);
  const live = {
    turnId,
    conversationId: state.currentId,
    lastSeq: base.seq || 0,
    es: null,
    view,
    art,
    done: false,
    retries: 0,
    timer: null,
  };
  state.live = live;
  setBusy(true);
  openStream(live);
  scrollToEnd(true);
}

function openStream(live) {
  if (live.done) return;
  const url = '/api/turns/' + encodeURIComponent(live.turnId) + '/events' + (live.lastSeq > 0 ? '?after=' + live.lastSeq : '');
  const es = new EventSource(url);
  live.es = es;
  const handler = (ev) => onStreamEvent(live, es, ev);
  for (const t of EVENT_TYPES) es.addEventListener(t, handler);
  es.addEventListener('message', handler);
  es.addEventListener('open', () => {
    live.retries = 0;
    setStreamStatus('');
  });
  es.addEventListener('error', () => {
    if (live.done || live.es !== es) return;
    if (es.readyState === EventSource.CLOSED) {
      // The browser gave up (an error answer, or the server is away):
      // reconnect ourselves from the last seq, with backoff.
      scheduleReconnect(live);
    } else {
      setStreamStatus('Connection lost — reconnecting…');
    }
  });
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
    // Is the turn still there, and still running?
    try {
      const t = await api('GET', '/api/turns/' + encodeURIComponent(live.turnId));
      if (t && t.turn && isTurnFinal(t.turn.status)) {
        finishTurn(live);
        return;
      }
    } catch (e) {
      if (e.status === 404 || e.status === 401) {
        live.done = true;
        setStreamStatus('');
        setBusy(false);
        showError(e.status === 404 ? 'This answer is no longer available.' : 'Please sign in again.');
        return;
      }
    }
    openStream(live);
  }, delay);
}

const isTurnFinal = (s) => ['completed', 'failed', 'cancelled', 'interrupted'].includes(s);

function onStreamEvent(live, es, msg) {
  if (live.done || live.es !== es) return;
  let ev;
  try {
    ev = JSON.parse(msg.data);
  } catch {
    return;
  }
  const type = ev.type || msg.type;
  if (type === 'snapshot') {
    const d = ev.data || {};
    live.view.reset(d.content || '');
    if (d.todos) setTodos(d.todos);
    live.lastSeq = d.seq || ev.seq || live.lastSeq;
    if (isTurnFinal(d.status)) finishTurn(live);
    return;
  }
  if (typeof ev.seq !== 'number' || ev.seq <= live.lastSeq) return; // already applied
  if (ev.seq !== live.lastSeq + 1) {
    // A gap: never apply out of order; reconnect from what we have.
    scheduleReconnect(live);
    return;
  }
  live.lastSeq = ev.seq;
  applyEvent(live, type, ev.data || {});
  if (TERMINAL.has(type)) {
    es.close(); // the stream ends here: do not let EventSource reconnect
    live.endData = ev.data || {};
    finishTurn(live);
  }
  scrollToEnd(false);
}

function applyEvent(live, type, d) {
  const view = live.view;
  switch (type) {
    case 'turn_queued':
      setStreamStatus(d.position > 0 ? `Waiting for a free slot (position ${d.position})…` : '');
      break;
    case 'turn_started':
      setStreamStatus('');
      break;
    case 'text_delta':
      view.appendText(restoreText(d.text || ''));
      break;
    case 'tool_call_started':
    case 'tool_call_delta':
    case 'tool_call_running':
    case 'tool_call_success':
    case 'tool_call_error': {
      let call = parseMarkup(d.markup);
      if (!call) {
        call = { id: d.toolCallId, type: d.name, status: d.status, error: d.error || '', parentId: d.parentToolCallId || '', attrs: {} };
      }
      if (!call.parentId && d.parentToolCallId) call.parentId = d.parentToolCallId;
      // Arguments streamed before the tag has its attributes fill the text.
      if (d.arguments && typeof d.arguments === 'object') {
        for (const k of ['query', 'url', 'task']) {
          if (call.attrs[k] === undefined && typeof d.arguments[k] === 'string') call.attrs[k] = d.arguments[k];
        }
      }
      if (type === 'tool_call_started') view.addWidget(call, null, call.parentId);
      else view.updateWidget(call);
      break;
    }
    case 'todo_update':
      setTodos(d.todos);
      break;
    case 'turn_cancelled':
      view.finalizeOpen('cancelled');
      break;
    case 'turn_failed':
      view.finalizeOpen('error');
      break;
  }
}

async function finishTurn(live) {
  if (live.finishing) return;
  live.done = true;
  live.finishing = true;
  clearTimeout(live.timer);
  if (live.es) live.es.close();
  live.es = null;
  setStreamStatus('');
  if (state.live === live) state.live = null;
  setBusy(false);
  const status = (live.endData && live.endData.status) || '';
  if (status === 'failed' && live.endData.error) showError('The answer failed: ' + live.endData.error);
  els.announce.textContent = { completed: 'Answer complete.', cancelled: 'Answer stopped.', failed: 'The answer failed.' }[status] || '';
  live.art.classList.remove('message--live');
  live.art.classList.add('message--ended');
  // Replace the live view by the server's rendering of the stored message.
  await refreshAfterTurn(live);
  loadConversations().catch(() => {});
}

function stopFollowing() {
  const live = state.live;
  if (!live) return;
  live.done = true;
  clearTimeout(live.timer);
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
      const title = text.trim().replace(/\s+/g, ' ').slice(0, 60);
      const data = await api('POST', '/api/conversations', { title });
      state.currentId = data.conversation.id;
      history.replaceState(null, '', '#' + encodeURIComponent(state.currentId));
      els.title.textContent = data.conversation.title || title;
      loadConversations().catch(() => {});
    }
    const key = crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random();
    const data = await api('POST', '/api/conversations/' + encodeURIComponent(state.currentId) + '/turns', { content: text }, { 'Idempotency-Key': key });
    els.input.value = '';
    const { art, body } = messageShell('user');
    body.classList.add('message__body--plain');
    body.textContent = text;
    art.dataset.messageId = data.turn.userMessageId;
    els.messages.append(art);
    setTodos([]);
    follow(data.turn.id, { content: '', seq: 0 });
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
  els.signOut.hidden = info.auth !== 'token';
  els.model.textContent = info.model ? 'Model: ' + info.model : '';
  try {
    await loadConversations();
  } catch (e) {
    showError('Could not load the conversations: ' + e.message);
  }
  const fromHash = decodeURIComponent(location.hash.slice(1));
  if (fromHash) await selectConversation(fromHash);
  else newConversation();
  document.body.dataset.ready = 'true'; // for the browser tests
}

start();
