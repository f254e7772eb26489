// (c) The Stop button cancels the turn: the widgets that had not finished
// show cancelled (⊘) live and after the reload, no spinner is left, and the
// server says the turn is cancelled. A Stop that cannot reach the server
// says so in the banner, which stays while the server cannot be reached
// and goes once it answers again, the answer still running.
import { run, openPage, ask, waitTurnEnd, widgets, shot, assert, noProblems, baseURL } from './lib.mjs';

await run('stop', async (browser) => {
  const { page, problems } = await openPage(browser);
  await page.evaluate(() => {
    window.__live = { turnId: null, statuses: {} };
    new MutationObserver(() => {
      const live = document.querySelector('.message--live, .message--ended');
      if (!live) return;
      window.__live.turnId = live.dataset.turnId;
      for (const el of live.querySelectorAll('.toolcall')) window.__live.statuses[el.dataset.toolCallId] = el.dataset.status;
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
  await ask(page, 'Compare resuming a stream with cancelling a turn, and explain snapshots. Make a plan.');
  await page.waitForSelector('#todos:not([hidden]) .todo--in_progress', { timeout: 30000 });
  // Stop while the first tool call is still open (its arguments stream
  // slowly in this test).
  await page.waitForSelector('.message--live .toolcall--pending, .message--live .toolcall--running', { timeout: 30000 });
  await shot(page, 'c-before-stop');
  assert(await page.isVisible('#stop'), 'the Stop button shows while the turn runs');
  await page.click('#stop');
  await page.waitForTimeout(150);
  await shot(page, 'c-stopping');
  await waitTurnEnd(page, 60000);
  await shot(page, 'c-stopped');

  const { turnId, statuses } = await page.evaluate(() => window.__live);
  assert(turnId, 'a live turn was seen');
  const live = Object.values(statuses);
  assert(live.includes('cancelled'), 'a widget showed cancelled live: ' + JSON.stringify(statuses));
  assert(live.every((s) => ['success', 'error', 'cancelled'].includes(s)), 'every live widget ended: ' + JSON.stringify(statuses));

  const turn = await (await page.request.get(baseURL + '/api/turns/' + turnId)).json();
  assert(turn.turn.status === 'cancelled', 'the turn is cancelled: ' + turn.turn.status);

  const final = await widgets(page);
  assert(final.some((w) => w.status === 'cancelled'), 'the server html shows cancelled: ' + JSON.stringify(final));
  assert((await page.$$('.toolcall__icon--spinner')).length === 0, 'no spinner left');
  assert(await page.isVisible('#send'), 'Send is back');
  assert(!(await page.isVisible('#stop')), 'Stop is gone');

  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('.message--assistant');
  const reloaded = await widgets(page);
  assert(JSON.stringify(reloaded) === JSON.stringify(final), 'same widgets after reload');
  const note = await page.$eval('.message--assistant .message__note', (el) => el.textContent + getComputedStyle(el, '::before').content);
  assert(note.includes('Stopped'), 'the message says it was stopped: ' + note);
  // The plan of the cancelled turn, under the answer: nothing left in progress.
  assert(await page.isHidden('#todos'), 'the finished plan is not pinned');
  const plan = await page.$$eval('.message--assistant .todos .todo', (els) => els.map((e) => e.dataset.status));
  assert(plan.length > 0, 'the plan shows after the reload');
  assert(!plan.includes('in_progress') && !plan.includes('pending'), 'no item in progress after the reload: ' + JSON.stringify(plan));
  assert(plan.includes('cancelled'), 'unfinished items show cancelled: ' + JSON.stringify(plan));
  assert(/^Stopped · \d+ of \d+ done$/.test(await page.textContent('.message--assistant .todos__count')), 'the plan counts what is done, and says it stopped');
  // It is folded, and opens.
  assert(!(await page.isVisible('.message--assistant .todos__list')), 'the finished plan is folded');
  await page.click('.message--assistant .todos summary');
  assert(await page.isVisible('.message--assistant .todos__list'), 'the plan opens');
  await shot(page, 'c-reloaded');

  // A Stop that cannot reach the server says so, while nothing about the
  // turn gets through; once the server answers again the banner goes by
  // itself (the answer still runs, Stop is offered again), and a Stop then
  // ends the answer.
  await ask(page, 'Research how cancellation works; what happens after a crash?');
  await page.waitForSelector('.message--live .toolcall', { timeout: 30000 });
  const away = (route) => route.abort();
  await page.route('**/api/turns/**', away);
  await page.click('#stop');
  await page.waitForSelector('#error-banner:not([hidden])', { timeout: 10000 });
  assert((await page.textContent('#error-banner')).startsWith('Could not stop the answer'), 'the failed Stop says so');
  await page.waitForTimeout(1500); // the page's own ask fails too
  assert(await page.isVisible('#error-banner') && await page.$('.message--live'), 'the banner stays while the server cannot be reached');
  await shot(page, 'c-stop-failed');
  await page.unroute('**/api/turns/**', away);
  await page.waitForFunction(() => document.querySelector('#error-banner').hidden || !document.querySelector('.message--live'), null, { timeout: 30000 });
  assert(await page.$('.message--live'), 'the failed Stop\'s banner went once the server answered, while the answer still ran');
  assert(await page.isVisible('#stop') && await page.isEnabled('#stop'), 'Stop is offered again');
  await shot(page, 'c-stop-back');
  await page.click('#stop');
  await waitTurnEnd(page, 60000);
  assert(await page.isHidden('#error-banner'), 'no banner once the answer is stopped');
  noProblems(problems, /Failed to load resource/);
});
