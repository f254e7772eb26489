// A phone, 375 × 740: the answer keeps the width of the screen and most of
// its height (nothing scrolls sideways); the plan of the running turn is a
// one-line summary, and once the answer is done it folds under the answer
// instead of staying pinned; Enter adds a line (Send sends); the message
// box's font is 16 px (no zoom on focus); every control is a 44 × 44 px
// tap target; the conversation list is a drawer that keeps the focus and
// closes with Esc.
import { run, openPage, ask, waitTurnEnd, shot, readmeShot, assert, noProblems, tapTargets } from './lib.mjs';

async function checkLayout(page, when) {
  const m = await page.evaluate(() => {
    const r = (sel) => {
      const el = document.querySelector(sel);
      return el ? el.getBoundingClientRect().toJSON() : null;
    };
    return {
      scrollWidth: document.documentElement.scrollWidth,
      sidebar: r('#sidebar'),
      body: r('.message--assistant:last-of-type .message__body'),
      messages: r('#messages'),
      input: r('#input'),
    };
  });
  assert(m.scrollWidth <= 375, `${when}: nothing scrolls sideways (scrollWidth ${m.scrollWidth})`);
  assert(m.sidebar.right <= 0, `${when}: the conversation list is out of the way: ${JSON.stringify(m.sidebar)}`);
  assert(m.messages.width >= 370, `${when}: the messages take the width: ${m.messages.width}`);
  assert(m.messages.height >= 480, `${when}: the messages take most of the height: ${m.messages.height} of 740`);
  assert(m.body && m.body.width >= 330, `${when}: the answer is readable: ${JSON.stringify(m.body)}`);
  assert(m.input.width >= 220, `${when}: the message box is usable: ${m.input.width}`);
  const small = await tapTargets(page);
  assert(small.length === 0, `${when}: tap targets under 44 × 44 px: ${small.join(', ')}`);
}

await run('mobile', async (browser) => {
  const { page, problems } = await openPage(browser, { viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
  assert(await page.isVisible('#menu'), 'the menu button shows');
  assert(await page.isVisible('#examples .example'), 'the examples show');
  const font = await page.$eval('#input', (el) => parseFloat(getComputedStyle(el).fontSize));
  assert(font >= 16, 'the message box font is at least 16 px: ' + font);
  // Enter adds a line; nothing is sent.
  await page.click('#input');
  await page.keyboard.type('first line');
  await page.keyboard.press('Enter');
  await page.keyboard.type('second line');
  assert((await page.inputValue('#input')) === 'first line\nsecond line', 'Enter adds a line: ' + JSON.stringify(await page.inputValue('#input')));
  assert((await page.$$('.message')).length === 0, 'Enter sent nothing');
  await shot(page, 'm-empty');

  await ask(page, 'Research how cancellation works; what happens after a crash?');
  await page.waitForSelector('#todos:not([hidden])', { timeout: 30000 });
  await page.waitForSelector('.message--live .toolcall', { timeout: 30000 });
  assert(!(await page.$eval('#todos', (d) => d.open)), 'the running plan is a one-line summary');
  await checkLayout(page, 'streaming');
  await readmeShot(page, 'phone');
  await waitTurnEnd(page);
  await checkLayout(page, 'done');
  // The finished plan folds under the answer; nothing stays pinned.
  assert(await page.isHidden('#todos'), 'the finished plan is not pinned');
  assert(await page.$eval('.message--assistant:last-of-type details.todos', (d) => !d.open), 'the finished plan is folded under the answer');
  await shot(page, 'm-done');

  // The drawer opens over the messages, keeps the focus, closes with Esc.
  await page.click('#menu');
  await page.waitForFunction(() => document.querySelector('#sidebar').getBoundingClientRect().left >= 0);
  assert(await page.isVisible('.conversation__open'), 'the conversations show in the drawer');
  await shot(page, 'm-drawer');
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press('Tab');
    const inside = await page.evaluate(() => document.querySelector('#sidebar').contains(document.activeElement));
    assert(inside, `Tab ${i + 1} keeps the focus in the drawer: ${await page.evaluate(() => document.activeElement.outerHTML.slice(0, 80))}`);
  }
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => document.querySelector('#sidebar').getBoundingClientRect().right <= 0);
  assert(await page.evaluate(() => document.activeElement.id) === 'menu', 'Esc gives the focus back to the menu button');
  // Opening a conversation from the drawer puts the focus in the message box.
  await page.click('#menu');
  await page.waitForFunction(() => document.querySelector('#sidebar').getBoundingClientRect().left >= 0);
  await page.click('.conversation__open');
  await page.waitForFunction(() => document.querySelector('#sidebar').getBoundingClientRect().right <= 0);
  assert(await page.evaluate(() => document.activeElement.id) === 'input', 'the focus is in the message box: ' + await page.evaluate(() => document.activeElement.tagName));
  // The scrim closes it too.
  await page.click('#menu');
  await page.waitForFunction(() => document.querySelector('#sidebar').getBoundingClientRect().left >= 0);
  await page.click('#scrim', { position: { x: 360, y: 400 } });
  await page.waitForFunction(() => document.querySelector('#sidebar').getBoundingClientRect().right <= 0);
  noProblems(problems);
});
