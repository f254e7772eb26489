// The live answer: the status bubble says Thinking… before the first
// token, shows each tool's status text while it runs and is cleared by the
// answer's first token; the answer is rendered markdown (<strong>, <li>,
// <code>) while it streams; a widget folded by the reader stays folded and
// keeps its element while text streams around it; at the end the live HTML
// equals the stored message's html, before and after a reload; the copy
// buttons copy. Screenshots of a running and a finished turn go to the
// README.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems, recordLive, storedAnswerHTML, shownAnswerHTML, baseURL, readmeShot } from './lib.mjs';

async function checkTurn(page, name, { wantTypes }) {
  const live = await page.evaluate(() => window.__live);
  const snaps = live.snapshots;
  assert(live.turnId, `${name}: a live turn was seen`);
  // Thinking… first, before any answer text.
  const firstBubble = snaps.find((s) => s.bubble);
  assert(firstBubble && firstBubble.bubble === 'Thinking…', `${name}: the first status is Thinking…: ${JSON.stringify(live.bubbles)}`);
  assert(firstBubble.text === 0, `${name}: Thinking… shows before the first token`);
  // Each tool's status text in the bubble while the tool runs.
  for (const type of wantTypes) {
    const shown = snaps.some((s) => s.running.some((w) => w.type === type && w.text === s.bubble));
    assert(shown, `${name}: the bubble showed a ${type} status while it ran: ${JSON.stringify(live.bubbles)}`);
  }
  assert(live.bubbles.some((b) => b.includes(':\n')), `${name}: a two-line status (its subject on the second line): ${JSON.stringify(live.bubbles)}`);
  // The answer's first token clears the bubble.
  const withText = snaps.filter((s) => s.text > 0);
  assert(withText.length > 0, `${name}: answer text streamed`);
  assert(withText.every((s) => s.bubble === '' || s.running.length > 0), `${name}: no status once the answer streams`);
  // No raw emphasis or code markers flash while the answer streams.
  assert(snaps.every((s) => !s.raw), `${name}: no raw ** or backticks while streaming`);
  // Rendered markdown before the end.
  assert(snaps.some((s) => s.strong), `${name}: <strong> in the live answer`);
  assert(snaps.some((s) => s.li), `${name}: <li> in the live answer`);
  assert(snaps.some((s) => s.code), `${name}: <code> in the live answer`);
  // Live HTML == final HTML.
  const stored = await storedAnswerHTML(page, live.turnId);
  assert(stored.turn.status === 'completed', `${name}: the turn completed: ${stored.turn.status}`);
  assert(live.html === stored.html, `${name}: the live HTML equals the stored html\n--- live:\n${live.html}\n--- stored:\n${stored.html}`);
  assert((await shownAnswerHTML(page)) === stored.html, `${name}: the page shows the stored html`);
  // The turn's tokens under the answer, as the API gives them.
  const conv = await (await page.request.get(baseURL + '/api/conversations/' + (await page.evaluate(() => location.hash.slice(1))))).json();
  const usage = conv.messages.filter((m) => m.role === 'assistant').pop().usage;
  const usageLine = await page.textContent('.message--assistant:last-of-type .message__usage');
  assert(usage && usageLine && usageLine.replace(/[,.\u00a0\u202f]/g, '').replace(/\D+/g, ' ').trim() === `${usage.inputTokens} ${usage.outputTokens}`,
    `${name}: the answer shows its tokens: ${JSON.stringify(usageLine)} for ${JSON.stringify(usage)}`);
  return live;
}

