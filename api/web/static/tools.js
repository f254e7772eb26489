// tools.js — the tools the agent offers, in the sidebar: the built-in ones
// and each MCP server with its state (connected, connecting, failed and
// why) and its tools, as GET /api/tools lists them. Read when the page
// starts and each time the list is opened.

import { api } from './api.js';
import { make } from './dom.js';

export class ToolList {
  /** @param {HTMLDetailsElement} root the <details> the list lives in */
  constructor(root) {
    this.root = root;
    this.count = root.querySelector('.tools__count');
    this.body = root.querySelector('.tools__body');
    this.loading = null;
    root.addEventListener('toggle', () => { if (root.open) this.load(); });
  }

  /** load reads the list and shows it; a failure leaves the last one. */
  async load() {
    if (this.loading) return this.loading;
    this.loading = api.tools().then((t) => this.show(t)).catch(() => {}).finally(() => { this.loading = null; });
    return this.loading;
  }

  show({ tools = [], servers = [] }) {
    this.count.textContent = String(tools.length);
    const builtin = tools.filter((t) => !t.server);
    const groups = [make('li', { className: 'tools__server', dataset: { server: '' } },
      make('span', { className: 'tools__name' }, 'Built-in'),
      toolNames(builtin.map((t) => t.name), tools))];
    for (const s of servers) {
      groups.push(make('li', { className: 'tools__server', dataset: { server: s.name, status: s.status } },
        make('span', { className: 'tools__name' }, s.name),
        make('span', { className: 'tools__state tools__state--' + s.status }, s.status),
        s.error ? make('span', { className: 'tools__error' }, s.error) : null,
        toolNames(s.tools || [], tools)));
    }
    this.body.replaceChildren(...groups);
  }
}

function toolNames(names, tools) {
  const byName = new Map(tools.map((t) => [t.name, t]));
  return make('ul', { className: 'tools__list' }, ...names.map((n) => make('li', {
    className: 'tools__tool', title: (byName.get(n) || {}).description || '',
  }, n)));
}
