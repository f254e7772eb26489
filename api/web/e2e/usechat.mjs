// A useChat page (api/protocols/usechat, bundled with esbuild) pointed at
// toolmark: tool parts live, a reload mid-turn with resume: true (no
// duplicated text), and Stop (stop() plus the stop route) ends the turn
// with no part left running.
import { run, assert, baseURL, shot } from './lib.mjs';

const final = (s) => s === 'output-available' || s === 'output-error';

async function states(page) {
  return page.$$eval('.msg.assistant:last-of-type .tool', (els) => els.map((e) => e.dataset.state));
}

async function lastText(page) {
  return page.$$eval('.msg.assistant:last-of-type .text', (els) => els.map((e) => e.textContent).join(''));
}

async function history() {
  const res = await fetch(`${baseURL}/api/ai-sdk/chat/c1`);
  return res.json();
}

await run('usechat', async (browser) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${baseURL}/?chat=c1`);

  // 1. Tool parts live, then all final; the text is the stored answer.
  const seen = new Set();
  const watch = setInterval(async () => { for (const s of await states(page).catch(() => [])) seen.add(s); }, 20);
  await page.fill('#q', 'How does resume work, and what happens on cancellation?');
  await page.click('#send');
  await page.waitForSelector('main[data-status="streaming"]');
  await page.waitForSelector('main[data-status="ready"]', { timeout: 60000 });
  clearInterval(watch);
  let s = await states(page);
  assert(s.length >= 2 && s.every(final), 'tool parts all final: ' + s);
  assert([...seen].some((x) => !final(x)), 'a tool part was seen live before its end: ' + [...seen]);
  let h = await history();
  let stored = h[h.length - 1].parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
  assert(stored !== '' && (await lastText(page)) === stored, 'the text is the stored answer');
  await shot(page, 'usechat-done');

  // 2. Reload mid-turn: resume brings the turn from its start, once.
  await page.fill('#q', 'And what about snapshots?');
  await page.click('#send');
  await page.waitForSelector('.msg.assistant:last-of-type .tool', { timeout: 30000 });
  await page.reload();
  await page.waitForSelector('main[data-status="streaming"]', { timeout: 30000 });
  await page.waitForSelector('main[data-status="ready"]', { timeout: 60000 });
  h = await history();
  stored = h[h.length - 1].parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
  assert((await page.$$('.msg.assistant')).length === 2, 'two answers after the reload');
  assert((await lastText(page)) === stored, `no duplicated text after the resume: ${JSON.stringify(await lastText(page))} vs ${JSON.stringify(stored)}`);
  s = await states(page);
  assert(s.length > 0 && s.every(final), 'resumed tool parts all final: ' + s);

  // 3. Stop: the turn ends, no part is left running.
  await page.fill('#q', 'Compare resuming with cancelling.');
  await page.click('#send');
  await page.waitForFunction(() => {
    const a = document.querySelectorAll('.msg.assistant');
    return a.length === 3 && a[2].querySelector('.tool');
  }, null, { timeout: 30000 }).catch(async (e) => {
    throw new Error(`${e.message}; the page: ${await page.innerHTML('body')}`);
  });
  await page.click('#stop');
  await page.waitForSelector('main[data-status="ready"]', { timeout: 30000 });
  await page.waitForTimeout(300);
  await page.reload();
  await page.waitForFunction(() => document.querySelectorAll('.msg.assistant').length === 3, null, { timeout: 30000 });
  s = await states(page);
  assert(s.every(final), 'no tool part running after Stop and a reload: ' + s);
  const conv = await (await fetch(`${baseURL}/api/conversations/c1`)).json();
  const last = conv.messages[conv.messages.length - 1];
  const turn = await (await fetch(`${baseURL}/api/turns/${last.turnId}`)).json();
  assert(turn.turn.status === 'cancelled', 'the turn is cancelled: ' + turn.turn.status);
  assert(errors.length === 0, 'page errors: ' + errors);
  await shot(page, 'usechat-stopped');
});
