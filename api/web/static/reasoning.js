// reasoning.js — a reasoning model's thinking, folded above its answer:
// "Thinking…" while the model thinks, "Thought for 12 s" once it has,
// opened to read the thinking. The thinking is the model's text: it goes
// in as text (textContent), never as HTML.

import { make } from './dom.js';

/** thoughtFor is the fold's summary for ms milliseconds of thinking. */
export function thoughtFor(ms) {
  return `Thought for ${Math.max(1, Math.round((ms || 0) / 1000))} s`;
}

/** newFold returns an empty fold, closed and hidden until there is thinking to show. */
export function newFold() {
  return make('details', { className: 'reasoning', hidden: true },
    make('summary', { className: 'reasoning__summary' }),
    make('div', { className: 'reasoning__text' }));
}

/**
 * showReasoning brings a fold up to r: { text, durationMs } of a stored
 * message, or a render frame's { text, from, thinking, durationMs }, whose
 * text continues the one held after its first from characters.
 */
export function showReasoning(fold, r) {
  if (!r) return;
  const text = fold.querySelector('.reasoning__text');
  const held = text.textContent;
  text.textContent = r.from ? held.slice(0, r.from) + (r.text || '') : r.text || '';
  fold.querySelector('.reasoning__summary').textContent = r.thinking ? 'Thinking…' : thoughtFor(r.durationMs);
  fold.classList.toggle('reasoning--thinking', !!r.thinking);
  // Thinking with nothing to read and no time taken (a Gemini signature, a
  // redacted block) shows no fold.
  fold.hidden = !r.thinking && !text.textContent && !r.durationMs;
}
