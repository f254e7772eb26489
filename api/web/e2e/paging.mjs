// A long conversation opens with its latest messages; the earlier ones
// come a page at a time as the reader scrolls up (or presses "Show earlier
// messages"), above what is shown, without moving it; on a phone it opens
// at its end.
import { run, openPage, shot, assert, noProblems, baseURL } from './lib.mjs';

await run('paging', async (browser) => {
  const { page, problems, context } = await openPage(browser, { viewport: { width: 1200, height: 800 } });
  const api = context.request;
  let conv = '';
  const turns = 30; // 60 messages: more than one page of 50
  for (let i = 0; i < turns; i++) {
    const r = await (await api.post(baseURL + '/api/chat', { data: { conversationId: conv, content: `Question ${i + 1}: how does resume work?` } })).json();
    conv = r.conversationId;
  }
  await page.goto(baseURL + '/#' + conv);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#messages .message--user');
  const count = () => page.$$eval('#messages .message', (els) => els.length);
  const firstShown = await count();
  assert(firstShown === 50, 'the latest 50 messages first: ' + firstShown);
  assert(await page.isVisible('button:has-text("Show earlier messages")'), 'a way to the earlier messages');
  const last = await page.$$eval('#messages .message--user .message__body', (els) => els[els.length - 1].textContent);
  assert(last.startsWith(`Question ${turns}:`), 'the newest question is shown: ' + last);
  await shot(page, 'paging-latest');

  // Scrolling up to the top loads the rest above, keeping the reader's place.
  const marker = await page.$eval('#messages .message--user', (el) => el.dataset.messageId);
  await page.$eval('#messages', (m) => m.scrollTo(0, 0));
  await page.waitForFunction((n) => document.querySelectorAll('#messages .message').length === n, turns * 2, { timeout: 10000 });
  const texts = await page.$$eval('#messages .message--user .message__body', (els) => els.map((e) => e.textContent));
  assert(texts.length === turns && texts.every((t, i) => t.startsWith(`Question ${i + 1}:`)), 'every question, in order: ' + JSON.stringify(texts.slice(0, 3)));
  const kept = await page.$eval(`#messages [data-message-id="${marker}"]`, (el) => {
    const r = el.getBoundingClientRect(), a = el.closest('#messages').getBoundingClientRect();
    return r.bottom > a.top && r.top < a.bottom;
  });
  assert(kept, 'the message at the top before the load is still in view after it');
  assert(!(await page.isVisible('button:has-text("Show earlier messages")')), 'no more to show once all are loaded');
  await shot(page, 'paging-all');
  noProblems(problems);

  // On a phone too the conversation opens at its end: the last answer's
  // controls, added once the messages are drawn, in view.
  const phone = await (await browser.newContext({ viewport: { width: 375, height: 740 } })).newPage();
  await phone.goto(baseURL + '/#' + conv);
  await phone.waitForSelector('#messages .message--assistant .action');
  await phone.waitForTimeout(300);
  const gap = await phone.$eval('#messages', (m) => m.scrollHeight - m.scrollTop - m.clientHeight);
  assert(gap <= 1, 'the phone opens the conversation at its end: ' + gap + ' px short');
  await shot(phone, 'paging-phone-end');
});
