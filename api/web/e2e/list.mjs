// The conversation list at 1280 px: read a page at a time (more as it
// scrolls), titles keep their words, the open conversation is marked and
// scrolled into view even when it is not on the first page, and the one
// with an answer being written is marked.
import { run, openPage, shot, assert, noProblems, baseURL } from './lib.mjs';

await run('list', async (browser) => {
  const { page, problems, context } = await openPage(browser, { viewport: { width: 1280, height: 760 } });
  const api = context.request;
  const ids = [];
  for (let i = 0; i < 45; i++) {
    const r = await (await api.post(baseURL + '/api/conversations', { data: { title: `Notes ${String(i).padStart(2, '0')} on resuming a stream` } })).json();
    ids.push(r.conversation.id);
  }
  // A turn being written in the newest one.
  const running = ids[44];
  await api.post(baseURL + '/api/conversations/' + running + '/turns', { data: { content: 'Research how cancellation works; what happens after a crash?' } });

  // The oldest conversation, opened by its URL: not on the first page.
  await page.goto(baseURL + '/#' + ids[0]);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('.conversation--current');
  const cur = await page.$eval('.conversation--current', (li) => {
    const r = li.getBoundingClientRect();
    const nav = li.closest('nav').getBoundingClientRect();
    return { id: li.dataset.id, inView: r.top >= nav.top - 1 && r.bottom <= nav.bottom + 1 };
  });
  assert(cur.id === ids[0] && cur.inView, 'the open conversation is listed and in view: ' + JSON.stringify(cur));
  assert((await page.$$('.conversation')).length === 45, 'pages were read until it was listed');

  // A fresh page lists one page, and more as the list scrolls.
  await page.goto(baseURL + '/');
  await page.waitForSelector('body[data-ready="true"]');
  const first = (await page.$$('.conversation')).length;
  assert(first > 0 && first < 45, 'the list is read a page at a time: ' + first);
  await page.$eval('#sidebar nav', (nav) => nav.scrollTo(0, nav.scrollHeight));
  await page.waitForFunction(() => document.querySelectorAll('.conversation').length === 45, null, { timeout: 10000 });

  // Titles keep their words at 1280 px.
  const cut = await page.$$eval('.conversation__title', (els) => els.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent));
  assert(cut.length === 0, 'titles cut: ' + JSON.stringify(cut.slice(0, 3)));

  // The conversation with a turn running is marked.
  await page.$eval('#sidebar nav', (nav) => nav.scrollTo(0, 0));
  const mark = await page.$eval(`.conversation[data-id="${running}"]`, (li) => li.classList.contains('conversation--running') && li.querySelector('.conversation__running').getClientRects().length > 0);
  assert(mark, 'the conversation with an answer being written is marked');
  const others = await page.$$eval('.conversation--running', (els) => els.length);
  assert(others === 1, 'only that one is marked: ' + others);
  await shot(page, 'l-list');
  noProblems(problems);
});
