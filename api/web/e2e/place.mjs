// A reload keeps the reader's place: scrolled up in a long conversation,
// the reloaded page shows the same message at the same height; a reader at
// the end is at the end again; at 1200 px and at 375 px.
import { run, openPage, shot, assert, noProblems, baseURL } from './lib.mjs';

const inView = (page) => page.evaluate(() => {
  const area = document.querySelector('#messages');
  const top = area.getBoundingClientRect().top;
  const art = [...area.querySelectorAll(':scope > .message')].find((a) => a.getBoundingClientRect().bottom > top);
  return { id: art.dataset.messageId, off: Math.round(art.getBoundingClientRect().top - top), gap: area.scrollHeight - area.scrollTop - area.clientHeight };
});

/** keepsPlace scrolls up in conversation conv, reloads, and checks the same message is at the same height; then the same at the end. */
async function keepsPlace(page, conv, width) {
  await page.goto(baseURL + '/#' + conv);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#messages .message--assistant');
  await page.hover('#messages');
  await page.mouse.wheel(0, -2500);
  await page.waitForTimeout(500);
  const before = await inView(page);
  assert(before.gap > 500, `${width} px: scrolled up: ` + JSON.stringify(before));
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#messages .message--assistant');
  await page.waitForTimeout(300);
  const after = await inView(page);
  assert(after.id === before.id && Math.abs(after.off - before.off) <= 2, `${width} px: the reload keeps the place: ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
  await shot(page, `place-reloaded-${width}`);

  // At the end, a reload is at the end.
  await page.click('#jump');
  await page.waitForTimeout(500);
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#messages .message--assistant');
  await page.waitForTimeout(300);
  const end = await inView(page);
  assert(end.gap <= 2, `${width} px: at the end after the reload: ` + JSON.stringify(end));
}

await run('place', async (browser) => {
  const { page, context, problems } = await openPage(browser, { viewport: { width: 1200, height: 700 } });
  let conv = '';
  for (let i = 1; i <= 12; i++) {
    const r = await (await context.request.post(baseURL + '/api/chat', { data: { conversationId: conv, content: `Question ${i}: how does resume work?` } })).json();
    conv = r.conversationId;
  }
  for (const [width, height] of [[1200, 700], [375, 740]]) {
    await page.setViewportSize({ width, height });
    await keepsPlace(page, conv, width);
  }
  noProblems(problems);
});
