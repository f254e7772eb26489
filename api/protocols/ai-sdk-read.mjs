// Reads one chat turn from toolmark with the AI SDK's own client code:
// DefaultChatTransport (which validates every part against the SDK's
// schema) and readUIMessageStream (which builds the UIMessage from them).
// Usage: node ai-sdk-read.mjs BASE_URL TOKEN CHAT_ID QUESTION
// Prints {"messages":[…UIMessage snapshots' last…],"errors":[…]} as JSON.
import { DefaultChatTransport, readUIMessageStream } from 'ai';

const [base, token, chatId, question] = process.argv.slice(2);
const transport = new DefaultChatTransport({
  api: `${base}/api/ai-sdk/chat`,
  headers: { Authorization: `Bearer ${token}` },
});
const errors = [];
const stream = await transport.sendMessages({
  chatId,
  trigger: 'submit-message',
  messageId: undefined,
  messages: [{ id: 'q1', role: 'user', parts: [{ type: 'text', text: question }] }],
  abortSignal: undefined,
});
const ids = new Set();
let last;
try {
  for await (const message of readUIMessageStream({
    stream,
    onError: (e) => errors.push(String(e && e.message || e)),
    terminateOnError: true,
  })) {
    ids.add(message.id);
    last = message;
  }
} catch (e) {
  errors.push(String(e && e.message || e));
}
process.stdout.write(JSON.stringify({ ids: [...ids], message: last, errors }));
