// Keyboard and screen readers at 1200 px: the message box comes before the
// conversation list in the tab order; the focus moves from Send to Stop
// and, when Stop goes, to the message box; Esc stops the turn (not while
// the next message is being typed); a
// conversation opened with the keyboard keeps the focus; the page's own
// controls are named by their visible text.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems, baseURL } from './lib.mjs';

const active = (page) => page.evaluate(() => {
  const a = document.activeElement;
  return { id: a.id, tag: a.tagName, cls: a.className, inSidebar: !!a.closest('#sidebar') };
});

await run('keyboard', async (browser) => {
  const { page, problems, context } = await openPage(browser);
  for (let i = 0; i < 40; i++) await context.request.post(baseURL + '/api/conversations', { data: { title: 'Conversation ' + i } });
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');

  // The message box is reached before any conversation.
  const order = [];
  for (let i = 0; i < 8 && (order.at(-1)?.id !== 'input'); i++) {
    await page.keyboard.press('Tab');
    order.push(await active(page));
  }
  assert(order.at(-1).id === 'input', 'Tab reaches the message box within 8 stops: ' + JSON.stringify(order));
  assert(!order.some((a) => a.inSidebar), 'no conversation comes before the message box: ' + JSON.stringify(order));

  // Send with the keyboard: the focus moves to Stop.
  await page.keyboard.type('Compare resuming a stream with cancelling a turn, and explain snapshots. Make a plan.');
  await page.keyboard.press('Tab');
  assert((await active(page)).id === 'send', 'Tab from the box goes to Send');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#stop:not([hidden])', { timeout: 15000 });
  assert((await active(page)).id === 'stop', 'the focus moved to Stop: ' + JSON.stringify(await active(page)));
  await page.waitForSelector('.message--live .toolcall', { timeout: 30000 });
  // Esc stops the turn; when Stop goes the focus is in the message box.
  const turnId = await page.$eval('.message--live', (el) => el.dataset.turnId);
  // Not while the next message is being typed: Esc there stops nothing.
  await page.focus('#input');
  await page.keyboard.type('the next question');
  await page.keyboard.press('Escape');
  await page.waitForTimeout(300);
  assert(await page.$('.message--live') && (await page.inputValue('#input')) === 'the next question', 'Esc while typing leaves the answer and the text');
  await page.fill('#input', '');
  await page.focus('#stop');
  await page.keyboard.press('Escape');
  await waitTurnEnd(page, 60000);
  const turn = await (await page.request.get(baseURL + '/api/turns/' + turnId)).json();
  assert(turn.turn.status === 'cancelled', 'Esc stopped the turn: ' + turn.turn.status);
  assert((await active(page)).id === 'input', 'the focus is in the message box once Stop goes: ' + JSON.stringify(await active(page)));

  // A conversation opened with the keyboard keeps the focus.
  await page.focus('.conversation__open >> nth=3');
  const href = await page.$eval('.conversation__open >> nth=3', (a) => a.getAttribute('href'));
  await page.keyboard.press('Enter');
  await page.waitForFunction((h) => location.hash === h && document.querySelector('.conversation--current .conversation__open')?.getAttribute('href') === h, href);
  await page.waitForFunction(() => document.querySelector('#conversation-title').textContent.startsWith('Conversation '));
  const a = await page.evaluate(() => document.activeElement.getAttribute('href'));
  assert(a === href, 'the opened conversation keeps the focus: ' + JSON.stringify(await active(page)));
  await shot(page, 'k-opened');

  // The page's controls are named by what they show.
  const hidden = await page.$$eval('#app :is(button, a, summary, input, textarea)[aria-label]', (els) => els
    .filter((e) => !e.closest('.markdown'))
    .map((e) => ({ label: e.getAttribute('aria-label'), text: e.innerText.trim() }))
    .filter(({ label, text }) => /\w/.test(text) && !label.toLowerCase().includes(text.toLowerCase())));
  assert(hidden.length === 0, 'aria-labels that hide visible text: ' + JSON.stringify(hidden));
  noProblems(problems);
});
