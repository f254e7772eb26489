// decorate.js — the page's own controls inside rendered answers, added
// after the server's HTML is in place (stored or live) and marked data-ui,
// so the live morph (live.js) keeps them and the tests can leave them out:
// a bar on each code block with its language and a Copy button that stays
// in view while the code scrolls sideways, a real button that folds a
// sub-agent's steps, the images a tool call returned, and typeset math.

import { make, copyText } from './dom.js';
import { typeset } from './math.js';

/** decorate adds the page's controls to the rendered HTML under root. */
export function decorate(root) {
  const pres = [...root.querySelectorAll('pre')];
  pres.forEach(codeBar);
  nameCopies(pres);
  for (const w of root.querySelectorAll('.toolcall')) foldButton(w);
  for (const w of root.querySelectorAll('.toolcall[data-images]')) resultImages(w);
  typeset(root);
}

function codeBar(pre) {
  const code = pre.querySelector(':scope > code');
  const cls = code ? [...code.classList].find((c) => c.startsWith('language-')) : '';
  const lang = cls ? cls.slice('language-'.length) : '';
  let bar = pre.querySelector(':scope > .code__bar');
  if (!bar) {
    bar = make('div', { className: 'code__bar', dataset: { ui: '' } },
      make('span', { className: 'code__lang' }),
      make('button', { type: 'button', className: 'code__copy' }, 'Copy'));
    pre.append(bar);
  }
  const label = bar.querySelector('.code__lang');
  if (label.textContent !== lang) label.textContent = lang;
}

/**
 * nameCopies names each code block's Copy by what it copies ("Copy go
 * code"), and numbers blocks of the same language in one answer ("Copy go
 * code 2"), so no two Copy buttons of an answer share a name.
 */
function nameCopies(pres) {
  const seen = new Map();
  for (const pre of pres) {
    const lang = pre.querySelector(':scope > .code__bar > .code__lang')?.textContent || '';
    const base = lang ? `Copy ${lang} code` : 'Copy code';
    const n = (seen.get(base) || 0) + 1;
    seen.set(base, n);
    const name = n > 1 ? `${base} ${n}` : base;
    const btn = pre.querySelector(':scope > .code__bar > .code__copy');
    if (btn && btn.getAttribute('aria-label') !== name) btn.setAttribute('aria-label', name);
  }
}

function foldButton(widget) {
  const kids = widget.querySelector(':scope > .toolcall__children');
  const btn = widget.querySelector(':scope > .toolcall__fold');
  if (!kids || btn) return;
  const folded = widget.hasAttribute('data-ui-folded');
  // Named by its sub-agent's task (the status text's last line), so each is told apart.
  const task = (widget.querySelector(':scope > .toolcall__text')?.textContent || '').trim().split('\n').pop().trim();
  widget.append(make('button', {
    type: 'button', className: 'toolcall__fold', dataset: { ui: '' },
    attrs: { 'aria-expanded': String(!folded), 'aria-label': task ? 'Steps: ' + task : 'Steps' },
  }, 'Steps'));
}

/**
 * resultImages shows the images a call returned, folded under the widget:
 * the server keeps them with the call's result and serves them as images
 * only (GET /api/turns/{id}/tool-calls/{callId}/images/{n}).
 */
function resultImages(widget) {
  const turnId = widget.closest('[data-turn-id]')?.dataset.turnId;
  const n = Math.min(Number(widget.dataset.images) || 0, 4);
  if (!turnId || !n || widget.querySelector(':scope > .toolcall__images')) return;
  const base = '/api/turns/' + encodeURIComponent(turnId) + '/tool-calls/' + encodeURIComponent(widget.dataset.toolCallId) + '/images/';
  const imgs = [];
  for (let i = 0; i < n; i++) {
    imgs.push(make('img', { className: 'toolcall__image', src: base + i, alt: 'Image ' + (i + 1) + ' the tool returned', loading: 'lazy' }));
  }
  widget.append(make('details', { className: 'toolcall__images', dataset: { ui: '' }, open: true },
    make('summary', {}, n === 1 ? 'Result image' : 'Result images'), ...imgs));
}

/** onAnswerClick handles the controls decorate adds (one listener for all answers). */
export function onAnswerClick(e) {
  const copy = e.target.closest('.code__copy');
  if (copy) {
    const code = copy.closest('pre').querySelector(':scope > code');
    copyText(code ? code.textContent : '', copy);
    return;
  }
  const fold = e.target.closest('.toolcall__fold');
  if (fold) {
    const widget = fold.parentElement;
    const folded = !widget.hasAttribute('data-ui-folded');
    widget.toggleAttribute('data-ui-folded', folded);
    fold.setAttribute('aria-expanded', String(!folded));
  }
}
