// reasoning.js — a reasoning model's thinking, folded above its answer,
// under the summary the server writes (while the model thinks, then how
// long it thought), opened to read the thinking. The thinking is the
// model's text: it goes in as text (textContent), never as HTML.

import { make } from './dom.js';

/** newFold returns an empty fold, closed and hidden until there is thinking to show. */
export function newFold() {
  return make('details', { className: 'reasoning', hidden: true },
    make('summary', { className: 'reasoning__summary' }),
    make('div', { className: 'reasoning__text' }));
}

/**
 * showReasoning brings a fold up to r: { text, durationMs, summary } of a
 * stored message, or a render frame's { text, from, thinking, durationMs,
 * summary }, whose text continues the one held after its first from
 * characters.
 */
export function showReasoning(fold, r) {
  if (!r) return;
  const text = fold.querySelector('.reasoning__text');
  const held = text.textContent;
  text.textContent = r.from ? held.slice(0, r.from) + (r.text || '') : r.text || '';
  fold.querySelector('.reasoning__summary').textContent = r.summary || '';
  fold.classList.toggle('reasoning--thinking', !!r.thinking);
  // A model that thought with nothing to read and no time taken (a Gemini signature, a
  // redacted block) shows no fold.
  fold.hidden = !r.thinking && !text.textContent && !r.durationMs;
}
