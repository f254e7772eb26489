// app.js — the toolmark page: wires the modules imported below (API client,
// sidebar, composer, message list, plan, live turn, actions, title bar,
// search, tools, versions, watch) and routes by the URL's fragment (#id). Every answer, stored or streaming, is HTML rendered and sanitised by the
// server (package markdown); status texts, titles and errors are the
// server's words too. The page builds everything else with DOM calls and
// textContent.

import { api, newKey, sleep, backoff } from './api.js';
import { $, announce, showError, clearError } from './dom.js';
import { MessageActions } from './actions.js';
import { Composer } from './composer.js';
import { onAnswerClick } from './decorate.js';
import { LiveTurn } from './liveturn.js';
import { MessageList } from './messages.js';
import { PinnedPlan } from './plan.js';
import { ScrollKeeper } from './scroll.js';
import { SidebarSearch } from './search.js';
import { ToolList } from './tools.js';
import { Sidebar } from './sidebar.js';
import { TitleBar } from './titlebar.js';
import { revealHit } from './hit.js';
import { VersionChooser, showVersions } from './versions.js';
import { PlaceKeeper } from './place.js';
import { ConversationWatch } from './watch.js';

const STOP_FAILED = 'Could not stop the answer: ';

function setHash(id) {
  const want = id ? '#' + encodeURIComponent(id) : '';
  if (location.hash !== want) history.pushState(null, '', want || location.pathname);
}

class App {
  constructor() {
    this.els = {
      app: $('#app'), main: $('#main'), title: $('#conversation-title'), messages: $('#messages'),
      empty: $('#empty-state'), banner: $('#demo-banner'), badge: $('#demo-badge'), kbBanner: $('#kb-banner'),
      login: $('#login'), loginForm: $('#login-form'), token: $('#token'), model: $('#model-name'), signOut: $('#sign-out'),
    };
    this.keeper = new ScrollKeeper(this.els.messages, $('#jump'));
    this.list = new MessageList(this.els.messages, this.els.empty, this.keeper);
    this.plan = new PinnedPlan($('#todos'));
    this.tools = new ToolList($('#tools'));
    this.sidebar = new Sidebar({
      app: this.els.app, list: $('#conversation-list'), more: $('#more-conversations'), menu: $('#menu'),
      scrim: $('#scrim'), main: this.els.main, onDelete: (id) => this.deleteConversation(id),
    });
    this.search = new SidebarSearch({
      input: $('#search'), browse: $('#browse'), results: $('#search-results'), more: $('#more-results'), status: $('#search-status'),
    }, (hit) => this.openHit(hit));
    this.titleBar = new TitleBar({
      title: this.els.title, tools: $('#conversation-tools'), rename: $('#rename'), form: $('#rename-form'),
      input: $('#rename-input'), cancel: $('#rename-cancel'), exportBtn: $('#export'), menu: $('#export-menu'),
      markdown: $('#export-markdown'), json: $('#export-json'),
    }, () => this.sidebar.load().catch(() => {}));
    this.actions = new MessageActions({ area: this.els.messages, keeper: this.keeper, onTurn: (from, text, data) => this.replaceTail(from, text, data) });
    this.list.onEarlier = () => this.live || this.actions.place();
    this.place = new PlaceKeeper(this.els.messages, this.keeper, () => this.currentId);
    this.versions = new VersionChooser({ area: this.els.messages, keeper: this.keeper, reload: () => this.select(this.currentId, { quiet: true }) });
    this.composer = new Composer({
      form: $('#composer'), input: $('#input'), send: $('#send'), stop: $('#stop'), picker: $('#model-picker'), model: $('#model'),
      onSend: () => this.send(), onStop: () => this.stopTurn(),
    });
    this.currentId = null; // the conversation shown (null: a new one)
    this.live = null; // the LiveTurn followed
    this.loadSeq = 0; // bumped by every conversation shown, so a late answer is dropped
    this.demo = false;
    this.orphans = new Set(); // conversations of a first message that failed, to delete
    this.watch = new ConversationWatch({
      busy: () => this.composer.isSending || this.actions.busy, following: () => !!this.live,
      open: (id) => id === this.currentId && this.select(id, { quiet: true }),
    });
  }

  start() {
    this.els.messages.addEventListener('click', onAnswerClick);
    $('#new-conversation').addEventListener('click', () => this.newConversation());
    $('#examples').addEventListener('click', (e) => {
      const b = e.target.closest('.example');
      if (!b) return;
      this.composer.value = b.textContent;
      this.send();
    });
    document.addEventListener('keydown', (e) => this.onKey(e));
    window.addEventListener('popstate', () => this.route());
    window.addEventListener('hashchange', () => this.route());
    this.els.signOut.addEventListener('click', async () => {
      this.stopFollowing();
      await api.signOut().catch(() => {});
      location.hash = '';
      location.reload();
    });
    this.els.loginForm.addEventListener('submit', (e) => this.signIn(e));
    return this.boot();
  }

