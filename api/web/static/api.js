// api.js — the client of toolmark's HTTP API (docs/api.md): one function
// per route the page uses. Errors are APIError values with the server's
// status, stable code and short sentence; a request that never reached the
// server has status 0 and code "offline". Every answer tells reach.js that
// the server can be reached.

import { sent, answered } from './reach.js';

export class APIError extends Error {
  constructor(status, code, message) {
    super(message || code || String(status));
    this.status = status;
    this.code = code || '';
  }

  /** retryable tells an error the same request may get past later. */
  get retryable() {
    return unreached(this.status);
  }
}

/** unreached tells a status that says the server was not reached (none, or a gateway's 502, 503, 504). */
const unreached = (status) => status === 0 || status === 502 || status === 503 || status === 504;

/** request sends one JSON request and returns the decoded answer (null for 204). */
export async function request(method, path, body, headers = {}) {
  const opts = { method, headers: { Accept: 'application/json', ...headers }, credentials: 'same-origin' };
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  let resp;
  const mark = sent();
  try {
    resp = await fetch(path, opts);
  } catch {
    throw new APIError(0, 'offline', 'The server cannot be reached.');
  }
  if (!unreached(resp.status)) answered(mark);
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

const enc = encodeURIComponent;

/** PAGE is how many conversations the sidebar asks for at a time. */
export const PAGE = 30;

export const api = {
  info: () => request('GET', '/api/info'),
  /** tools lists the tools the agent offers and the MCP servers' states. */
  tools: () => request('GET', '/api/tools'),
  signIn: (token) => request('POST', '/api/session', { token }),
  signOut: () => request('DELETE', '/api/session'),

  /** conversations returns a page of the list: {conversations, next}. */
  conversations: (after = '') => {
    const q = new URLSearchParams({ limit: String(PAGE) });
    if (after) q.set('after', after);
    return request('GET', '/api/conversations?' + q);
  },
  /** search returns a page of the conversations holding q, each with a snippet: {conversations, next}. */
  search: (q, after = '') => {
    const p = new URLSearchParams({ q, limit: String(PAGE) });
    if (after) p.set('after', after);
    return request('GET', '/api/conversations?' + p);
  },
  conversation: (id) => request('GET', '/api/conversations/' + enc(id)),
  /** conversationBefore reads the page of messages before the position before. */
  conversationBefore: (id, before) => request('GET', '/api/conversations/' + enc(id) + '?before=' + enc(before)),
  rename: (id, title) => request('PATCH', '/api/conversations/' + enc(id), { title }),
  /** exportURL is the conversation as a download: format "markdown" or "json". */
  exportURL: (id, format) => '/api/conversations/' + enc(id) + '/export?format=' + enc(format),
  createConversation: (title) => request('POST', '/api/conversations', title ? { title } : {}),
  deleteConversation: (id) => request('DELETE', '/api/conversations/' + enc(id)),

  /** startTurn sends a message; key makes a repeated request the same turn. */
  startTurn: (conversationId, content, key, model, attachments) =>
    request('POST', '/api/conversations/' + enc(conversationId) + '/turns',
      { content, ...(model ? { model } : {}), ...(attachments && attachments.length ? { attachments } : {}) }, { 'Idempotency-Key': key }),
  models: () => request('GET', '/api/models'),
  turn: (id) => request('GET', '/api/turns/' + enc(id)),
  cancelTurn: (id) => request('POST', '/api/turns/' + enc(id) + '/cancel', {}),

  /**
   * retry (a failed, stopped or interrupted answer), regenerate (a finished
   * one) and edit (a question) start a turn in place of the conversation's
   * tail: {turn, eventsUrl}; retry and regenerate take another model's id.
   */
  retry: (turnId, key, model) => request('POST', '/api/turns/' + enc(turnId) + '/retry', model ? { model } : {}, { 'Idempotency-Key': key }),
  regenerate: (turnId, key, model) => request('POST', '/api/turns/' + enc(turnId) + '/regenerate', model ? { model } : {}, { 'Idempotency-Key': key }),
  edit: (messageId, content, key) => request('POST', '/api/messages/' + enc(messageId) + '/edit', { content }, { 'Idempotency-Key': key }),
  /** selectVersion makes a question's version the conversation's, its branch with it. */
  selectVersion: (messageId) => request('POST', '/api/messages/' + enc(messageId) + '/select', {}),

  /** renderURL is the turn's stream of render frames (the page's only stream). */
  renderURL: (turnId) => '/api/turns/' + enc(turnId) + '/events?render=html',
};

/** newKey returns an idempotency key. */
export const newKey = () => (crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random());

export { sleep, backoff } from './reach.js';
