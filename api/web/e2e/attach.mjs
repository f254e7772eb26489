// Attachments: a PNG, a text file and a hostile SVG/HTML attached with the
// attach button, a PNG and a CSV dropped on the composer (a DataTransfer
// drop), an image pasted into the message box (a ClipboardEvent with a
// file); one chip removed with its × (the focus goes to the next one, the
// upload is deleted; removing one that a sent question carries keeps it).
// The chips and thumbnails show before sending, in the question after
// sending and after a reload; the demo model names the files; the SVG and
// HTML never render (no svg, script or iframe in the page, their links are
// downloads), and raster images alone get a thumbnail. On a phone each ×
// is a 44 px tap target.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems, tapTargets } from './lib.mjs';

const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
  '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082', 'hex');
const red = '89504e470d0a1a0a0000000d4948445200000002000000020802000000fdd49a730000001049444154789c63b8a3a101440c100a0023ae04b19f5ed7950000000049454e44ae426082';
const blue = '89504e470d0a1a0a0000000d4948445200000002000000020802000000fdd49a730000001049444154789c63d088ba03440c100a002386057991d55e790000000049454e44ae426082';
const files = [
  { name: 'dot.png', mimeType: 'image/png', buffer: png },
  { name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Shopping list\nmilk\n') },
  { name: '<svg onload=alert(1)>.svg', mimeType: 'image/svg+xml', buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>') },
  { name: 'page.html', mimeType: 'text/html', buffer: Buffer.from('<html><body><script>alert(3)</script></body></html>') },
];
// What is sent: the four, the dropped PNG (the dropped CSV removed), the pasted PNG.
const sent = [...files.map((f) => f.name), 'dropped.png', 'image.png'];
const chipCount = (page, n) => page.waitForFunction((k) => document.querySelectorAll('#attachments .attachment').length === k, n, { timeout: 15000 });

async function check(page, scope, when) {
  const names = await page.$$eval(scope + ' .attachment__name', (els) => els.map((e) => e.textContent));
  assert(JSON.stringify(names) === JSON.stringify(sent), `${when}: the chips name the files as text: ${names}`);
  // Thumbnails: the three raster images only, each loaded from its upload.
  await page.waitForFunction((s) => [...document.querySelectorAll(s + ' .attachment__thumb')].every((i) => i.complete), scope);
  const thumbs = await page.$$eval(scope + ' .attachment__thumb', (els) => els.map((e) => e.closest('.attachment').querySelector('.attachment__name').textContent + ':' + e.naturalWidth));
  assert(JSON.stringify(thumbs) === '["dot.png:1","dropped.png:2","image.png:2"]', `${when}: the raster images alone have thumbnails: ${thumbs}`);
  const bad = await page.$$eval('svg:not(.icon), script[src*="uploads"], iframe, object, embed', (els) => els.length);
  assert(bad === 0, `${when}: nothing of the SVG or HTML rendered`);
}

await run('attach', async (browser) => {
  const { page, problems } = await openPage(browser);
  await page.setInputFiles('#attach-file', files);
  await chipCount(page, 4);

  // Dropped on the composer, as a file manager's drag does.
  await page.evaluate(([pngHex]) => {
    const bytes = Uint8Array.from(pngHex.match(/../g), (h) => parseInt(h, 16));
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], 'dropped.png', { type: 'image/png' }));
    dt.items.add(new File(['when,what\n1,milk\n'], 'list.csv', { type: 'text/csv' }));
    const form = document.querySelector('#composer');
    for (const type of ['dragenter', 'dragover', 'drop']) form.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, [red]);
  await chipCount(page, 6);

  // Pasted into the message box, as a screenshot tool's copy is.
  await page.evaluate(([pngHex]) => {
    const bytes = Uint8Array.from(pngHex.match(/../g), (h) => parseInt(h, 16));
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], 'image.png', { type: 'image/png' }));
    document.querySelector('#input').dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
  }, [blue]);
  await chipCount(page, 7);

  // The CSV's × removes it and deletes its upload; the focus goes to the next file's ×.
  const csv = await page.getAttribute('#attachments .attachment[title="list.csv"] .attachment__name', 'href');
  await page.click('#attachments .attachment__remove[aria-label="Remove list.csv"]');
  await chipCount(page, 6);
  let gone = 0;
  for (let i = 0; i < 50 && gone !== 404; i++, await page.waitForTimeout(200)) gone = (await page.request.get(new URL(csv, page.url()).href)).status();
  assert(gone === 404, 'the removed file\'s upload is deleted: GET answers ' + gone);
  const focused = await page.evaluate(() => document.activeElement.getAttribute('aria-label'));
  assert(focused === 'Remove image.png', 'after a removal the focus is on the next ×: ' + focused);
  await check(page, '#attachments', 'before sending');
  // The chips take a row of their own: the message box keeps its width and height.
  const box = await page.$eval('#input', (el) => { const r = el.getBoundingClientRect(); return { w: r.width, h: r.height }; });
  assert(box.w >= 400 && box.h <= 120, 'the message box beside waiting chips: ' + JSON.stringify(box));
  await shot(page, 'attach-pending');

  await page.setViewportSize({ width: 375, height: 740 });
  await page.waitForTimeout(500); // the conversation list slides away as a drawer
  const small = (await tapTargets(page)).filter((s) => /attachment/.test(s));
  assert(small.length === 0, 'on a phone each × is a tap target: ' + small);
  const rows = await page.$$eval('#attachments .attachment', (els) => els.map((e) => {
    const c = e.getBoundingClientRect();
    const x = e.querySelector('.attachment__remove').getBoundingClientRect();
    return { h: Math.round(c.height), inside: x.top >= c.top - 1 && x.bottom <= c.bottom + 1 && x.right <= c.right + 1, right: c.right };
  }));
  assert(rows.every((r) => r.h <= 48 && r.inside && r.right <= 375), 'on a phone the chips stay one × tall, the × inside them: ' + JSON.stringify(rows));
  await shot(page, 'attach-pending-phone');
  await page.setViewportSize({ width: 1200, height: 820 });

  await ask(page, 'What did I attach?');
  await page.waitForSelector('.message--user .attachments');
  await check(page, '.message--user', 'after sending');
  assert(await page.$eval('#attachments', (el) => el.hidden), 'the composer\'s chips are cleared once sent');
  await waitTurnEnd(page, 60000);
  const answer = await page.textContent('.message--assistant .message__body');
  assert(answer.includes('dot.png (image/png') && answer.includes('which begins: # Shopping list') && answer.includes('dropped.png (image/png') &&
    answer.includes('image.png (image/png') && !answer.includes('list.csv'), 'the demo model names the files sent: ' + answer);
  // The SVG is served as a download of text, never as an image.
  const href = await page.$$eval('.message--user .attachment__name', (els) => els[2].getAttribute('href'));
  const resp = await page.request.get(new URL(href, page.url()).href);
  assert(resp.headers()['content-type'].startsWith('text/plain') && resp.headers()['content-disposition'].startsWith('attachment'),
    'the SVG is a text download: ' + JSON.stringify(resp.headers()));
  await shot(page, 'attach');
  // The same file attached again and removed: the sent question keeps it.
  await page.setInputFiles('#attach-file', files.slice(0, 1));
  await chipCount(page, 1);
  const dot = await page.getAttribute('#attachments .attachment__name', 'href');
  await page.click('#attachments .attachment__remove');
  await chipCount(page, 0);
  await page.waitForTimeout(500);
  assert((await page.request.get(new URL(dot, page.url()).href)).status() === 200, 'a file a sent question carries stays when its chip is removed');
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('.message--user .attachments');
  await check(page, '.message--user', 'after reload');
  await page.setViewportSize({ width: 375, height: 740 });
  await page.waitForTimeout(500);
  await page.$eval('.message--user', (el) => el.scrollIntoView());
  await shot(page, 'attach-phone');
  // The removed chip of a file the sent question carries: the page's DELETE
  // answered 409, which the browser logs as a failed load.
  noProblems(problems, /status of 409/);
});