  onKey(e) {
    if (e.key !== 'Escape' || e.isComposing) return;
    const typing = e.target.matches?.('textarea, input') && e.target.value; // the next message: Esc stops nothing
    if (this.sidebar.isOpen()) this.sidebar.close();
    else if (this.live && !typing) this.stopTurn();
    else return;
    e.preventDefault();
  }

  async signIn(e) {
    e.preventDefault();
    const msg = $('#login-error');
    try {
      await api.signIn(this.els.token.value.trim());
      this.els.token.value = '';
      this.els.login.hidden = true;
      this.els.app.hidden = false;
      await this.boot();
    } catch (err) {
      msg.textContent = err.status === 401 ? 'That token was not accepted.' : err.message;
      msg.hidden = false;
    }
  }

  /** boot reads the server's info (trying again while it is away), the list and the route. */
  async boot() {
    let info;
    for (let attempt = 0; !info; attempt++) {
      try {
        info = await api.info();
      } catch (e) {
        if (e.status === 401) {
          this.els.app.hidden = true;
          this.els.login.hidden = false;
          this.els.token.focus();
          return;
        }
        showError('The server is not answering: ' + e.message + ' Trying again…');
        await sleep(backoff(attempt));
      }
    }
    showError('');
    this.demo = !!info.demo;
    this.texts = info.texts || {};
    this.els.badge.hidden = !info.demo;
    this.els.kbBanner.hidden = info.documents !== 0;
    this.els.signOut.hidden = info.auth !== 'token';
    this.composer.picker.nameServerModel(this.els.model, info.model);
    this.tools.load();
    await this.sidebar.load().catch((e) => showError('Could not load the conversations: ' + e.message));
    const id = decodeURIComponent(location.hash.slice(1));
    if (id) await this.select(id);
    else this.showNew();
    document.body.dataset.ready = 'true'; // for the browser tests
  }

  /** route shows the conversation the URL's fragment names. */
  async route() {
    const id = decodeURIComponent(location.hash.slice(1));
    if (id === (this.currentId || '')) return;
    if (id) await this.select(id);
    else this.newConversation();
  }

  setTitle(title) {
    this.titleBar.show(this.currentId, title);
  }

  showEmpty(empty) {
    this.els.banner.hidden = !(this.demo && empty);
  }

  /** showNew shows the empty page of a conversation not yet started. */
  showNew() {
    this.stopFollowing();
    this.loadSeq++;
    this.currentId = null;
    this.watch.watch(null);
    this.sidebar.setCurrent(null);
    this.list.show([]);
    this.plan.clear();
    this.showEmpty(true);
    this.setTitle('New conversation');
    this.composer.picker.show('');
  }

  newConversation() {
    showError('');
    this.showNew();
    setHash('');
    this.sidebar.close();
    this.composer.focus();
  }

  async select(id, { quiet } = {}) {
    this.stopFollowing();
    if (!quiet) showError('');
    this.currentId = id;
    this.watch.watch(id);
    const seq = ++this.loadSeq;
    this.sidebar.reveal(id).catch(() => {});
    let data;
    try {
      data = await api.conversation(id);
    } catch (e) {
      if (seq !== this.loadSeq) return;
      if (e.status === 404) {
        this.showNew();
        setHash('');
        if (!quiet) showError('That conversation no longer exists.');
        return;
      }
      showError('Could not load the conversation: ' + e.message);
      return;
    }
    if (seq === this.loadSeq) this.showConversation(data); // else another one was selected meanwhile
  }

  /** openHit opens a search result's conversation at its hit: {id, messageId, q}. */
  async openHit({ id, messageId, q }) {
    this.sidebar.close(true);
    setHash(id);
    if (id !== this.currentId) await this.select(id);
    if (messageId && this.currentId === id) await revealHit(this.list, this.keeper, messageId, q);
  }

  /** showConversation draws a fetched conversation and follows its active turn. */
  showConversation(data) {
    this.stopFollowing();
    this.setTitle(data.conversation.title || 'Untitled conversation');
    this.composer.picker.show(data.conversation.model);
    const messages = data.messages || [];
    const active = data.activeTurn;
    this.showEmpty(messages.length === 0);
    const id = data.conversation.id;
    const older = data.more ? { before: data.before, load: (before) => api.conversationBefore(id, before) } : null;
    if (!active) {
      this.list.show(messages, older);
      this.plan.clear();
      this.actions.update(true);
      return;
    }
    // The active turn's answer is followed live: the stream's first frame holds it whole.
    const stored = messages.find((m) => m.role === 'assistant' && m.turnId === active.id);
    this.list.show(messages.filter((m) => m !== stored), older);
    if (stored && stored.todos && stored.todos.length) this.plan.show(stored.todos);
    else this.plan.clear();
    this.follow(active.id, stored ? stored.seq || 0 : 0, stored ? stored.html : '');
  }

  /** follow shows turn turnId live; after is the seq its stored html reflects. */
  follow(turnId, after, html, status = '') {
    this.stopFollowing();
    this.live = new LiveTurn({
      turnId, conversationId: this.currentId, after, html, status, list: this.list, plan: this.plan,
      isCurrent: (l) => this.currentId === l.conversationId && !this.live,
      onEnd: (l) => this.onTurnEnd(l),
    });
    this.composer.setBusy(true);
    this.sidebar.setRunning(this.currentId);
    this.actions.update(false);
    this.live.start();
  }

