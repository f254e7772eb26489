// A reload while the answer is being written: the page finds the turn in
// the conversation's activeTurn, draws the stored content and follows from
// the stored seq; the text is not duplicated and the turn completes. A
// second page follows the same turn at the same time.
import { run, openPage, ask, waitTurnEnd, widgets, shot, assert, noProblems, baseURL } from './lib.mjs';
import { liveTextOf } from './text.mjs';

const recordLive = () => {
  window.__live = { text: null, turnId: null };
  new MutationObserver(() => {
    const live = document.querySelector('.message--live');
    if (!live) return;
    window.__live.turnId = live.dataset.turnId;
    window.__live.text = [...live.querySelectorAll('.live-text')].map((e) => e.raw).join('');
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
};

await run('reload', async (browser) => {
  const { page, context, problems } = await openPage(browser);
  await ask(page, 'How are tool calls stored, and how does a reload show final statuses?');
  await page.waitForFunction(() => [...document.querySelectorAll('.message--live .live-text')].some((e) => e.textContent.length > 30), null, { timeout: 30000 });
  const hash = await page.evaluate(() => location.hash);
  assert(hash.length > 1, 'the conversation is in the URL');

  // A second tab on the same conversation while the answer streams.
  const second = await context.newPage();
  await second.goto(baseURL + '/' + hash);
  await second.waitForSelector('body[data-ready="true"]');
  await second.evaluate(recordLive);

  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.evaluate(recordLive);
  const stillLive = await page.$('.message--live');
  await shot(page, 'e-reloaded-mid-turn');
  await Promise.all([waitTurnEnd(page, 90000), waitTurnEnd(second, 90000)]);
  await shot(page, 'e-done');

  const { turnId, text } = await page.evaluate(() => window.__live);
  const other = await second.evaluate(() => window.__live);
  assert(stillLive && turnId, 'the reloaded page followed the running turn');
  const turn = await (await page.request.get(baseURL + '/api/turns/' + turnId)).json();
  assert(turn.turn.status === 'completed', 'turn completed: ' + turn.turn.status);
  const want = liveTextOf(turn.content);
  assert(text === want, `reloaded page: live text equals the stored text\n--- live:\n${text}\n--- stored:\n${want}`);
  assert(other.text === want, `second page: live text equals the stored text\n--- live:\n${other.text}\n--- stored:\n${want}`);
  const a = await widgets(page);
  const b = await widgets(second);
  assert(JSON.stringify(a) === JSON.stringify(b), 'both pages show the same widgets');
  assert(a.length > 0 && a.every((w) => w.status === 'success'), 'final widgets: ' + JSON.stringify(a));
  noProblems(problems);
});
