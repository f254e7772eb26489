// composer.js — the message box and its Send / Stop button. Enter sends
// and Shift+Enter adds a line; on a touch screen Enter adds a line and the
// Send button sends. The box grows with its text up to a limit. When Send
// becomes Stop (and back) the focus moves with it, never to the page.

import { $, coarse, showError } from './dom.js';
import { Attachments } from './attach.js';
import { ModelPicker } from './models.js';

export class Composer {
  constructor({ form, input, send, stop, picker, model, onSend, onStop }) {
    this.form = form;
    // The files attached to the next message (attach.js).
    this.attach = new Attachments({ form, input, button: $('#attach'), file: $('#attach-file'), box: $('#attachments'), onError: showError });
    this.picker = new ModelPicker(picker, model); // the model to answer (models.js)
    this.input = input;
    this.send = send;
    this.stop = stop;
    this.busy = false;
    this.isSending = false;
    this.isStopping = false;
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      onSend();
    });
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && !coarse()) {
        e.preventDefault();
        onSend();
      }
    });
    input.addEventListener('input', () => this.grow());
    stop.addEventListener('click', onStop);
    // The keys' hint only where it is true (not on a touch screen) and fits (not on a narrow one).
    const full = input.placeholder;
    const narrow = window.matchMedia('(max-width: 720px)');
    const hint = () => {
      input.placeholder = coarse() || narrow.matches ? 'Ask something…' : full;
    };
    narrow.addEventListener('change', hint);
    hint();
  }

  get value() {
    return this.input.value;
  }

  set value(v) {
    this.input.value = v;
    this.grow();
  }

  /** grow fits the box's height to its text (the stylesheet caps it). */
  grow() {
    const el = this.input;
    el.style.height = 'auto';
    el.style.height = el.scrollHeight + 2 + 'px';
  }

  focus() {
    this.input.focus();
  }

  /**
   * sending marks Send unusable while a message is on its way (with
   * aria-disabled, not disabled: a disabled button loses the focus).
   */
  sending(on) {
    this.isSending = on;
    this.send.setAttribute('aria-disabled', String(on));
  }

  /** setBusy shows Stop while an answer is written, Send otherwise. */
  setBusy(busy) {
    const had = document.activeElement;
    this.busy = busy;
    this.stop.hidden = !busy;
    this.stopping(false);
    this.send.hidden = busy;
    this.send.disabled = busy;
    this.sending(false);
    this.form.setAttribute('aria-busy', busy ? 'true' : 'false');
    if (busy && had === this.send) this.stop.focus();
    else if (!busy && (had === this.stop || had === document.body)) this.input.focus();
  }

  /** stopping says a stop was asked (false: it failed, Stop again). */
  stopping(on) {
    this.isStopping = on;
    this.stop.setAttribute('aria-disabled', String(on));
    this.stop.textContent = on ? 'Stopping…' : 'Stop';
  }
}
