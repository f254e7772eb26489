// Checks the page's markup code (static/toolcall.js) against the Go answers
// in a cases file written by the Go test TestPageParity: the tags found in
// content (toolcallmarkup.Parse), RestoreText, and the widgets' status texts
// (markdown.DefaultStatusTexts). Prints every mismatch; exits 1 on any.
import fs from 'node:fs';
import { scanContent, restoreText, statusText } from '../static/toolcall.js';

const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
let bad = 0;
const fail = (what, input, got, want) => {
  bad++;
  if (bad <= 20) console.log(`MISMATCH ${what}\n  input: ${JSON.stringify(input)}\n  got:   ${JSON.stringify(got)}\n  want:  ${JSON.stringify(want)}`);
};

function flatten(nodes, out = []) {
  for (const n of nodes) {
    if (n.call) {
      const attrs = Object.entries(n.call.attrs).map(([k, v]) => [k, v]);
      out.push({ id: n.call.id, type: n.call.type, status: n.call.status, error: n.call.error, parentId: n.call.parentId, attrs });
      flatten(n.children, out);
    }
  }
  return out;
}

for (const c of cases.parse) {
  const got = flatten(scanContent(c.content));
  if (JSON.stringify(got) !== JSON.stringify(c.calls)) fail('parse', c.content, got, c.calls);
}
for (const c of cases.restore) {
  const got = restoreText(c.text);
  if (got !== c.want) fail('restoreText', c.text, got, c.want);
}
for (const c of cases.status) {
  const got = statusText(c.call);
  if (got !== c.want) fail('statusText', c.call, got, c.want);
}
console.log(`${cases.parse.length} parse, ${cases.restore.length} restore, ${cases.status.length} status cases, ${bad} mismatches`);
process.exitCode = bad ? 1 : 0;
