// toolcall.js — the page's view of the ToolCall markup: reading an opening
// tag's attributes, splitting stored content into text and tool calls,
// undoing the neutralisation of model text, the widgets' status texts, and
// building a widget with the same structure and classes as the server's
// renderer (package markdown), so one stylesheet serves both.
//
// Nothing here uses innerHTML: every string ends up in textContent or an
// attribute.

export const STATUSES = ['pending', 'running', 'success', 'error', 'cancelled'];
const FINAL = new Set(['success', 'error', 'cancelled']);
export const isFinal = (s) => FINAL.has(s);

/** normStatus maps an unknown status to pending, as the server does. */
export function normStatus(s) {
  return STATUSES.includes(s) ? s : 'pending';
}

/** decodeEntities decodes the character references the markup writes. */
export function decodeEntities(v) {
  return v.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|amp|lt|gt|quot|apos|#39);/g, (m, ref) => {
    switch (ref) {
      case 'amp': return '&';
      case 'lt': return '<';
      case 'gt': return '>';
      case 'quot': return '"';
      case 'apos': return "'";
    }
    const n = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    if (!Number.isFinite(n) || n <= 0 || n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return '\uFFFD';
    return String.fromCodePoint(n);
  });
}

/**
 * parseOpenTag reads `<ToolCall key="value" …>` starting at s[start].
 * Returns {call, end} (end just past ">") or null when the text there is
 * not a genuine tag: wrong case, a line break between attributes, a "<" or
 * a control character other than tab and line breaks in a value, a missing
 * type, status or toolCallId.
 */
export function parseOpenTag(s, start = 0) {
  const lit = '<ToolCall';
  if (!s.startsWith(lit, start)) return null;
  let i = start + lit.length;
  const attrs = [];
  for (;;) {
    if (s[i] === '>') { i++; break; }
    if (s[i] !== ' ') return null;
    while (s[i] === ' ') i++;
    if (s[i] === '>') { i++; break; }
    const m = /^([A-Za-z_][A-Za-z0-9_.:-]*)="([^"<>\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*)"/.exec(s.slice(i, i + 4096));
    if (!m) return null;
    attrs.push([m[1], decodeEntities(m[2])]);
    i += m[0].length;
  }
  const call = { id: '', type: '', status: '', error: '', parentId: '', attrs: {} };
  for (const [k, v] of attrs) {
    switch (k) {
      case 'type': call.type = v; break;
      case 'status': call.status = v; break;
      case 'toolCallId': call.id = v; break;
      case 'parentToolCallId': call.parentId = v; break;
      case 'error': call.error = v; break;
      default: call.attrs[k] = v;
    }
  }
  if (!call.type || !call.id || !STATUSES.includes(call.status)) return null;
  return { call, end: i };
}

/** parseMarkup reads the `markup` field of a tool_call_* event. */
export function parseMarkup(markup) {
  const r = typeof markup === 'string' ? parseOpenTag(markup, 0) : null;
  return r ? r.call : null;
}

/**
 * scanContent splits stored content into a tree: a list of nodes, each
 * {text} or {call, children}. Mirrors toolcallmarkup.Scan: anything that is
 * not a genuine tag is text, and a "</ToolCall>" with nothing open is text.
 */
export function scanContent(content) {
  const root = { children: [] };
  const stack = [root];
  let pos = 0;
  let textStart = 0;
  const pushText = (end) => {
    if (end > textStart) stack[stack.length - 1].children.push({ text: content.slice(textStart, end) });
  };
  while (pos < content.length) {
    const k = content.indexOf('ToolCall', pos);
    if (k < 0) break;
    if (k >= 1 && content[k - 1] === '<') {
      const r = parseOpenTag(content, k - 1);
      if (r) {
        pushText(k - 1);
        const parent = stack[stack.length - 1];
        if (!r.call.parentId && parent.call) r.call.parentId = parent.call.id;
        const node = { call: r.call, children: [] };
        parent.children.push(node);
        stack.push(node);
        pos = textStart = r.end;
        continue;
      }
    } else if (k >= 2 && content[k - 2] === '<' && content[k - 1] === '/' && content[k + 8] === '>' && stack.length > 1) {
      pushText(k - 2);
      stack.pop();
      pos = textStart = k + 9;
      continue;
    }
    pos = k + 8;
  }
  textStart = Math.min(textStart, content.length);
  pushText(content.length);
  return root.children;
}

/**
 * restoreText undoes the neutralisation of model text (toolcallmarkup
 * RestoreText): "&lt;" in front of a ToolCall name becomes "<" and each
 * longer "&amp;…lt;" loses one "amp;". Used for the live plain-text view.
 */
export function restoreText(s) {
  return s.replace(/&((?:amp;)*)lt;(?=\/?[Tt][Oo][Oo][Ll][Cc][Aa][Ll][Ll])/g, (m, amps) => (amps ? '&' + amps.slice(4) + 'lt;' : '<'));
}

const DISPLAY_LIMIT = 60;
const ERROR_LIMIT = 300;

/** truncate cuts s to n code points, ending it with "…" when cut. */
export function truncate(s, n = DISPLAY_LIMIT) {
  const cps = Array.from(s);
  return cps.length <= n ? s : cps.slice(0, n - 1).join('') + '…';
}

function truncateBytes(s, n) {
  const enc = new TextEncoder();
  if (enc.encode(s).length <= n) return s;
  let out = '';
  let used = 0;
  for (const ch of s) {
    const l = enc.encode(ch).length;
    if (used + l > n - 3) break;
    out += ch;
    used += l;
  }
  return out + '…';
}

const quoted = (s) => '"' + truncate(s) + '"';
const lowerFirst = (s) => (s ? s[0].toLowerCase() + s.slice(1) : s);

