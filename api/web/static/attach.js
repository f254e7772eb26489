// attach.js — files attached to the next question: the attach button, drag
// and drop onto the composer and paste of an image. Each file is uploaded
// at once (POST /api/uploads) and shown as a chip; the question carries
// their ids. A file's name is the user's: it is only ever set as text, and
// only raster images (the server types them by their bytes) get a thumbnail.
// A file removed before sending is deleted from the server.

import { make } from './dom.js';
import { APIError, request } from './api.js';

/** upload sends files to the server and returns their uploads. */
async function upload(files) {
  const form = new FormData();
  for (const f of files) form.append('file', f, f.name || 'pasted');
  const resp = await fetch('/api/uploads', { method: 'POST', body: form, credentials: 'same-origin', headers: { Accept: 'application/json' } });
  const data = await resp.json().catch(() => null);
  if (!resp.ok) {
    const e = (data && data.error) || {};
    throw new APIError(resp.status, e.code, e.message || resp.statusText);
  }
  return data.uploads;
}

/** chip is a file's chip: a thumbnail of a raster image, else its name, type and size. */
export function chip(u, onRemove) {
  const raster = /^image\/(png|jpeg|gif|webp)$/.test(u.type);
  const el = make('span', { className: 'attachment' },
    raster ? make('img', { className: 'attachment__thumb', src: u.url, alt: '' }) : null,
    make('a', { className: 'attachment__name', href: u.url, target: '_blank', rel: 'noopener' }, u.name),
    make('span', { className: 'attachment__meta' }, ' ' + u.type + ', ' + u.size + ' bytes'));
  el.title = u.name;
  if (onRemove) {
    const x = make('button', { type: 'button', className: 'attachment__remove' }, '×');
    x.setAttribute('aria-label', 'Remove ' + u.name);
    x.addEventListener('click', onRemove);
    el.append(x);
  }
  return el;
}

/** chips is the list of a question's files. */
export function chips(list) {
  if (!list || !list.length) return null;
  return make('div', { className: 'attachments' }, ...list.map((u) => chip(u)));
}

export class Attachments {
  constructor({ form, input, button, file, box, onError }) {
    this.files = [];
    this.box = box;
    this.input = input;
    this.onError = onError;
    button.addEventListener('click', () => file.click());
    file.addEventListener('change', () => {
      this.add([...file.files]);
      file.value = '';
    });
    form.addEventListener('dragover', (e) => e.preventDefault());
    form.addEventListener('drop', (e) => {
      e.preventDefault();
      this.add([...e.dataTransfer.files]);
    });
    input.addEventListener('paste', (e) => {
      const imgs = [...e.clipboardData.files].filter((f) => f.type.startsWith('image/'));
      if (imgs.length) this.add(imgs);
    });
  }

  async add(files) {
    if (!files.length) return;
    try {
      for (const u of await upload(files)) if (!this.files.some((f) => f.id === u.id)) this.files.push(u);
      this.onError('');
    } catch (e) {
      this.onError('Could not attach: ' + e.message);
    }
    this.show();
  }

  show() {
    this.box.replaceChildren(...this.files.map((u) => chip(u, () => this.remove(u))));
    this.box.hidden = !this.files.length;
  }

  /**
   * remove takes a file off the list and deletes its upload (a file a sent
   * question carries stays: the server answers 409, and nothing is said);
   * the focus goes to the next file's ×, else the message box.
   */
  remove(u) {
    const at = this.files.indexOf(u);
    this.files = this.files.filter((f) => f !== u);
    request('DELETE', '/api/uploads/' + encodeURIComponent(u.id)).catch(() => {});
    this.show();
    const next = this.box.querySelectorAll('.attachment__remove')[Math.min(at, this.files.length - 1)];
    (next || this.input).focus();
  }

  /** ids are the ids of the files attached. */
  ids() {
    return this.files.map((f) => f.id);
  }

  /** take returns the files attached and clears the list. */
  take() {
    const list = this.files;
    this.files = [];
    this.show();
    return list;
  }
}
