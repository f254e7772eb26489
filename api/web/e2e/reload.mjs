// A reload while the answer is being written: the page finds the turn in
// the conversation's activeTurn, draws the stored content and follows from
// the stored seq; the text is not duplicated and the turn completes. A
// second page follows the same turn at the same time.
import { run, openPage, ask, waitTurnEnd, widgets, shot, assert, noProblems, baseURL, recordLive, storedAnswerHTML } from './lib.mjs';

await run('reload', async (browser) => {
  const { page, context, problems } = await openPage(browser);
  await ask(page, 'How are tool calls stored, and how does a reload show final statuses?');
  await page.waitForFunction(() => {
    const b = document.querySelector('.message--live .message__body');
    return b && b.textContent.length > 30;
  }, null, { timeout: 30000 });
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

  const { turnId, html } = await page.evaluate(() => window.__live);
  const other = await second.evaluate(() => window.__live);
  assert(stillLive && turnId, 'the reloaded page followed the running turn');
  const stored = await storedAnswerHTML(page, turnId);
  assert(stored.turn.status === 'completed', 'turn completed: ' + stored.turn.status);
  assert(html === stored.html, `reloaded page: live HTML equals the stored html\n--- live:\n${html}\n--- stored:\n${stored.html}`);
  assert(other.html === stored.html, `second page: live HTML equals the stored html\n--- live:\n${other.html}\n--- stored:\n${stored.html}`);
  const a = await widgets(page);
  const b = await widgets(second);
  assert(JSON.stringify(a) === JSON.stringify(b), 'both pages show the same widgets');
  assert(a.length > 0 && a.every((w) => w.status === 'success'), 'final widgets: ' + JSON.stringify(a));
  noProblems(problems);
});