function searchText(running, done, results, noun) {
  return (tc) => {
    const q = tc.attrs.query || '';
    switch (normStatus(tc.status)) {
      case 'pending': return 'Preparing ' + lowerFirst(noun) + '…';
      case 'running': return q ? `${running} for ${quoted(q)}…` : running + '…';
      case 'success': {
        const c = tc.attrs.count;
        const n = /^[0-9]+$/.test(c || '') ? parseInt(c, 10) : NaN;
        if (Number.isNaN(n)) return q ? `${done} for ${quoted(q)}` : done;
        const word = n === 1 ? results.slice(0, -1) : results;
        return `Found ${n} ${word}` + (q ? ` for ${quoted(q)}` : '');
      }
      case 'error': return noun + ' failed';
      default: return noun + ' cancelled';
    }
  };
}

function fetchText(tc) {
  const u = truncate(tc.attrs.url || '');
  switch (normStatus(tc.status)) {
    case 'pending': return 'Preparing to fetch a page…';
    case 'running': return u ? `Fetching ${u}…` : 'Fetching a page…';
    case 'success': return u ? `Fetched ${u}` : 'Fetched a page';
    case 'error': return u ? `Could not fetch ${u}` : 'Fetch failed';
    default: return 'Fetch cancelled';
  }
}

function subagentText(tc) {
  const task = tc.attrs.task || '';
  switch (normStatus(tc.status)) {
    case 'pending': return 'Starting a sub-agent…';
    case 'running': return task ? `Sub-agent working on ${quoted(task)}…` : 'Sub-agent working…';
    case 'success': return task ? `Sub-agent finished ${quoted(task)}` : 'Sub-agent finished';
    case 'error': return 'Sub-agent failed';
    default: return 'Sub-agent cancelled';
  }
}

function todoText(tc) {
  switch (normStatus(tc.status)) {
    case 'pending': return 'Preparing the plan…';
    case 'running': return 'Updating the plan…';
    case 'success': {
      const c = tc.attrs.count;
      return /^[0-9]+$/.test(c || '') ? `Plan updated (${parseInt(c, 10)} items)` : 'Plan updated';
    }
    case 'error': return 'Plan update failed';
    default: return 'Plan update cancelled';
  }
}

function genericText(tc) {
  const name = truncate(tc.type || 'tool');
  switch (normStatus(tc.status)) {
    case 'pending': return `Preparing ${name}…`;
    case 'running': return `Running ${name}…`;
    case 'success': return `${name} finished`;
    case 'error': return `${name} failed`;
    default: return `${name} cancelled`;
  }
}

const STATUS_TEXTS = {
  search_documents: searchText('Searching knowledge base', 'Searched knowledge base', 'results', 'Search'),
  web_search: searchText('Searching the web', 'Searched the web', 'web results', 'Web search'),
  fetch_url: fetchText,
  subagent: subagentText,
  todo_list: todoText,
};

/** statusText is the line a widget shows, the same as the server's. */
export function statusText(tc) {
  return (STATUS_TEXTS[tc.type] || genericText)(tc);
}

const LABELS = { pending: 'Pending', running: 'Running', success: 'Succeeded', error: 'Failed', cancelled: 'Cancelled' };
const ICONS = {
  pending: ['spinner', ''],
  running: ['spinner', ''],
  success: ['success', '✓'],
  error: ['error', '✗'],
  cancelled: ['cancelled', '⊘'],
};

/**
 * renderWidget creates or updates, in place, the widget element of a tool
 * call: the server renderer's block form
 *   <div class="toolcall toolcall--S" data-tool-call-id data-status
 *        data-tool-type role="status" aria-label>
 *     <span class="toolcall__icon toolcall__icon--K" aria-hidden="true">…</span>
 *     <span class="toolcall__text">…</span>
 *     [<span class="toolcall__error">…</span>]
 *     [<ul class="toolcall__children"><li class="toolcall__child">…</li></ul>]
 *   </div>
 */
export function renderWidget(tc, el) {
  const status = normStatus(tc.status);
  if (!el) el = document.createElement('div');
  el.className = 'toolcall toolcall--' + status;
  el.dataset.toolCallId = tc.id;
  if (tc.parentId) el.dataset.parentToolCallId = tc.parentId;
  el.dataset.status = status;
  el.dataset.toolType = tc.type;
  el.setAttribute('role', 'status');
  el.setAttribute('aria-label', LABELS[status] + ': ' + truncate(tc.type));

  let icon = el.querySelector(':scope > .toolcall__icon');
  if (!icon) {
    icon = document.createElement('span');
    icon.setAttribute('aria-hidden', 'true');
    el.prepend(icon);
  }
  const [kind, glyph] = ICONS[status];
  icon.className = 'toolcall__icon toolcall__icon--' + kind;
  icon.textContent = glyph;

  let text = el.querySelector(':scope > .toolcall__text');
  if (!text) {
    text = document.createElement('span');
    text.className = 'toolcall__text';
    icon.after(text);
  }
  text.textContent = statusText(tc);

  let err = el.querySelector(':scope > .toolcall__error');
  if (status === 'error' && tc.error) {
    if (!err) {
      err = document.createElement('span');
      err.className = 'toolcall__error';
      text.after(err);
    }
    err.textContent = truncateBytes(tc.error, ERROR_LIMIT);
  } else if (err) {
    err.remove();
  }
  return el;
}

/** childList returns (creating it) the list a widget's nested calls go in. */
export function childList(widget) {
  let ul = widget.querySelector(':scope > .toolcall__children');
  if (!ul) {
    ul = document.createElement('ul');
    ul.className = 'toolcall__children';
    widget.append(ul);
  }
  return ul;
}
