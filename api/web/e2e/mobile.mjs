// A phone, 375 px wide: the conversation list is a drawer behind a menu
// button, the plan folds, and the answer keeps the width of the screen —
// nothing scrolls sideways, while it streams and after.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems } from './lib.mjs';

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
  assert(m.body && m.body.width >= 330, `${when}: the answer is readable: ${JSON.stringify(m.body)}`);
  assert(m.input.width >= 220, `${when}: the message box is usable: ${m.input.width}`);
}

await run('mobile', async (browser) => {
  const { page, problems } = await openPage(browser, { viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
  assert(await page.isVisible('#menu'), 'the menu button shows');
  assert(await page.isVisible('#examples .example'), 'the examples show');
  await shot(page, 'm-empty');
  await ask(page, 'Research how cancellation works; what happens after a crash?');
  await page.waitForSelector('.message--live .toolcall', { timeout: 30000 });
  await checkLayout(page, 'streaming');
  await shot(page, 'm-streaming');
  await waitTurnEnd(page);
  await checkLayout(page, 'done');
  // The plan folds out of the way.
  await page.click('#todos summary');
  assert(!(await page.isVisible('#todo-list')), 'the plan folds');
  await shot(page, 'm-done');
  // The drawer opens over the messages and closes again.
  await page.click('#menu');
  await page.waitForFunction(() => document.querySelector('#sidebar').getBoundingClientRect().left >= 0);
  assert(await page.isVisible('.conversation__open'), 'the conversations show in the drawer');
  await shot(page, 'm-drawer');
  await page.click('#scrim', { position: { x: 360, y: 400 } });
  await page.waitForFunction(() => document.querySelector('#sidebar').getBoundingClientRect().right <= 0);
  noProblems(problems);
});
