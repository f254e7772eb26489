// Checks a sequence of AG-UI events the way @ag-ui/client does for a run:
// each against @ag-ui/core's schema, the sequence with the client's own
// verifier (verifyEvents), which rejects out-of-order events.
// Usage: node ag-ui-verify.mjs < events.json   (a JSON array of events)
// Prints {"errors":[…]} as JSON.
import { verifyEvents } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas'; // the schemas @ag-ui/client parses events with
import { from, lastValueFrom } from 'rxjs';
import { readFileSync } from 'node:fs';

const events = JSON.parse(readFileSync(0, 'utf8'));
const errors = [];
const parsed = [];
for (const e of events) {
  const r = EventSchemas.safeParse(e);
  if (r.success) parsed.push(r.data);
  else errors.push(`${e.type}: ${r.error.message}`);
}
try {
  await lastValueFrom(from(parsed).pipe(verifyEvents(false)), { defaultValue: null });
} catch (e) {
  errors.push(String(e && e.message || e));
}
process.stdout.write(JSON.stringify({ errors }));
