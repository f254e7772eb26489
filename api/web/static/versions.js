// versions.js — "‹ 2/3 ›" on a question asked again (edited, regenerated,
// retried). The versions are the server's list (a question's `versions`:
// ids, oldest first); choosing one makes its branch the conversation's
// (POST /api/messages/{id}/select, docs/api.md), and the conversation is
// read again with the chosen question in view.

import { api } from './api.js';
import { make, showError } from './dom.js';

/** switcher returns the "‹ i/n ›" control of question m, or null when it was asked once. */
export function switcher(m) {
  const v = m.versions || [];
  const i = v.indexOf(m.id);
  if (v.length < 2 || i < 0) return null;
  const step = (to, label, text) => make('button', {
    type: 'button', className: 'btn btn--small btn--ghost versions__step', disabled: !to,
    dataset: { version: to || '' }, attrs: { 'aria-label': label },
  }, text);
  return make('span', { className: 'versions', attrs: { role: 'group', 'aria-label': `Version ${i + 1} of ${v.length}` } },
    step(v[i - 1], 'Previous version', '‹'),
    make('span', { className: 'versions__count' }, `${i + 1}/${v.length}`),
    step(v[i + 1], 'Next version', '›'));
}

/** showVersions puts (or updates) the switcher of each question of messages shown in area. */
export function showVersions(area, messages) {
  for (const m of messages || []) {
    const art = m.role === 'user' && area.querySelector(`.message--user[data-message-id="${CSS.escape(m.id)}"]`);
    if (!art) continue;
    art.querySelector('.versions')?.remove();
    const s = switcher(m);
    if (s) art.querySelector('.message__head').append(s);
  }
}

export class VersionChooser {
  /** area is the message list; reload() reads the conversation again; keeper its ScrollKeeper. */
  constructor({ area, keeper, reload }) {
    this.area = area;
    this.keeper = keeper;
    this.reload = reload;
    this.busy = false;
    area.addEventListener('click', (e) => {
      const b = e.target.closest('.versions__step');
      if (b && b.dataset.version && this.area.contains(b)) this.choose(b.dataset.version, b.getAttribute('aria-label'));
    });
  }

  async choose(id, label) {
    if (this.busy) return;
    this.busy = true;
    showError('');
    try {
      await api.selectVersion(id);
      await this.reload();
      const art = this.area.querySelector(`.message--user[data-message-id="${CSS.escape(id)}"]`);
      if (art) {
        this.keeper.reveal(art);
        const same = art.querySelector(`.versions__step[aria-label="${label}"]:not([disabled])`);
        (same || art.querySelector('.versions__step:not([disabled])'))?.focus();
      }
    } catch (e) {
      showError('Could not show that version: ' + e.message); // the server's short sentence
    } finally {
      this.busy = false;
    }
  }
}
