// hit.js — a search hit opened: the message that holds it is loaded (the
// earlier pages as needed), its first occurrence of the text searched for
// is marked, and it is put in the middle of the view.

import { make } from './dom.js';

const MAX_PAGES = 40; // earlier pages read at most to reach a hit

/** revealHit shows message messageId of the list with q marked; false when it is not in the conversation. */
export async function revealHit(list, keeper, messageId, q) {
  const find = () => list.area.querySelector(`[data-message-id="${CSS.escape(messageId)}"]`);
  for (let i = 0; !find() && list.older && i < MAX_PAGES; i++) await list.loadEarlier();
  const art = find();
  if (!art) return false;
  for (const old of list.area.querySelectorAll('mark.hit')) old.replaceWith(...old.childNodes);
  const mark = markFirst(art.querySelector('.message__body'), q);
  art.classList.add('message--hit');
  keeper.reveal(mark || art);
  return true;
}

/** markFirst wraps the first occurrence of q (any case) within one text node of el in <mark class="hit">. */
function markFirst(el, q) {
  const needle = q.toLowerCase();
  if (!el || !needle) return null;
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const low = n.data.toLowerCase();
    const i = low.length === n.data.length ? low.indexOf(needle) : -1;
    if (i < 0) continue;
    const hit = n.splitText(i);
    hit.splitText(needle.length);
    const mark = make('mark', { className: 'hit' });
    hit.replaceWith(mark);
    mark.append(hit);
    return mark;
  }
  return null;
}
