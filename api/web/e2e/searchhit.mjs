// A search hit opens its conversation at the match: in a 34-turn
// conversation (68 messages, more than the first page of 50), the hit in
// turn 3 is loaded, put in view and marked, at 1200 px and on a phone.
import { run, openPage, shot, assert, noProblems, baseURL } from './lib.mjs';

const turns = 34;

async function seed(api) {
  let conv = '';
  for (let i = 1; i <= turns; i++) {
    const word = i === 3 ? 'What does a quokka lease mean?' : 'how does resume work?';
    const r = await (await api.post(baseURL + '/api/chat', { data: { conversationId: conv, content: `Question ${i}: ${word}` } })).json();
    conv = r.conversationId;
  }
  return conv;
}

async function openHit(page, phone, when) {
  if (phone) {
    await page.click('#menu');
    await page.waitForFunction(() => document.querySelector('#app').classList.contains('app--sidebar-open'));
  }
  await page.fill('#search', 'Quokka');
  await page.waitForSelector('#search-results .search__result');
  assert((await page.$$('#search-results .search__result')).length === 1, `${when}: one result`);
  await page.click('#search-results .search__result a');
  await page.waitForSelector('#messages mark.hit', { timeout: 10000 }).catch(async (e) => {
    await shot(page, 'hit-missed');
    throw e;
  });
  await page.waitForTimeout(200);
  const m = await page.evaluate(() => {
    const mark = document.querySelector('#messages mark.hit');
    const r = mark.getBoundingClientRect(), a = document.querySelector('#messages').getBoundingClientRect();
    return {
      text: mark.textContent, inView: r.top >= a.top && r.bottom <= a.bottom,
      // The question of the turn that holds the mark (the hit may be its answer).
      question: (() => {
        let art = mark.closest('.message');
        while (art && !art.classList.contains('message--user')) art = art.previousElementSibling;
        return art ? art.querySelector('.message__body').textContent : '';
      })(),
      marks: document.querySelectorAll('#messages mark.hit').length,
      docHeight: document.scrollingElement.scrollHeight, height: innerHeight,
    };
  });
  assert(m.text === 'quokka', `${when}: the match is marked as written: ${m.text}`);
  assert(m.question.startsWith('Question 3:'), `${when}: the hit is in turn 3: ${m.question}`);
  assert(m.inView, `${when}: the marked match is in view`);
  assert(m.marks === 1, `${when}: one mark: ${m.marks}`);
  assert(m.docHeight === m.height, `${when}: the app stays in the window`);
  await shot(page, 'hit-' + when);
}

await run('searchhit', async (browser) => {
  const { page, context, problems } = await openPage(browser, { viewport: { width: 1200, height: 800 } });
  const conv = await seed(context.request);
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await openHit(page, false, 'wide');
  assert(decodeURIComponent((await page.evaluate(() => location.hash)).slice(1)) === conv, 'the URL names the conversation');
  // Opened again from the same conversation, scrolled to its end.
  await page.$eval('#messages', (m) => m.scrollTo(0, m.scrollHeight));
  await page.click('#search-results .search__result a');
  await page.waitForTimeout(300);
  assert(await page.$eval('#messages mark.hit', (mark) => {
    const r = mark.getBoundingClientRect(), a = document.querySelector('#messages').getBoundingClientRect();
    return r.top >= a.top && r.bottom <= a.bottom;
  }), 'opened again, the hit is back in view');
  noProblems(problems);

  const phone = await openPage(browser, { viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
  await openHit(phone.page, true, 'phone');
  noProblems(phone.problems);
});
