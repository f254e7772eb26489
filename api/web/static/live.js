// live.js — the live answer: the blocks of rendered HTML the server sends
// in "render" frames (GET /api/turns/{id}/events?render=html), put into the
// page without redrawing what did not change.
//
// The HTML comes from the server's renderer and HTML policy (package
// markdown), the same that renders stored messages, so the page never turns
// model text into markup itself. A frame replaces some blocks; the page
// morphs the DOM of the blocks from the first changed one to the end into
// the new HTML: nodes that are equal stay, elements of the same kind are
// updated in place, tool widgets are matched by their data-tool-call-id.
// So a widget keeps its element — its spinner turns on, its expanded or
// collapsed state stays — while the text around it streams, and nothing
// above the changed block moves.

const template = document.createElement('template');

/** parseHTML parses server-rendered, sanitised HTML into detached nodes. */
export function parseHTML(html) {
  template.innerHTML = html; // server-sanitised HTML (package markdown)
  return [...template.content.childNodes];
}

/** isUI tells the page's own controls (copy buttons) from rendered nodes. */
const isUI = (n) => n.nodeType === Node.ELEMENT_NODE && n.hasAttribute('data-ui');

const keyOf = (n) => (n.nodeType === Node.ELEMENT_NODE && n.dataset.toolCallId) || '';

function sameKind(a, b) {
  if (a.nodeType !== b.nodeType) return false;
  if (a.nodeType === Node.ELEMENT_NODE) return a.tagName === b.tagName && !keyOf(a) && !keyOf(b);
  return true;
}

/** morphNode makes o look like n, keeping o (and the state the page keeps on it). */
function morphNode(o, n) {
  if (o.nodeType !== Node.ELEMENT_NODE) {
    if (o.nodeValue !== n.nodeValue) o.nodeValue = n.nodeValue;
    return;
  }
  // Math the page typeset (math.js) stays while its source is the same.
  if (o.hasAttribute('data-ui-source') && o.getAttribute('data-ui-source') === n.textContent) return;
  for (const a of [...o.attributes]) {
    // open (a <details> the reader opened) and data-ui-* are the page's.
    if (a.name === 'open' || a.name.startsWith('data-ui')) continue;
    if (!n.hasAttribute(a.name)) o.removeAttribute(a.name);
  }
  for (const a of n.attributes) {
    if (o.getAttribute(a.name) !== a.value) o.setAttribute(a.name, a.value);
  }
  const kids = [...o.childNodes];
  const ui = kids.find(isUI) || null;
  morphList(o, kids.filter((k) => !isUI(k)), [...n.childNodes], ui);
}

/**
 * morphList turns oldNodes (children of parent, in order) into newNodes:
 * matching old nodes are kept and morphed, the rest inserted or removed.
 * The result is placed before `before`. It returns the resulting nodes.
 */
export function morphList(parent, oldNodes, newNodes, before) {
  const keyed = new Map();
  for (const o of oldNodes) {
    const k = keyOf(o);
    if (k) keyed.set(k, o);
  }
  const used = new Set();
  const result = [];
  let oi = 0;
  for (const n of newNodes) {
    let match = null;
    const k = keyOf(n);
    if (k) {
      match = keyed.get(k) || null;
      if (match && (used.has(match) || match.tagName !== n.tagName)) match = null;
    } else {
      while (oi < oldNodes.length && (used.has(oldNodes[oi]) || keyOf(oldNodes[oi]))) oi++;
      if (oi < oldNodes.length && sameKind(oldNodes[oi], n)) match = oldNodes[oi++];
    }
    if (match) {
      used.add(match);
      morphNode(match, n);
      result.push(match);
    } else {
      result.push(n);
    }
  }
  for (const o of oldNodes) if (!used.has(o)) o.remove();
  let ref = before;
  for (let i = result.length - 1; i >= 0; i--) {
    const node = result[i];
    if (node.parentNode !== parent || node.nextSibling !== ref) parent.insertBefore(node, ref);
    ref = node;
  }
  return result;
}

/**
 * LiveBlocks keeps the rendered blocks of one answer in a container. Each
 * block starts at an empty text node (its anchor), which adds nothing to
 * the container's HTML.
 */
export class LiveBlocks {
  constructor(root) {
    this.root = root;
    this.html = []; // the HTML of each block, as the server sent it
    this.anchors = [];
  }

  /**
   * apply applies a render frame: {reset, count, blocks: [{i, html, from}]}.
   * A block with from continues the block held after its first `from`
   * characters (a paragraph or code block that only grew).
   */
  apply(frame) {
    const count = frame.count | 0;
    let from = frame.reset ? 0 : Math.min(count, this.html.length);
    if (frame.reset) this.html = [];
    for (const b of frame.blocks || []) {
      this.html[b.i] = b.from ? (this.html[b.i] || '').slice(0, b.from) + b.html : b.html;
      from = Math.min(from, b.i);
    }
    this.html.length = count;
    for (let i = 0; i < count; i++) if (this.html[i] === undefined) this.html[i] = '';
    // The DOM from the first changed block to the end is morphed into the
    // new HTML of those blocks.
    const start = from < this.anchors.length ? this.anchors[from] : null;
    const old = [];
    if (start) {
      for (let n = start; n; n = n.nextSibling) old.push(n);
    } else if (from === 0) {
      old.push(...this.root.childNodes);
    }
    const fresh = [];
    const firstOf = [];
    for (let i = from; i < count; i++) {
      firstOf.push(fresh.length);
      fresh.push(document.createTextNode('')); // the block's anchor
      fresh.push(...parseHTML(this.html[i]));
    }
    // Anchors are matched by position only: keep them out of the morph.
    const oldContent = old.filter((n) => !(n.nodeType === Node.TEXT_NODE && n.nodeValue === '' && this.anchors.includes(n)));
    for (const a of old) if (!oldContent.includes(a)) a.remove();
    const contentNew = fresh.filter((n, idx) => !firstOf.includes(idx));
    const placed = morphList(this.root, oldContent, contentNew, null);
    // Put the anchors back in front of each block's first node.
    this.anchors.length = from;
    let p = 0;
    for (let i = from; i < count; i++) {
      const a = fresh[firstOf[i - from]];
      const blockLen = (i + 1 < count ? firstOf[i + 1 - from] : fresh.length) - firstOf[i - from] - 1;
      const first = placed[p] || null;
      this.root.insertBefore(a, first);
      this.anchors.push(a);
      p += blockLen;
    }
  }

  /** text returns the HTML of all blocks: what the server rendered. */
  serverHTML() {
    return this.html.join('');
  }
}
