// Attachments: a PNG, a text file and a hostile SVG/HTML attached with the
// attach button show as chips before sending and in the question after
// sending and after a reload; the demo model names them; the SVG and HTML
// never render (no svg, script or iframe in the page, their links are
// downloads), and a raster image alone gets a thumbnail.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems } from './lib.mjs';

const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
  '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082', 'hex');
const files = [
  { name: 'dot.png', mimeType: 'image/png', buffer: png },
  { name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Shopping list\nmilk\n') },
  { name: '<svg onload=alert(1)>.svg', mimeType: 'image/svg+xml', buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>') },
  { name: 'page.html', mimeType: 'text/html', buffer: Buffer.from('<html><body><script>alert(3)</script></body></html>') },
];

async function check(page, scope, when) {
  const names = await page.$$eval(scope + ' .attachment__name', (els) => els.map((e) => e.textContent));
  assert(JSON.stringify(names) === JSON.stringify(files.map((f) => f.name)), `${when}: the chips name the files as text: ${names}`);
  const thumbs = await page.$$eval(scope + ' .attachment__thumb', (els) => els.length);
  assert(thumbs === 1, `${when}: only the PNG has a thumbnail (${thumbs})`);
  const bad = await page.$$eval('svg:not(.icon), script[src*="uploads"], iframe, object, embed', (els) => els.length);
  assert(bad === 0, `${when}: nothing of the SVG or HTML rendered`);
}

await run('attach', async (browser) => {
  const { page, problems } = await openPage(browser);
  await page.setInputFiles('#attach-file', files);
  await page.waitForFunction(() => document.querySelectorAll('#attachments .attachment').length === 4, null, { timeout: 15000 });
  await check(page, '#attachments', 'before sending');
  // The chips take a row of their own: the message box keeps its width and height.
  const box = await page.$eval('#input', (el) => { const r = el.getBoundingClientRect(); return { w: r.width, h: r.height }; });
  assert(box.w >= 400 && box.h <= 120, 'the message box beside waiting chips: ' + JSON.stringify(box));
  await shot(page, 'attach-pending');
  await page.setViewportSize({ width: 375, height: 740 });
  await page.waitForTimeout(500); // the conversation list slides away as a drawer
  await shot(page, 'attach-pending-phone');
  await page.setViewportSize({ width: 1200, height: 820 });
  await ask(page, 'What did I attach?');
  await page.waitForSelector('.message--user .attachments');
  await check(page, '.message--user', 'after sending');
  assert(await page.$eval('#attachments', (el) => el.hidden), 'the composer\'s chips are cleared once sent');
  await waitTurnEnd(page, 60000);
  const answer = await page.textContent('.message--assistant .message__body');
  assert(answer.includes('dot.png (image/png') && answer.includes('which begins: # Shopping list'), 'the demo model names the files: ' + answer);
  // The SVG is served as a download of text, never as an image.
  const href = await page.$$eval('.message--user .attachment__name', (els) => els[2].getAttribute('href'));
  const resp = await page.request.get(new URL(href, page.url()).href);
  assert(resp.headers()['content-type'].startsWith('text/plain') && resp.headers()['content-disposition'].startsWith('attachment'),
    'the SVG is a text download: ' + JSON.stringify(resp.headers()));
  await shot(page, 'attach');
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('.message--user .attachments');
  await check(page, '.message--user', 'after reload');
  noProblems(problems);
});
