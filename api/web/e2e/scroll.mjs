// Autoscroll: the view follows the streaming answer when the plan appears
// above the composer and when the window gets shorter (both shrink the
// messages without the reader scrolling), and after a reload in the middle
// of the turn; a reader who scrolls up is left where they are and
// offered "Jump to latest", which follows the answer again.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems } from './lib.mjs';

/** sample records, while an answer is live, how far the end of the messages is below the view. */
function sample() {
  window.__scroll = [];
  setInterval(() => {
    if (!document.querySelector('.message--live')) return;
    requestAnimationFrame(() => requestAnimationFrame(() => {
      const m = document.querySelector('#messages');
      window.__scroll.push({ gap: m.scrollHeight - m.scrollTop - m.clientHeight, plan: !document.querySelector('#todos').hidden, overflow: m.scrollHeight > m.clientHeight + 50 });
    }));
  }, 150);
}

function check(samples, when) {
  const seen = samples.filter((s) => s.plan && s.overflow);
  assert(seen.length >= 5, `${when}: samples with the plan shown and the answer taller than the view: ${seen.length}`);
  const off = seen.filter((s) => s.gap > 60);
  assert(off.length <= seen.length / 5, `${when}: the end stays in view (${off.length} of ${seen.length} samples off by ${JSON.stringify(off.map((s) => s.gap))})`);
  assert(seen[seen.length - 1].gap <= 60, `${when}: the end is in view at the last sample: ${seen[seen.length - 1].gap}`);
}

await run('scroll', async (browser) => {
  const { page, problems } = await openPage(browser, { viewport: { width: 1200, height: 640 } });
  await page.evaluate(sample);
  await ask(page, 'Research how cancellation works; what happens after a crash? Then compare resuming a stream with cancelling a turn.');
  await page.waitForSelector('#todos:not([hidden])', { timeout: 30000 });
  // The window gets shorter (a phone's keyboard opening): the end moves
  // away without the reader scrolling.
  await page.waitForFunction(() => {
    const m = document.querySelector('#messages');
    return document.querySelector('.message--live') && m.scrollHeight > m.clientHeight + 100;
  }, null, { timeout: 30000 });
  await page.setViewportSize({ width: 1200, height: 420 });
  await waitTurnEnd(page, 90000);
  check(await page.evaluate(() => window.__scroll), 'plan appearing, window shrinking');
  await page.setViewportSize({ width: 1200, height: 640 });

  // A reload in the middle of a turn.
  await ask(page, 'Research how the ToolCall markup stays safe to render, and compare the event stream and the stored message.');
  await page.waitForSelector('#todos:not([hidden])', { timeout: 30000 });
  await page.waitForFunction(() => (document.querySelector('.message--live .message__body')?.textContent.length || 0) > 0, null, { timeout: 30000 });
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.evaluate(sample);
  await page.waitForSelector('.message--live', { timeout: 10000 });
  await shot(page, 's-reloaded');
  await waitTurnEnd(page, 90000);
  check(await page.evaluate(() => window.__scroll), 'reloaded mid-turn');

  // Scrolled up while it streams: the view stays, Jump to latest follows again.
  await ask(page, 'Compare resuming a stream with cancelling a turn, and explain snapshots. Make a plan.');
  await page.waitForSelector('.message--live .toolcall', { timeout: 30000 });
  await page.hover('#messages');
  await page.mouse.wheel(0, -2000);
  await page.waitForSelector('#jump:not([hidden])', { timeout: 5000 });
  const top = await page.$eval('#messages', (m) => m.scrollTop);
  await page.waitForFunction(() => document.querySelector('.message--live .message__body p'), null, { timeout: 30000 });
  assert(Math.abs((await page.$eval('#messages', (m) => m.scrollTop)) - top) < 5, 'the view stays where the reader put it');
  await shot(page, 's-jump');
  await page.click('#jump');
  await page.waitForFunction(() => {
    const m = document.querySelector('#messages');
    return m.scrollHeight - m.scrollTop - m.clientHeight <= 60 && document.querySelector('#jump').hidden;
  }, null, { timeout: 5000 });
  await waitTurnEnd(page, 90000);
  const gap = await page.$eval('#messages', (m) => m.scrollHeight - m.scrollTop - m.clientHeight);
  assert(gap <= 60, 'after Jump to latest the view followed to the end: ' + gap);
  noProblems(problems);
});
