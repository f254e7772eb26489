// answer.js — an answer as Markdown, for "Copy answer".
//
// This is the one place the page knows the shape of the ToolCall markup,
// and only to leave it out: by the markup's rules (docs/markup.md) a tag is
// one line, "<ToolCall …>" or "</ToolCall>", values escape '>', and stored
// text never holds a tag (it is neutralised), so the elements are found by
// their tags; a nested call lies inside its parent's element.

/** answerMarkdown returns an answer's stored content with its ToolCall elements left out. */
export function answerMarkdown(content) {
  let depth = 0;
  let out = '';
  let last = 0;
  for (const m of content.matchAll(/<ToolCall\b[^>\n]*>|<\/ToolCall>/g)) {
    if (depth === 0) out += content.slice(last, m.index);
    depth = Math.max(0, depth + (m[0][1] === '/' ? -1 : 1));
    last = m.index + m[0].length;
  }
  if (depth === 0) out += content.slice(last);
  return out.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}
