// Only the message list scrolls, ever: in a conversation with tool widgets,
// at 1200 px and at 375 px, a wheel turn at the bottom of the messages and
// over every other region (the header, the composer, the plan, the sidebar
// or its drawer), and the keys that scroll a page, leave the app in the
// window: the document is exactly as tall as the viewport and never moves.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems } from './lib.mjs';

/** still checks that the document is the viewport's height and is not scrolled. */
async function still(page, when) {
  const m = await page.evaluate(() => ({
    scrollHeight: document.scrollingElement.scrollHeight,
    scrollWidth: document.scrollingElement.scrollWidth,
    height: innerHeight,
    width: innerWidth,
    y: scrollY,
    x: scrollX,
    top: document.querySelector('#app').getBoundingClientRect().top,
  }));
  assert(m.scrollHeight === m.height, `${when}: the document is as tall as the window (${m.scrollHeight} in ${m.height})`);
  assert(m.scrollWidth === m.width, `${when}: the document is as wide as the window (${m.scrollWidth} in ${m.width})`);
  assert(m.y === 0 && m.x === 0 && m.top === 0, `${when}: the app stays in the window (scroll ${m.x},${m.y}, top ${m.top})`);
}

/** wheelOver turns the wheel down and up over the centre of sel's element. */
async function wheelOver(page, sel, when) {
  const r = await page.$eval(sel, (el) => el.getBoundingClientRect().toJSON());
  await page.mouse.move(r.x + r.width / 2, r.y + Math.min(r.height / 2, 20));
  for (const dy of [3000, 3000, -200, 3000]) {
    await page.mouse.wheel(0, dy);
    await page.waitForTimeout(60);
  }
  await still(page, `wheel over ${when}`);
}

async function check(browser, viewport, phone) {
  const opts = phone ? { viewport, isMobile: true, hasTouch: true } : { viewport };
  const { page, problems } = await openPage(browser, opts);
  const tag = phone ? 'phone' : 'wide';
  await still(page, `${tag}: empty page`);
  await ask(page, 'Research how cancellation works; what happens after a crash? Then compare resuming a stream with cancelling a turn.');
  await page.waitForSelector('.message--live .toolcall', { timeout: 30000 });
  await still(page, `${tag}: while it streams`);
  await waitTurnEnd(page, 90000);
  // Long enough that widgets sit far below the first screen of messages.
  for (const q of ['How do clients resume a stream after a dropped connection? Show an example.', 'Research how the ToolCall markup stays safe to render']) {
    await ask(page, q);
    await waitTurnEnd(page, 90000);
  }
  assert(await page.$eval('#messages', (m) => m.scrollHeight > 2 * m.clientHeight), `${tag}: the messages are two windows tall`);
  for (const when of ['finished', 'reloaded']) {
    if (when === 'reloaded') {
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector('.message--assistant .toolcall');
    }
    await still(page, `${tag} ${when}`);
    await wheelOver(page, '#messages', `${tag} ${when}: the messages, at the bottom`);
    await wheelOver(page, '.chat__head', `${tag} ${when}: the header`);
    await wheelOver(page, '#composer', `${tag} ${when}: the composer`);
    if (phone) {
      await page.click('#menu');
      await page.waitForFunction(() => document.querySelector('#app').classList.contains('app--sidebar-open'));
      await page.waitForTimeout(300);
      await wheelOver(page, '#sidebar', `${tag} ${when}: the drawer`);
      await page.keyboard.press('Escape');
      await page.waitForTimeout(300);
    } else {
      await wheelOver(page, '#sidebar', `${tag} ${when}: the sidebar`);
    }
    // Keys that scroll a page, with the focus on the page itself.
    await page.evaluate(() => document.activeElement && document.activeElement.blur());
    for (const key of ['End', 'PageDown', 'Space', 'ArrowDown']) await page.keyboard.press(key);
    await still(page, `${tag} ${when}: keys`);
  }
  // The composer's hint fits: the keys' hint only in a wide window.
  const hint = await page.getAttribute('#input', 'placeholder');
  assert(phone ? hint === 'Ask something…' : hint.includes('Enter sends'), `${tag}: the composer's placeholder: ${hint}`);
  if (!phone) {
    await page.setViewportSize({ width: 375, height: 740 });
    await page.waitForFunction(() => document.querySelector('#input').placeholder === 'Ask something…');
    await still(page, `${tag} made narrow`);
    await page.setViewportSize(viewport);
  }
  // Buttons of the same kind are told apart by their names.
  const names = await page.$$eval('.toolcall__fold', (els) => els.map((e) => e.getAttribute('aria-label')));
  assert(names.length >= 2 && new Set(names).size === names.length && names.every((n) => n.startsWith('Steps: ')), `${tag}: each Steps button names its task: ${JSON.stringify(names)}`);
  const copies = await page.$$eval('.code__copy', (els) => els.map((e) => e.getAttribute('aria-label') || e.textContent));
  assert(copies.every((n) => /^Copy( \S+)? code( \d+)?$/.test(n)), `${tag}: each code block's Copy says what it copies: ${JSON.stringify(copies)}`);
  const hidden = await page.$$eval('.toolcall__label', (els) => els.length);
  assert(hidden > 0, `${tag}: the conversation has widgets with hidden labels`);
  await shot(page, `layout-${tag}`);
  noProblems(problems);
  await page.context().close();
}

await run('layout', async (browser) => {
  await check(browser, { width: 1200, height: 900 }, false);
  await check(browser, { width: 375, height: 740 }, true);
});
