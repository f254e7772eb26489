// MCP tools in the page, against server-everything: the tool list shows the
// server connected with its tools; a long-running call's progress shows in
// the status bubble ("trigger-long-running-operation: 1 of 4"), and Stop
// ends its tag cancelled within a second; get-tiny-image's result image
// shows in the call's details, live and after a reload.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems } from './lib.mjs';

await run('mcp', async (browser) => {
  const { page, problems } = await openPage(browser);

  // The tools and their servers.
  await page.click('#tools > summary');
  await page.waitForSelector('#tools .tools__server[data-server="everything"][data-status="connected"]');
  const names = await page.$$eval('#tools .tools__server[data-server="everything"] .tools__tool', (els) => els.map((e) => e.textContent));
  assert(names.includes('everything_echo') && names.includes('everything_get-tiny-image'), 'everything\'s tools are listed: ' + names);
  assert(await page.isVisible('#tools .tools__server[data-server="broken"] .tools__error'), 'a failed server says why');
  await shot(page, 'tools');
  await page.click('#tools > summary');

  // Progress, then Stop.
  await ask(page, 'everything_trigger-long-running-operation {"duration": 40, "steps": 8}');
  const bubble = '.message--live .bubble:not([hidden]) .bubble__text';
  await page.waitForFunction((sel) => /^trigger-long-running-operation: 2 of 8/.test(document.querySelector(sel)?.textContent || ''), bubble, { timeout: 30000 });
  await shot(page, 'progress');
  const ms = await page.evaluate(() => new Promise((resolve) => {
    const t0 = performance.now();
    const done = () => document.querySelector('.message--live .toolcall--cancelled, .message--ended .toolcall--cancelled, .message--assistant:last-of-type .toolcall--cancelled');
    new MutationObserver((_, obs) => { if (done()) { obs.disconnect(); resolve(performance.now() - t0); } })
      .observe(document.body, { subtree: true, childList: true, attributes: true });
    document.querySelector('#stop').click();
  }));
  console.log(`stop to cancelled tag: ${ms.toFixed(0)} ms`);
  assert(ms < 1000, `the tag ended cancelled ${ms.toFixed(0)} ms after Stop, want < 1000`);
  await waitTurnEnd(page);

  // The image result.
  await ask(page, 'everything_get-tiny-image {}');
  await waitTurnEnd(page);
  const img = '.message--assistant:last-of-type .toolcall--success[data-images="1"] .toolcall__images img';
  await page.waitForFunction((sel) => { const i = document.querySelector(sel); return i && i.complete && i.naturalWidth > 0; }, img, { timeout: 10000 });
  await page.$eval(img, (el) => el.scrollIntoView({ block: 'center' }));
  await shot(page, 'image');
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForFunction((sel) => { const i = document.querySelector(sel); return i && i.complete && i.naturalWidth > 0; }, img, { timeout: 10000 });
  const cancelled = await page.$$('.message--assistant .toolcall--cancelled');
  assert(cancelled.length === 1, 'the stopped call is still cancelled after the reload');
  noProblems(problems);
});