await run('live', async (browser) => {
  const { page, problems, context } = await openPage(browser);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.evaluate(recordLive);

  // 1. A search, an answer with emphasis, a list, code and a code block.
  await ask(page, 'How do clients resume a stream after a dropped connection? Show an example.');
  await waitTurnEnd(page);
  await checkTurn(page, 'search', { wantTypes: ['search_documents'] });

  // The copy buttons copy.
  await page.click('.message--assistant:last-of-type .copy-answer');
  const answer = await page.evaluate(() => navigator.clipboard.readText());
  // Copy answer copies the Markdown: the stored content without the ToolCall elements.
  const conv = await (await page.request.get(baseURL + '/api/conversations/' + (await page.evaluate(() => location.hash.slice(1))))).json();
  const content = conv.messages.filter((m) => m.role === 'assistant').pop().content;
  assert(answer.includes('To resume, a client reconnects') && answer.includes('Sources:') && !answer.includes('Copy'),
    'Copy answer copies the answer: ' + answer);
  assert(answer.includes('```') && content.includes(answer.split('\n')[0]) && !answer.includes('<ToolCall') && !answer.includes('Found '),
    'Copy answer copies the Markdown, without the tool calls: ' + answer);
  await page.click('.message--assistant:last-of-type pre .code__copy');
  const code = await page.evaluate(() => navigator.clipboard.readText());
  assert(code.trim() === "curl -N -H 'Last-Event-ID: 42' http://127.0.0.1:8080/api/turns/TURN_ID/events", 'Copy copies the code block: ' + code);
  assert((await page.textContent('.message--assistant:last-of-type pre .code__copy')) === 'Copied', 'the button says it copied');
  assert(await page.$('.message--assistant:last-of-type pre.chroma code .nb, .message--assistant:last-of-type pre.chroma code span[class]'),
    'the code block is highlighted on the server');
  const link = await page.$('.message--assistant a[href]');
  if (link) {
    assert((await link.getAttribute('target')) === '_blank' && (await link.getAttribute('rel')).includes('noopener noreferrer'), 'links open in a new tab');
  }

  // 2. In a new chat: a plan, sub-agents with nested searches, a refused page.
  await page.click('#new-conversation');
  await page.evaluate(recordLive);
  await ask(page, 'Research how cancellation works; what happens after a crash? See http://127.0.0.1:9/status');
  const sub = await page.waitForSelector('.message--live .toolcall[data-tool-type="subagent"]:has(.toolcall__children)', { timeout: 30000 });
  // Fold the first sub-agent's steps and mark its element.
  await sub.evaluate((el) => {
    el.__marked = true;
  });
  const fold = await sub.$(':scope > button.toolcall__fold');
  assert(fold && (await fold.getAttribute('aria-expanded')) === 'true', 'the sub-agent widget has a fold button, expanded');
  await fold.click();
  assert(await sub.evaluate((el) => el.hasAttribute('data-ui-folded')), 'the sub-agent widget folds');
  assert((await fold.getAttribute('aria-expanded')) === 'false', 'the fold button says it is folded');
  await page.waitForSelector('.message--live .bubble:not([hidden])');
  await readmeShot(page, 'running');
  // Text streams around it; it stays the same, folded element.
  await page.waitForFunction(() => {
    const live = document.querySelector('.message--live');
    return live && live.querySelector('.message__body > p strong');
  }, null, { timeout: 60000 });
  const kept = await sub.evaluate((el) => el.isConnected && el.__marked === true && el.hasAttribute('data-ui-folded'));
  assert(kept, 'the folded widget kept its element and its state while the answer streamed');
  await waitTurnEnd(page);
  const live = await checkTurn(page, 'research', { wantTypes: ['subagent', 'search_documents'] });
  assert(live.bubbles.some((b) => b.startsWith('Sub-agent working on:')), 'a sub-agent status: ' + JSON.stringify(live.bubbles));
  assert(await sub.evaluate((el) => el.isConnected && el.hasAttribute('data-ui-folded')), 'the widget stays folded once the answer is stored');
  // The refused page: a short error a user can read, said in the answer too.
  const err = await page.textContent('.message--assistant:last-of-type .toolcall[data-tool-type="fetch_url"] .toolcall__error');
  assert(err === '127.0.0.1 is a local or private address, which fetch_url does not visit', 'fetch error: ' + err);
  assert((await page.textContent('.message--assistant:last-of-type .message__body')).includes('I could not fetch http://127.0.0.1:9/status'),
    'the answer reports the failed fetch in a sentence of its own');
  // The plan ended done; it is under the answer, folded.
  const plan = await page.$$eval('.message--assistant:last-of-type .todos .todo', (els) => els.map((e) => e.dataset.status));
  assert(plan.length >= 3 && plan.every((s) => s === 'done'), 'plan: ' + JSON.stringify(plan));
  assert((await page.textContent('.message--assistant:last-of-type .todos__count')) === `${plan.length}/${plan.length} done`, 'the plan counts what is done');
  await page.click('.message--assistant:last-of-type .todos summary');
  await page.evaluate(() => document.querySelector('#messages').scrollTo(0, 1e6));
  await readmeShot(page, 'finished');

  // After a reload: the same html.
  const turnId = live.turnId;
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('.message--assistant');
  const stored = await storedAnswerHTML(page, turnId);
  assert((await shownAnswerHTML(page)) === stored.html, 'the reloaded page shows the stored html');
  noProblems(problems);
});
