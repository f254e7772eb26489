// liveTextOf returns the text of stored content the way the live view keeps
// it: top-level text between tool calls, neutralisation undone, joined.
import { scanContent, restoreText } from '../static/toolcall.js';

export function liveTextOf(content) {
  return scanContent(content).filter((n) => n.text !== undefined).map((n) => restoreText(n.text)).join('');
}
