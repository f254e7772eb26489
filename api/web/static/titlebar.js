// titlebar.js — the conversation's header: its title, Rename (the title
// edited in place: Enter or Save keeps it, Esc or Cancel leaves it) and
// Export (a small menu of two downloads, Markdown and JSON, which the
// server writes). Both show only for a conversation that exists.

import { api } from './api.js';
import { showError } from './dom.js';

export class TitleBar {
  /** els: title, tools, rename, form, input, cancel, exportBtn, menu, markdown, json; onRenamed(conversation). */
  constructor(els, onRenamed) {
    this.els = els;
    this.onRenamed = onRenamed;
    this.id = null; // the conversation shown (null: a new one)
    this.saving = false;
    els.rename.addEventListener('click', () => this.openRename());
    els.cancel.addEventListener('click', () => this.closeRename(true));
    els.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.saveRename();
    });
    els.input.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape' || e.isComposing) return;
      e.preventDefault();
      e.stopPropagation(); // not the page's Esc (stop an answer)
      this.closeRename(true);
    });
    els.exportBtn.addEventListener('click', () => (els.menu.hidden ? this.openMenu() : this.closeMenu(false)));
    els.menu.addEventListener('click', (e) => {
      if (e.target.closest('a')) this.closeMenu(false);
    });
    els.menu.addEventListener('keydown', (e) => this.menuKey(e));
    els.menu.addEventListener('focusout', (e) => {
      if (e.relatedTarget && !els.menu.contains(e.relatedTarget) && e.relatedTarget !== els.exportBtn) this.closeMenu(false);
    });
    document.addEventListener('click', (e) => {
      if (!els.menu.hidden && !els.menu.contains(e.target) && !els.exportBtn.contains(e.target)) this.closeMenu(false);
    });
  }

  /** show shows the title of conversation id (null: a conversation not yet started). */
  show(id, title) {
    if (id !== this.id) {
      this.closeRename(false);
      this.closeMenu(false);
    }
    this.id = id;
    this.els.title.textContent = title;
    document.title = title + ' — toolmark';
    this.els.tools.hidden = !id;
    if (id) {
      this.els.markdown.href = api.exportURL(id, 'markdown');
      this.els.json.href = api.exportURL(id, 'json');
    }
  }

  openRename() {
    if (!this.id) return;
    this.closeMenu(false);
    const { title, form, input, tools } = this.els;
    input.value = title.textContent;
    title.hidden = true;
    tools.hidden = true;
    form.hidden = false;
    input.focus();
    input.select();
  }

  /** closeRename shows the title again; focus gives the focus back to Rename. */
  closeRename(focus) {
    const { title, form, tools, rename } = this.els;
    if (form.hidden) return;
    form.hidden = true;
    title.hidden = false;
    tools.hidden = !this.id;
    if (focus) rename.focus();
  }

  async saveRename() {
    if (this.saving || !this.id) return;
    const id = this.id;
    this.saving = true;
    showError('');
    try {
      const data = await api.rename(id, this.els.input.value);
      if (id !== this.id) return; // another conversation is shown meanwhile
      this.closeRename(true);
      this.show(id, data.conversation.title);
      this.onRenamed(data.conversation);
    } catch (e) {
      showError('Could not rename the conversation: ' + e.message);
      this.els.input.focus();
    } finally {
      this.saving = false;
    }
  }

  openMenu() {
    this.els.menu.hidden = false;
    this.els.exportBtn.setAttribute('aria-expanded', 'true');
    this.els.markdown.focus();
  }

  closeMenu(focus) {
    if (this.els.menu.hidden) return;
    this.els.menu.hidden = true;
    this.els.exportBtn.setAttribute('aria-expanded', 'false');
    if (focus) this.els.exportBtn.focus();
  }

  /** menuKey: Esc closes the menu, the arrows move between its two links. */
  menuKey(e) {
    const links = [this.els.markdown, this.els.json];
    const at = links.indexOf(document.activeElement);
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      this.closeMenu(true);
    } else if ((e.key === 'ArrowDown' || e.key === 'ArrowUp') && at >= 0) {
      e.preventDefault();
      links[(at + 1) % 2].focus();
    }
  }
}
