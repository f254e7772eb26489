// actions.js — the actions on a conversation's questions and answers:
// Retry (an answer that failed, was stopped or interrupted), Regenerate (a
// finished answer) and Edit (a question, edited in place). Each starts a
// new turn in place of the question and everything after it (docs/api.md:
// the old branch is kept as an earlier version, which versions.js offers
// back); the page then follows that turn as it follows a message just sent.
// With several models, Retry and Regenerate offer another one (modelmenu.js).

import { api, newKey } from './api.js';
import { make, showError, coarse } from './dom.js';
import { loadModels } from './models.js';
import { ModelMenu, moreButton } from './modelmenu.js';

/** WHAT names each action in an error's sentence. */
const WHAT = { retry: 'retry the answer', regenerate: 'regenerate the answer', edit: 'send the edited message' };

export class MessageActions {
  /**
   * area is the message list (#messages); keeper its ScrollKeeper;
   * onTurn(from, text, data) shows the turn data ({turn, eventsUrl}) an
   * action started in place of the article from and those after it, text
   * being its question.
   */
  constructor({ area, keeper, onTurn }) {
    this.area = area;
    this.keeper = keeper;
    this.onTurn = onTurn;
    this.busy = false; // an action's request is on its way
    this.editor = null; // the open editor: {art, form, input, edit}
    this.enabled = false; // the actions are shown
    this.menu = new ModelMenu((group, model) => this.again(group.closest('.message'), group.querySelector('.action'), model));
    area.addEventListener('click', (e) => this.onClick(e));
    area.addEventListener('keydown', (e) => this.menu.arrowKey(e));
    loadModels().then(() => this.enabled && this.place(), () => {}); // the arrows, when the models come late
  }

  /** update puts the actions on every question and answer; enabled is false while a turn is followed. */
  update(enabled) {
    this.enabled = enabled;
    this.closeEditor(false);
    this.menu.close(false);
    for (const b of this.area.querySelectorAll('.again, .action')) b.remove();
    for (const f of this.area.querySelectorAll('.message--user > .message__foot')) f.remove();
    if (!enabled) return;
    this.place();
    this.keeper.keep(); // the controls are at the end: keep it in view when following
  }

  /** place puts the actions on the questions and answers that have none yet (earlier ones just loaded). */
  place() {
    for (const art of this.area.querySelectorAll(':scope > .message')) {
      const action = art.querySelector(':scope > .message__foot .action');
      if (action) {
        const more = action.parentElement.matches('.again') && !action.nextElementSibling && moreButton(action.dataset.action);
        if (more) action.after(more);
        continue;
      }
      if (art.classList.contains('message--user')) {
        if (art.dataset.messageId) this.add(art, 'Edit', 'edit');
        continue;
      }
      // A stored answer is complete, or ended without completing (failed,
      // stopped, interrupted); a streaming one is followed, never here.
      const status = art.dataset.status;
      if (!art.dataset.turnId || art.classList.contains('message--live')) continue;
      if (status === 'complete') this.add(art, 'Regenerate', 'regenerate');
      else if (status && status !== 'streaming') this.add(art, 'Retry', 'retry');
    }
  }

  add(art, label, action) {
    let slot = art.querySelector(':scope > .message__foot > .message__actions');
    if (!slot) {
      slot = make('div', { className: 'message__actions' });
      art.append(make('footer', { className: 'message__foot' }, slot));
    }
    const btn = make('button', { type: 'button', className: 'btn btn--small btn--ghost action', dataset: { action } }, label);
    // Retry and Regenerate go with the arrow of their models menu, in a group.
    slot.prepend(action === 'edit' ? btn : make('span', { className: 'again' }, btn, moreButton(action)));
  }

  onClick(e) {
    const b = e.target.closest('button');
    if (!b || !this.area.contains(b)) return;
    const art = b.closest('.message');
    if (b.classList.contains('again__more')) this.menu.toggle(b);
    else if (!b.classList.contains('action')) return;
    else if (b.dataset.action === 'edit') this.openEditor(art);
    else this.again(art, b);
  }

  /** again retries or regenerates the answer art, with model ('' or undefined: the conversation's). */
  async again(art, btn, model) {
    const action = btn.dataset.action;
    const question = questionOf(art);
    await this.run(btn, action, async () => {
      const data = await api[action](art.dataset.turnId, newKey(), model);
      this.onTurn(question || art, question ? question.querySelector('.message__body').textContent : null, data);
    });
  }

  /** run sends one action's request, at most one at a time, and says why it failed. */
  async run(btn, action, fn) {
    if (this.busy) return;
    this.busy = true;
    btn.setAttribute('aria-disabled', 'true');
    showError('');
    try {
      await fn();
    } catch (e) {
      showError('Could not ' + WHAT[action] + ': ' + e.message); // the server's short sentence
    } finally {
      this.busy = false;
      btn.removeAttribute('aria-disabled');
    }
  }

  /** openEditor edits the question art in place: Save sends it again, Cancel or Esc leaves it. */
  openEditor(art) {
    this.closeEditor(false);
    const body = art.querySelector('.message__body');
    const foot = art.querySelector(':scope > .message__foot');
    const input = make('textarea', { className: 'message__input', rows: 3, value: body.textContent, attrs: { 'aria-label': 'Edit message' } });
    const save = make('button', { type: 'submit', className: 'btn btn--primary btn--small' }, 'Save');
    const cancel = make('button', { type: 'button', className: 'btn btn--small' }, 'Cancel');
    const form = make('form', { className: 'message__edit' }, input, make('div', { className: 'message__edit-buttons' }, cancel, save));
    body.hidden = true;
    foot.hidden = true;
    body.after(form);
    this.editor = { art, form, input, edit: foot.querySelector('.action') };
    const grow = () => {
      input.style.height = 'auto';
      input.style.height = input.scrollHeight + 2 + 'px';
    };
    input.addEventListener('input', grow);
    input.addEventListener('keydown', (e) => {
      if (e.isComposing) return;
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation(); // the page's Esc (stop, close the drawer) is not meant
        this.closeEditor(true);
      } else if (e.key === 'Enter' && !e.shiftKey && !coarse()) {
        e.preventDefault();
        form.requestSubmit();
      }
    });
    cancel.addEventListener('click', () => this.closeEditor(true));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.saveEdit(art, input.value, save);
    });
    grow();
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  }

  async saveEdit(art, text, btn) {
    if (!text.trim()) {
      showError('The message is empty.');
      return;
    }
    await this.run(btn, 'edit', async () => {
      const data = await api.edit(art.dataset.messageId, text, newKey());
      this.closeEditor(false);
      this.onTurn(art, text, data);
    });
  }

  /** closeEditor puts the question back as it was; focus gives the focus back to Edit. */
  closeEditor(focus) {
    const ed = this.editor;
    if (!ed) return;
    this.editor = null;
    ed.form.remove();
    ed.art.querySelector('.message__body').hidden = false;
    const foot = ed.art.querySelector(':scope > .message__foot');
    if (foot) foot.hidden = false;
    if (focus && ed.edit && ed.edit.isConnected) ed.edit.focus();
  }
}

/** questionOf returns the question article before the answer art, if it is on the page. */
function questionOf(art) {
  for (let n = art.previousElementSibling; n; n = n.previousElementSibling) {
    if (n.classList.contains('message--user')) return n;
  }
  return null;
}
