// dom.js — small DOM helpers shared by the page's modules: building
// elements (always with textContent, never HTML), times, the clipboard,
// the live announcements and the error banner.

export const $ = (sel) => document.querySelector(sel);

/**
 * make builds an element: make('button', {className: 'btn', type: 'button'}, 'Copy').
 * Properties are set as properties; "dataset" and "attrs" take objects.
 */
export function make(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'attrs') for (const [a, av] of Object.entries(v)) el.setAttribute(a, av);
    else el[k] = v;
  }
  el.append(...children.filter((c) => c !== null && c !== undefined));
  return el;
}

const timeFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dateFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
const fullFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** timeEl returns a <time> element: the time today, else the date. */
export function timeEl(iso, className) {
  const el = make('time', { className });
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return el;
  el.dateTime = d.toISOString();
  el.textContent = d.toDateString() === new Date().toDateString() ? timeFmt.format(d) : dateFmt.format(d);
  el.title = fullFmt.format(d);
  return el;
}

/** copyText copies text and says so on the button for a moment. */
export async function copyText(text, btn) {
  try {
    await navigator.clipboard.writeText(text);
    flash(btn, 'Copied');
  } catch {
    flash(btn, 'Copy failed');
  }
}

const flashTimers = new WeakMap();

function flash(btn, label) {
  const prev = btn.dataset.label || btn.textContent;
  btn.dataset.label = prev;
  btn.textContent = label;
  clearTimeout(flashTimers.get(btn));
  flashTimers.set(btn, setTimeout(() => {
    btn.textContent = prev;
  }, 1500));
}

/**
 * announce says msg to screen readers in the page's one live region
 * (#announce, polite). Nothing else on the page is a live region, so
 * nothing talks over it. At most one announcement every ANNOUNCE_GAP ms:
 * what comes meanwhile is said together after it, each message once,
 * with how many times it came.
 */
export function announce(msg) {
  if (!msg) return;
  said.queue.push(msg);
  if (!said.timer) sayQueued();
}

const ANNOUNCE_GAP = 1500;
const said = { queue: [], timer: 0 };

function sayQueued() {
  said.timer = 0;
  if (!said.queue.length) return;
  const counts = new Map();
  for (const m of said.queue) counts.set(m, (counts.get(m) || 0) + 1);
  said.queue = [];
  $('#announce').textContent = [...counts].map(([m, n]) => (n > 1 ? `${m} (${n} times)` : m)).join('. ');
  said.timer = setTimeout(sayQueued, ANNOUNCE_GAP);
}

/** showError shows msg in the error banner ("" hides it). */
export function showError(msg) {
  const el = $('#error-banner');
  el.textContent = msg || '';
  el.hidden = !msg;
}

/** clearError hides the error banner if it says what starts with prefix (an error that is over). */
export function clearError(prefix) {
  if ($('#error-banner').textContent.startsWith(prefix)) showError('');
}

/** setStreamStatus shows the state of the connection ("" hides it). */
export function setStreamStatus(msg) {
  const el = $('#stream-status');
  if (msg && el.textContent !== msg) announce(msg);
  el.textContent = msg || '';
  el.hidden = !msg;
}

/** narrow tells a phone-sized window. */
export const narrow = () => window.matchMedia('(max-width: 720px)').matches;

/** coarse tells a touch screen, where Enter adds a line. */
export const coarse = () => window.matchMedia('(pointer: coarse)').matches;
