// The sidebar: conversations made elsewhere are listed newest first,
// selecting one shows its messages (server html) and puts it in the URL,
// deleting one asks first and removes it, New chat empties the view.
import { run, shot, assert, baseURL } from './lib.mjs';

await run('sidebar', async (browser) => {
  const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
  const page = await context.newPage();
  const dialogs = [];
  page.on('dialog', async (d) => {
    dialogs.push(d.type());
    await d.accept();
  });
  const api = context.request;
  const made = [];
  for (const q of ['First question about markup', 'Second question about resume']) {
    const r = await (await api.post(baseURL + '/api/chat', { data: { content: q } })).json();
    made.push(r.conversationId);
  }
  await page.goto(baseURL + '/');
  await page.waitForSelector('body[data-ready="true"]');
  const titles = await page.$$eval('.conversation__title', (els) => els.map((e) => e.textContent));
  assert(titles.length === 2, 'two conversations listed: ' + JSON.stringify(titles));
  const times = await page.$$eval('.conversation__time', (els) => els.map((e) => e.dateTime));
  assert(times.length === 2 && times.every((t) => !Number.isNaN(Date.parse(t))), 'each conversation shows its time: ' + JSON.stringify(times));

  await page.click(`.conversation__open >> nth=1`);
  await page.waitForSelector('.message--assistant .toolcall');
  assert((await page.evaluate(() => location.hash)).length > 1, 'the selected conversation is in the URL');
  // The URL switches conversations too, and Back goes back.
  const firstHash = await page.evaluate(() => location.hash);
  const other = made.find((id) => '#' + id !== firstHash);
  await page.evaluate((id) => { location.hash = '#' + id; }, other);
  await page.waitForFunction((id) => document.querySelector('.conversation--current .conversation__open')?.getAttribute('href') === '#' + id, other);
  await page.waitForFunction(() => document.querySelector('#conversation-title').textContent.startsWith('Second question'));
  await page.goBack();
  await page.waitForFunction((h) => document.querySelector('.conversation--current .conversation__open')?.getAttribute('href') === h, firstHash);
  await page.waitForFunction(() => document.querySelector('#conversation-title').textContent.startsWith('First question'));
  assert(await page.$eval('.conversation--current .conversation__open', (e) => e.getAttribute('aria-current')) === 'page', 'aria-current marks it');
  await shot(page, 'g-selected');

  // Keyboard: the delete button is reachable and labelled.
  const label = await page.getAttribute('.conversation--current .conversation__delete', 'aria-label');
  assert(label && label.startsWith('Delete conversation'), 'the delete button has a label: ' + label);
  await page.click('.conversation--current .conversation__delete');
  await page.waitForFunction(() => document.querySelectorAll('.conversation').length === 1);
  assert(dialogs.join() === 'confirm', 'deleting asked for confirmation: ' + dialogs.join());
  assert((await page.$$('.message')).length === 0, 'the deleted conversation is no longer shown');
  assert((await page.textContent('#conversation-title')) === 'New conversation', 'the header no longer shows the deleted title');
  assert((await page.evaluate(() => location.hash)) === '', 'the URL no longer names it');
  const left = await (await api.get(baseURL + '/api/conversations')).json();
  assert(left.conversations.length === 1, 'the server has one conversation left');

  await page.click('.conversation__open');
  await page.waitForSelector('.message--assistant');
  await page.click('#new-conversation');
  assert((await page.$$('.message')).length === 0, 'New chat empties the view');
  assert(await page.evaluate(() => document.activeElement && document.activeElement.id) === 'input', 'New chat focuses the message box');
  await shot(page, 'g-new');
  // The empty state offers example questions; a long question's title is
  // cut at a word boundary.
  assert((await page.$$('#examples .example')).length >= 3, 'example questions are offered');
  const long = 'How does the server keep every tool call status consistent between the live stream and the stored message after a crash?';
  await page.fill('#input', long);
  await page.press('#input', 'Enter');
  await page.waitForFunction(() => document.querySelectorAll('.conversation').length === 2);
  const title = await page.textContent('#conversation-title');
  assert(title.endsWith('…') && title.length <= 60 && long.startsWith(title.slice(0, -1)) && long[title.length - 1] === ' ',
    'the title is cut at a word boundary: ' + JSON.stringify(title));
});
