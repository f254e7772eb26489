// models.js — the models a server offers (GET /api/models): the picker
// beside the composer, hidden while there is no choice, the label each
// answer's footer names its model by, and the list the answers' "another
// model" menus offer (modelmenu.js). Labels and ids go in as text only.

import { api } from './api.js';
import { make } from './dom.js';

const labels = new Map(); // id → label, in the server's order
let loading = null;

/** loadModels asks the server once for its models: {models, default}. */
export function loadModels() {
  if (!loading) {
    loading = api.models().then((data) => {
      for (const m of data.models || []) labels.set(m.id, m.label || m.id);
      return data;
    });
  }
  return loading;
}

/** modelLabel is what the page calls a model: its label, else its id. */
export function modelLabel(id) {
  return labels.get(id) || id;
}

/** modelChoices lists the models one can pick, [{id, label}] ([] while there is no choice). */
export function modelChoices() {
  return labels.size < 2 ? [] : [...labels].map(([id, label]) => ({ id, label }));
}

/** modelNamed is the id of the model the page names label ('' for none). */
export function modelNamed(label) {
  for (const [id, l] of labels) if (l === label) return id;
  return '';
}

export class ModelPicker {
  /** box holds the label and the select; both stay hidden with one model. */
  constructor(box, select) {
    this.box = box;
    this.select = select;
    this.def = '';
    this.want = '';
    this.loaded = loadModels().then((data) => this.fill(data), () => {});
  }

  fill(data) {
    const models = data.models || [];
    this.def = data.default || '';
    for (const m of models) this.select.append(make('option', { attrs: { value: m.id } }, m.label || m.id));
    this.box.hidden = models.length < 2;
    this.show(this.want);
  }

  /** nameServerModel names the server's model in el while there is no choice; with one, the picker names it. */
  nameServerModel(el, model) {
    el.textContent = model ? 'Model: ' + model : '';
    this.loaded.then(() => { if (!this.box.hidden) el.textContent = ''; });
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
