// Two tabs on one conversation stay in sync: a turn sent in tab A, or
// started through the API (as the terminal client does), shows in tab B
// within a second and is followed to its end; a tab that did not hear of a
// running turn (its watch stream blocked) and sends is refused, keeps its
// text and follows the running answer.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems, baseURL } from './lib.mjs';

const users = (page) => page.$$eval('.message--user', (els) => els.length);

/**
 * noteShown makes page note, by its own clock, when it first shows n
 * questions, and when it first shows them with an answer being written: a
 * MutationObserver, as the harness's own polling runs late in a tab
 * behind another (requestAnimationFrame is throttled there), and a
 * figure taken from it would be the harness's.
 */
async function noteShown(page) {
  await page.evaluate(() => {
    window.shownAt = {};
    const note = () => {
      const n = document.querySelectorAll('.message--user').length;
      window.shownAt[n] ??= Date.now();
      if (document.querySelector('.message--live')) window.shownAt[n + ' live'] ??= Date.now();
    };
    new MutationObserver(note).observe(document.body, { childList: true, subtree: true, attributes: true });
    note();
  });
}

/** shows waits until page shows n questions (and, live, the answer being written), and returns how long after t0 it did, by the page's clock. */
async function shows(page, n, t0, when, live = false) {
  const key = live ? n + ' live' : String(n);
  const at = await page.waitForFunction((key) => window.shownAt[key], key, { timeout: 10000, polling: 50 })
    .then((h) => h.jsonValue())
    .catch(async (e) => {
      await shot(page, 'tabs-missed');
      throw new Error(`${when}: the other tab did not show the turn: ${e.message}`);
    });
  return at - t0;
}

await run('tabs', async (browser) => {
  const { page: a, context, problems } = await openPage(browser);
  await ask(a, 'How does resume work?');
  await waitTurnEnd(a);
  const hash = await a.evaluate(() => location.hash);
  const id = decodeURIComponent(hash.slice(1));
  const b = await context.newPage();
  await b.goto(baseURL + '/' + hash);
  await b.waitForSelector('body[data-ready="true"]');
  await b.waitForSelector('.message--assistant');
  await Promise.all([noteShown(a), noteShown(b)]);

  // Sent in tab A.
  await ask(a, 'Research how cancellation works; what happens after a crash?');
  const sentAt = await a.evaluate(() => window.shownAt[2]); // tab A showed the question sent
  const fromTab = await shows(b, 2, sentAt, 'sent in a tab', true);
  await shot(b, 'tabs-b-follows');
  await Promise.all([waitTurnEnd(a, 90000), waitTurnEnd(b, 90000)]);

  // Started through the API, as the terminal client does.
  const t0 = Date.now(); // the request starting the turn is sent
  const r = await fetch(`${baseURL}/api/conversations/${encodeURIComponent(id)}/turns`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ content: 'What is a lease?' }),
  });
  assert(r.status === 202, 'turn started through the API: ' + r.status);
  const [apiA, apiB] = await Promise.all([shows(a, 3, t0, 'API, tab A'), shows(b, 3, t0, 'API, tab B')]);
  const fromAPI = Math.max(apiA, apiB);
  await Promise.all([waitTurnEnd(a, 90000), waitTurnEnd(b, 90000)]);
  const texts = async (p) => p.$$eval('.message__body', (els) => els.map((e) => e.textContent));
  assert(JSON.stringify(await texts(a)) === JSON.stringify(await texts(b)), 'both tabs show the same messages');
  console.log(`turn seen in the other tab after ${fromTab} ms (sent in a tab); started through the API, seen in tab A after ${apiA} ms, in tab B after ${apiB} ms`);
  // The figures are printed above (under 250 ms, also with the machine's two
  // cores kept busy); the bound only tells a tab that follows from one that
  // waits for a reload or a poll, as a timing asserted under CI's load would
  // fail for the machine, not the code.
  assert(fromTab < 5000 && fromAPI < 5000, `the other tab shows the turn without a reload: ${fromTab} ms, ${fromAPI} ms`);

  // A tab that did not hear of the running turn sends: refused, it keeps
  // its text and follows the running answer.
  const c = await context.newPage();
  await c.route('**/api/conversations/*/events', (route) => route.abort());
  await c.goto(baseURL + '/' + hash);
  await c.waitForSelector('body[data-ready="true"]');
  await c.waitForSelector('.message--assistant');
  await noteShown(c);
  await ask(a, 'Research how leases work, then compare resuming a stream with cancelling a turn.');
  await c.fill('#input', 'A question sent while an answer is being written');
  await c.press('#input', 'Enter');
  await c.waitForSelector('#error-banner:not([hidden])', { timeout: 10000 });
  await shows(c, 4, Date.now(), 'refused send', true);
  assert((await c.inputValue('#input')) === 'A question sent while an answer is being written', 'the refused text stays in the box');
  await shot(c, 'tabs-refused-follows');
  await Promise.all([waitTurnEnd(a, 90000), waitTurnEnd(c, 90000)]);
  assert((await users(c)) === 4, 'the refused question was not added');
  noProblems(problems);
});
