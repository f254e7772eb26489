// models.js — the models a server offers (GET /api/models): the picker
// beside the composer, hidden while there is no choice, and the label each
// answer's footer names its model by. Labels and ids go in as text only.

import { api } from './api.js';
import { make } from './dom.js';

const labels = new Map();

/** modelLabel is what the page calls a model: its label, else its id. */
export function modelLabel(id) {
  return labels.get(id) || id;
}

export class ModelPicker {
  /** box holds the label and the select; both stay hidden with one model. */
  constructor(box, select) {
    this.box = box;
    this.select = select;
    this.def = '';
    this.want = '';
    this.loaded = api.models().then((data) => this.fill(data), () => {});
  }

  fill(data) {
    const models = data.models || [];
    this.def = data.default || '';
    for (const m of models) {
      labels.set(m.id, m.label || m.id);
      this.select.append(make('option', { attrs: { value: m.id } }, m.label || m.id));
    }
    this.box.hidden = models.length < 2;
    this.show(this.want);
  }

  /** show picks a conversation's model ('' or an unknown one: the default). */
  show(id) {
    this.want = id || '';
    const known = [...this.select.options].some((o) => o.value === this.want);
    this.select.value = known ? this.want : this.def;
  }

  /** value is the model to send with a turn ('' while there is no choice). */
  get value() {
    return this.box.hidden ? '' : this.select.value;
  }
}
