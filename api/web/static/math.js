// math.js — LaTeX typeset with KaTeX (vendored in /vendor/katex, loaded
// the first time an answer holds math). The server leaves the source as
// text in <span class="math"> (inline) and <div class="math"> (display);
// the page replaces that text with KaTeX's rendering and keeps the source
// in data-ui-source, so the live morph (live.js) leaves a typeset element
// alone while its source stays the same. katex.render builds the DOM with
// the CSSOM, which the page's Content-Security-Policy allows; source KaTeX
// cannot parse stays as it was written.

import { make } from './dom.js';

let loading = null;

function loadKatex() {
  loading ||= new Promise((resolve, reject) => {
    document.head.append(make('link', { rel: 'stylesheet', href: '/vendor/katex/katex.min.css' }));
    const s = make('script', { src: '/vendor/katex/katex.min.js' });
    s.onload = () => resolve(window.katex);
    s.onerror = () => reject(new Error('KaTeX did not load'));
    document.head.append(s);
  });
  return loading;
}

/** typeset typesets the math under root that is not typeset yet. */
export function typeset(root) {
  const todo = [...root.querySelectorAll('.math')]
    .filter((el) => el.getAttribute('data-ui-source') !== el.textContent && !el.querySelector('.katex'));
  if (todo.length === 0) return;
  for (const el of todo) el.setAttribute('data-ui-source', el.textContent);
  loadKatex().then((katex) => {
    for (const el of todo) {
      const src = el.getAttribute('data-ui-source');
      if (!el.isConnected || el.textContent !== src) continue; // changed meanwhile: typeset again later
      try {
        katex.render(src, el, { displayMode: el.tagName === 'DIV', throwOnError: true, output: 'htmlAndMathml' });
      } catch {
        // Not LaTeX KaTeX knows: the source stays, as written.
      }
    }
  }, () => {});
}
