// Runs one AG-UI run against toolmark with @ag-ui/client's HttpAgent: a
// user message whose content is parts (text, image and document parts with
// a data or url source, as @ag-ui/core 1.0.0 defines them) and
// forwardedProps (the model).
// Usage: node ag-ui-ask.mjs BASE_URL TOKEN THREAD_ID RUN_ID REQUEST_JSON
// REQUEST_JSON: {"content": string | [...parts], "forwardedProps": {...}}.
// Prints {"messages": [...], "outcome": …, "errors": [...]} as JSON.
import { HttpAgent } from '@ag-ui/client';

const [base, token, threadId, runId, request] = process.argv.slice(2);
const { content, forwardedProps } = JSON.parse(request);
const agent = new HttpAgent({
  url: `${base}/api/ag-ui`,
  headers: { Authorization: `Bearer ${token}` },
  threadId,
  initialMessages: [{ id: 'q1', role: 'user', content }],
});
const errors = [];
let outcome;
try {
  await agent.runAgent({ runId, forwardedProps }, {
    onRunFinishedEvent: (e) => { outcome = e.outcome; },
    onRunFailed: ({ error }) => { errors.push(String(error && error.message || error)); },
  });
} catch (e) {
  errors.push(String(e && e.message || e));
}
process.stdout.write(JSON.stringify({ messages: agent.messages, outcome, errors }));
