// Asks one question of toolmark with the AI SDK's own client code, as
// useChat does: DefaultChatTransport's sendMessages with extra body fields
// (the model) and a user message of text and file parts (data: URLs or
// URLs of /api/uploads), read with readUIMessageStream.
// Usage: node ai-sdk-ask.mjs BASE_URL TOKEN CHAT_ID REQUEST_JSON
// REQUEST_JSON: {"trigger": "submit-message" | "regenerate-message",
// "parts": [...UIMessage parts], "body": {...}}.
// Prints {"message": the last UIMessage, "errors": [...]} as JSON.
import { DefaultChatTransport, readUIMessageStream } from 'ai';

const [base, token, chatId, request] = process.argv.slice(2);
const { trigger, parts, body } = JSON.parse(request);
const transport = new DefaultChatTransport({
  api: `${base}/api/ai-sdk/chat`,
  headers: { Authorization: `Bearer ${token}` },
});
const errors = [];
let last;
try {
  const stream = await transport.sendMessages({
    chatId,
    trigger,
    messageId: undefined,
    messages: [{ id: 'q1', role: 'user', parts }],
    abortSignal: undefined,
    body,
  });
  for await (const message of readUIMessageStream({
    stream,
    onError: (e) => errors.push(String(e && e.message || e)),
    terminateOnError: true,
  })) {
    last = message;
  }
} catch (e) {
  errors.push(String(e && e.message || e));
}
process.stdout.write(JSON.stringify({ message: last, errors }));
