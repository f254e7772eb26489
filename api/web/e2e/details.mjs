// Details at 1200 px: the message box grows with its text; the tab's
// title follows the conversation; a code block shows its language and
// keeps Copy in view while the code scrolls sideways; a first message that
// fails (413, 500, offline) leaves no conversation behind and keeps its
// text; a page loaded while the server is away tries again.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems, baseURL } from './lib.mjs';

async function conversations(page) {
  return (await (await page.request.get(baseURL + '/api/conversations')).json()).conversations.length;
}

async function failFirst(page, name, setup, text) {
  await setup();
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
  await page.waitForSelector('#error-banner:not([hidden])', { timeout: 10000 });
  await page.unrouteAll();
  await page.waitForFunction(() => document.querySelector('#send').getAttribute('aria-disabled') !== 'true');
  assert((await conversations(page)) === 0, `${name}: no conversation left behind`);
  assert((await page.$$('.conversation')).length === 0, `${name}: none listed`);
  assert((await page.inputValue('#input')) === text, `${name}: the message stays in the box`);
  assert((await page.evaluate(() => location.hash)) === '', `${name}: the URL names no conversation`);
  await page.fill('#input', '');
}

await run('details', async (browser) => {
  const { page, problems } = await openPage(browser);
  assert(await page.title() === 'New conversation — toolmark', 'the tab says New conversation: ' + await page.title());

  // First messages that fail.
  await failFirst(page, '413', async () => {}, 'x'.repeat(70 * 1024));
  await failFirst(page, '500', () => page.route('**/api/conversations/*/turns', (r) => r.fulfill({
    status: 500, contentType: 'application/json', body: '{"error":{"code":"internal","message":"internal error"}}',
  })), 'What is a lease?');
  await failFirst(page, 'offline', () => page.route('**/api/conversations/*/turns', (r) => r.abort('internetdisconnected')), 'What is a lease?');

  // The box grows with its text.
  const h1 = await page.$eval('#input', (el) => el.getBoundingClientRect().height);
  await page.fill('#input', 'one\ntwo\nthree\nfour\nfive');
  const h5 = await page.$eval('#input', (el) => el.getBoundingClientRect().height);
  assert(h5 > h1 * 1.8, `the box grows: ${h1} → ${h5}`);
  await page.fill('#input', '');

  // The tab's title follows the conversation.
  await ask(page, 'How do clients resume a stream after a dropped connection? Show an example.');
  await waitTurnEnd(page);
  const title = await page.textContent('#conversation-title');
  assert(await page.title() === title + ' — toolmark', `the tab's title is the conversation's: ${await page.title()}`);

  // The code block: its language, and Copy in view while the code scrolls.
  const bar = await page.$eval('.message--assistant:last-of-type pre', (pre) => ({
    lang: pre.querySelector('.code__lang')?.textContent,
    cls: pre.querySelector('code').className,
  }));
  assert(bar.lang && bar.cls.includes('language-' + bar.lang), 'the code block shows its language: ' + JSON.stringify(bar));
  const copy = await page.evaluate(() => {
    const art = document.querySelector('.message--assistant:last-of-type');
    art.style.maxWidth = '300px';
    const pre = art.querySelector('pre');
    for (const el of [pre, pre.querySelector('code')]) el.scrollLeft = 10000;
    const b = pre.querySelector('.code__copy').getBoundingClientRect();
    const p = pre.getBoundingClientRect();
    return { b: b.toJSON(), p: p.toJSON(), scrolled: pre.scrollLeft + pre.querySelector('code').scrollLeft };
  });
  assert(copy.scrolled > 0, 'the code scrolled sideways');
  assert(copy.b.left >= copy.p.left && copy.b.right <= copy.p.right + 1, 'Copy stays in view: ' + JSON.stringify(copy));
  await shot(page, 'd-code');

  // A page loaded while the server is away tries again.
  const other = await browser.newContext({ viewport: { width: 1200, height: 820 } });
  const p2 = await other.newPage();
  await p2.route('**/api/**', (r) => r.abort('connectionrefused'));
  await p2.goto(baseURL + '/');
  await p2.waitForSelector('#error-banner:not([hidden])', { timeout: 10000 });
  await shot(p2, 'd-down');
  await p2.unrouteAll();
  await p2.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  await p2.waitForSelector('#error-banner', { state: 'hidden' });
  assert((await p2.$$('.conversation')).length === 1, 'the page loaded once the server answered');
  await other.close();
  noProblems(problems, /Failed to load resource|ERR_INTERNET_DISCONNECTED|413|500/);
});
