// Runs one AG-UI run against toolmark with @ag-ui/client's HttpAgent, whose
// verifier rejects out-of-order events.
// Usage: node ag-ui-run.mjs BASE_URL TOKEN THREAD_ID RUN_ID QUESTION
// Prints {"state":…,"messages":[…],"events":[types…],"outcome":…,"errors":[…]}
// as JSON; outcome is what HttpAgent made of RUN_FINISHED (success,
// cancelled), absent when the run did not finish.
import { HttpAgent } from '@ag-ui/client';

const [base, token, threadId, runId, question] = process.argv.slice(2);
const agent = new HttpAgent({
  url: `${base}/api/ag-ui`,
  headers: { Authorization: `Bearer ${token}` },
  threadId,
  initialMessages: [{ id: 'q1', role: 'user', content: question }],
});
const events = [];
const errors = [];
let outcome;
try {
  await agent.runAgent({ runId }, {
    onEvent: ({ event }) => { events.push(event.type); },
    onRunFinishedEvent: (e) => { outcome = e.outcome; },
    onRunFailed: ({ error }) => { errors.push(String(error && error.message || error)); },
  });
} catch (e) {
  errors.push(String(e && e.message || e));
}
process.stdout.write(JSON.stringify({ state: agent.state, messages: agent.messages, events, outcome, errors }));