  stopFollowing() {
    if (!this.live) return;
    this.live.stop();
    this.live = null;
    this.composer.setBusy(false);
    this.sidebar.setRunning(null);
  }

  async onTurnEnd(live) {
    if (this.live !== live) return;
    this.live = null;
    this.composer.setBusy(false);
    this.sidebar.setRunning(null);
    const end = live.end || {};
    clearError(STOP_FAILED); // the answer ended: a failed Stop is no longer the news
    if (live.error) showError(live.error);
    announce(end.error ? 'The answer ended: ' + end.error : 'Answer complete.');
    this.plan.clear(); // the answer carries its plan, folded
    const data = await live.showStored();
    if (data && data.activeTurn && data.activeTurn.id !== live.turnId) this.showConversation(data);
    else if (data) this.setTitle(data.conversation.title || 'Untitled conversation');
    if (data) showVersions(this.els.messages, data.messages);
    if (!this.live) this.actions.update(true);
    this.sidebar.load().catch(() => {});
  }

  /**
   * replaceTail shows the turn a retry, a regeneration or an edit started
   * (data: {turn}) in place of the article from and those after it, and
   * follows it as a message just sent; text is its question (null when it
   * is not on the page: the conversation is read again).
   */
  replaceTail(from, text, data) {
    if (data.turn.conversationId !== this.currentId || !from.isConnected || this.live) return;
    for (let n = from, next; n; n = next) {
      next = n.nextElementSibling;
      n.remove();
    }
    if (text === null) {
      this.select(this.currentId, { quiet: true });
      return;
    }
    this.list.appendUser(text, data.turn.userMessageId);
    this.plan.clear();
    this.follow(data.turn.id, 0, '', this.texts.thinking);
    this.watch.settle(); // the turn announced meanwhile is this one
    // The button pressed went with its message: the focus goes to Stop, as from Send.
    if (!document.activeElement || document.activeElement === document.body) this.composer.stop.focus();
  }

  async send() {
    const text = this.composer.value;
    if (!text.trim() || this.live || this.composer.isSending) return;
    showError('');
    this.composer.sending(true);
    const seq = this.loadSeq;
    let created = null;
    try {
      await this.deleteOrphans().catch(() => {});
      // Untitled: the server titles it from its first question.
      if (!this.currentId) created = (await api.createConversation('')).conversation;
      const data = await api.startTurn(created ? created.id : this.currentId, text, newKey(), this.composer.picker.value, this.composer.attach.ids());
      if (created) {
        if (seq !== this.loadSeq) return; // the reader went elsewhere meanwhile
        this.currentId = created.id;
        this.watch.watch(created.id);
        this.loadSeq++;
        setHash(created.id);
        this.titleBar.show(created.id, this.els.title.textContent);
        this.sidebar.load().then(() => {
          this.sidebar.setCurrent(this.currentId);
          const c = this.sidebar.conversations.find((x) => x.id === created.id);
          if (c && this.currentId === created.id) this.setTitle(c.title);
        }, () => {});
      }
      this.composer.value = '';
      this.showEmpty(false);
      this.list.appendUser(text, data.turn.userMessageId, this.composer.attach.take());
      this.plan.clear();
      // The server's word for a turn just sent, until its first frame says more.
      this.follow(data.turn.id, 0, '', this.texts.thinking);
    } catch (e) {
      if (created) await this.dropOrphan(created.id); // gone before the error shows
      if (e.code === 'conflict') {
        showError('An answer is still being written in this conversation; your message stays in the box.');
        this.select(this.currentId, { quiet: true }); // and follow that answer
      } else showError('Could not send the message: ' + e.message);
    } finally {
      this.composer.sending(false);
      this.watch.settle();
    }
  }

  /** dropOrphan deletes a conversation made for a first message that failed (later, if it cannot now). */
  async dropOrphan(id) {
    this.orphans.add(id);
    await this.deleteOrphans().catch(() => {});
  }

  async deleteOrphans() {
    for (const id of [...this.orphans]) {
      await api.deleteConversation(id).catch((e) => {
        if (e.status !== 404) throw e;
      });
      this.orphans.delete(id);
    }
  }

  async stopTurn() {
    const live = this.live;
    if (!live || this.composer.isStopping) return;
    this.composer.stopping(true);
    try {
      await api.cancelTurn(live.turnId);
      clearError(STOP_FAILED);
    } catch (e) {
      this.composer.stopping(false);
      showError(STOP_FAILED + e.message);
      if (e.retryable) live.whenBack(() => clearError(STOP_FAILED)); // the server is back: Stop may be tried again
    }
  }

  async deleteConversation(id) {
    if (!window.confirm('Delete this conversation?')) return;
    try {
      await api.deleteConversation(id);
      if (id === this.currentId) {
        this.showNew();
        setHash('');
      }
      this.sidebar.remove(id);
      this.composer.focus();
      await this.sidebar.load();
    } catch (e) {
      showError('Could not delete the conversation: ' + e.message);
    }
  }
}

new App().start();
