// plan.js — the plan (todos) of a turn: a checklist that folds, with how
// many items are done. While a turn runs its plan is pinned above the
// composer (folded on a phone); a finished answer carries its plan, folded,
// under its text. The marks and the words screen readers hear for each
// status are the stylesheet's (.todo--STATUS); the statuses are the server's.

import { make, narrow } from './dom.js';

const token = (s) => String(s || 'pending').replace(/[^a-z_]/g, '');

/** ENDED says how an answer that did not complete ended, by its message status. */
const ENDED = { cancelled: 'Stopped', interrupted: 'Interrupted', failed: 'Failed' };

/**
 * fillPlan draws todos into a plan element made by newPlan (or #todos).
 * status is the answer's, once it has ended: the count of a plan whose
 * answer did not complete says so, since its items may all be marked done
 * (a stop while the answer is written) although the answer is not.
 */
export function fillPlan(details, todos, status = '') {
  const list = todos || [];
  const items = list.map((t) => make('li', { className: 'todo todo--' + token(t.status), dataset: { status: token(t.status) } },
    make('span', { className: 'todo__mark', attrs: { 'aria-hidden': 'true' } }),
    make('span', { className: 'todo__text' }, t.text),
    make('span', { className: 'todo__state visually-hidden' })));
  details.querySelector('.todos__list').replaceChildren(...items);
  const done = list.filter((t) => t.status === 'done').length;
  const ended = ENDED[status];
  const count = ended ? `${ended} · ${done} of ${list.length} done` : `${done}/${list.length} done`;
  details.querySelector('.todos__count').textContent = list.length ? count : '';
  details.hidden = list.length === 0;
}

/** newPlan returns a folded plan for a finished answer of message status status. */
export function newPlan(todos, status) {
  const details = make('details', { className: 'todos todos--answer' },
    make('summary', { className: 'todos__summary' },
      make('span', { className: 'todos__title' }, 'Plan'), ' ', make('span', { className: 'todos__count' })),
    make('ul', { className: 'todos__list' }));
  fillPlan(details, todos, status);
  return details;
}

/** PinnedPlan is the plan of the running turn, above the composer. */
export class PinnedPlan {
  constructor(details) {
    this.details = details;
    this.shown = false; // it shows a plan now
  }

  show(todos) {
    if (!this.shown) this.details.open = !narrow(); // a phone gets the one-line summary
    fillPlan(this.details, todos);
    this.shown = !this.details.hidden;
  }

  clear() {
    fillPlan(this.details, []);
    this.shown = false;
  }
}
