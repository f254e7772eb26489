// A minimal useChat page pointed at toolmark, bundled with esbuild by the
// browser test (e2e/usechat_test.go): each message's parts as elements
// whose data attributes the test reads.
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';
import { createRoot } from 'react-dom/client';
import { useState } from 'react';

const chatId = new URLSearchParams(location.search).get('chat');

function Part({ part }) {
  if (part.type === 'text') return <p className="text">{part.text}</p>;
  if (part.type.startsWith('tool-')) {
    return <div className="tool" data-call={part.toolCallId} data-state={part.state}>{part.type} {part.state}</div>;
  }
  return null;
}

function App({ initial }) {
  const [input, setInput] = useState('');
  const { messages, sendMessage, stop, status, error } = useChat({
    id: chatId, messages: initial, resume: true,
    transport: new DefaultChatTransport({ api: '/api/ai-sdk/chat' }),
  });
  const onStop = () => { stop(); fetch(`/api/ai-sdk/chat/${chatId}/stop`, { method: 'POST' }); };
  return (
    <main data-status={status}>
      {messages.map((m) => (
        <section key={m.id} className={`msg ${m.role}`} data-id={m.id}>
          {m.parts.map((p, i) => <Part key={i} part={p} />)}
        </section>
      ))}
      {error && <p id="error">{String(error.message)}</p>}
      <form onSubmit={(e) => { e.preventDefault(); sendMessage({ text: input }); setInput(''); }}>
        <input id="q" value={input} onChange={(e) => setInput(e.target.value)} />
        <button id="send" type="submit">Send</button>
        <button id="stop" type="button" onClick={onStop}>Stop</button>
      </form>
    </main>
  );
}

const res = await fetch(`/api/ai-sdk/chat/${chatId}`);
const initial = res.ok ? await res.json() : [];
createRoot(document.getElementById('root')).render(<App initial={initial} />);
