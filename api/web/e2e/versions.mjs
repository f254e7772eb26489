// Versions: every question offers Edit and every answer Regenerate; an
// earlier question edited shows "2/2", "Previous version" brings the first
// branch back whole (the questions after it included), after a reload too,
// and "Next version" the edited one, at 1200 px and on a phone.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems } from './lib.mjs';

const questions = (page) => page.$$eval('#messages .message--user .message__body', (els) => els.map((e) => e.textContent));
const counts = (page) => page.$$eval('#messages .versions__count', (els) => els.map((e) => e.textContent));

async function check(browser, opts, tag) {
  const { page, problems } = await openPage(browser, opts);
  const first = ['What is a lease?', 'How does resume work?', 'What is a snapshot?'];
  for (const q of first) {
    await ask(page, q);
    await waitTurnEnd(page);
  }
  const edits = await page.$$eval('#messages .message--user .action[data-action="edit"]', (els) => els.length);
  const regens = await page.$$eval('#messages .message--assistant .action[data-action="regenerate"]', (els) => els.length);
  assert(edits === 3 && regens === 3, `${tag}: every question offers Edit (${edits}) and every answer Regenerate (${regens})`);

  // Edit the second question.
  await page.locator('#messages .message--user').nth(1).locator('.action[data-action="edit"]').click();
  await page.getByRole('textbox', { name: 'Edit message' }).fill('How does cancellation work?');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.waitForSelector('.message--live', { timeout: 10000 });
  await waitTurnEnd(page);
  await page.waitForSelector('#messages .versions');
  assert(JSON.stringify(await questions(page)) === JSON.stringify(['What is a lease?', 'How does cancellation work?']), `${tag}: the edit replaced the tail: ${await questions(page)}`);
  assert(JSON.stringify(await counts(page)) === '["2/2"]', `${tag}: the edited question says 2/2: ${await counts(page)}`);
  await shot(page, `versions-${tag}-edited`);

  // Back to version 1: the first branch, whole.
  await page.getByRole('button', { name: 'Previous version' }).click();
  await page.waitForFunction(() => document.querySelector('#messages .versions__count')?.textContent === '1/2');
  assert(JSON.stringify(await questions(page)) === JSON.stringify(first), `${tag}: version 1 shows the first branch whole: ${await questions(page)}`);
  const answers = await page.$$eval('#messages .message--assistant', (els) => els.length);
  assert(answers === 3, `${tag}: with its three answers: ${answers}`);
  await shot(page, `versions-${tag}-first`);
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#messages .versions');
  assert(JSON.stringify(await questions(page)) === JSON.stringify(first), `${tag}: after a reload too: ${await questions(page)}`);
  assert(JSON.stringify(await counts(page)) === '["1/2"]', `${tag}: 1/2 after the reload: ${await counts(page)}`);

  // Forward to version 2 again.
  await page.getByRole('button', { name: 'Next version' }).click();
  await page.waitForFunction(() => document.querySelector('#messages .versions__count')?.textContent === '2/2');
  assert(JSON.stringify(await questions(page)) === JSON.stringify(['What is a lease?', 'How does cancellation work?']), `${tag}: version 2 again: ${await questions(page)}`);
  const doc = await page.evaluate(() => document.scrollingElement.scrollHeight === innerHeight);
  assert(doc, `${tag}: the app stays in the window`);
  noProblems(problems);
  await page.context().close();
}

await run('versions', async (browser) => {
  await check(browser, { viewport: { width: 1200, height: 820 } }, 'wide');
  await check(browser, { viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true }, 'phone');
});
