// (b) The network drops mid-turn: the Go test's proxy cuts the page's event
// stream (POST /__test/cut) while the browser is offline, so the browser's
// own reconnections fail too; a Stop pressed then fails and says so, and
// its banner goes when the stream is back. After that the page resumes
// from its last seq, the answer's text is not duplicated, the turn
// completes, and the live text equals the stored content's text.
import { run, openPage, ask, waitTurnEnd, widgets, shot, assert, noProblems, baseURL, recordLive, storedAnswerHTML } from './lib.mjs';

await run('drop', async (browser) => {
  const { page, context, problems } = await openPage(browser);
  const streams = [];
  let opened = 0;
  const t0 = Date.now();
  page.on('requestfailed', (r) => { if (r.url().includes('/events')) streams.push(`${((Date.now() - t0) / 1000).toFixed(1)}s failed ${r.failure()?.errorText}`); });
  page.on('response', (r) => { if (r.url().includes('/events')) streams.push(`${((Date.now() - t0) / 1000).toFixed(1)}s response ${r.status()}`); });
  page.on('request', async (r) => {
    if (!r.url().includes('/events')) return;
    opened++;
    const i = streams.push(`${((Date.now() - t0) / 1000).toFixed(1)}s ${r.url()}`) - 1;
    const h = await r.allHeaders().catch(() => ({}));
    streams[i] += ' last-event-id=' + (h['last-event-id'] || '');
  });
  // Keep the last live HTML and the turn id seen while the turn was live.
  await page.evaluate(recordLive);
  await ask(page, 'Explain how the event stream resumes after a disconnect, and what a snapshot is.');
  await page.waitForFunction(() => {
    const b = document.querySelector('.message--live .message__body');
    return b && b.textContent.length > 20;
  }, null, { timeout: 30000 });
  const reopened = async () => {
    const n = opened;
    for (let i = 0; i < 100 && opened === n; i++) await page.waitForTimeout(100);
    await page.waitForTimeout(300);
  };
  // 1. A cut after which the server answers 503 once: EventSource gives up
  // (readyState CLOSED) and the page reconnects by itself with ?after=.
  const first = await (await page.request.post(baseURL + '/__test/cut?fail=1')).json();
  assert(first.cut >= 1, 'the first cut found an open stream: ' + JSON.stringify(streams));
  await reopened(); // the 503
  await reopened(); // the page's own ?after=
  // 2. A cut while the browser is offline, so EventSource's reconnections
  // fail too, until the network is back; then it resumes with Last-Event-ID.
  await context.setOffline(true);
  const second = await (await page.request.post(baseURL + '/__test/cut')).json();
  assert(second.cut >= 1, 'the second cut found an open stream (the turn is too short?) ' + JSON.stringify(streams, null, 1));
  // Stop while the server cannot be reached fails, and says so; once the
  // stream is back the banner goes (the answer still runs, Stop is offered
  // again), before the answer ends.
  await page.click('#stop');
  await page.waitForSelector('#error-banner:not([hidden])', { timeout: 10000 });
  assert((await page.textContent('#error-banner')).startsWith('Could not stop the answer'), 'a Stop while offline says it failed');
  await page.waitForTimeout(1500);
  await shot(page, 'b-offline');
  await context.setOffline(false);
  await page.waitForFunction(() => document.querySelector('#error-banner').hidden || !document.querySelector('.message--live'), null, { timeout: 30000 });
  assert(await page.$('.message--live'), 'the failed Stop\'s banner went once the server was back, while the answer still ran');
  assert(await page.isVisible('#stop') && await page.isEnabled('#stop'), 'Stop is offered again');
  await waitTurnEnd(page, 90000);
  await shot(page, 'b-done');

  const { html, turnId } = await page.evaluate(() => window.__live);
  assert(turnId, 'a live turn was seen');
  assert(streams.length >= 2, 'the page reconnected: ' + JSON.stringify(streams));
  const resumed = streams.some((s) => /last-event-id=[1-9]/.test(s));
  assert(resumed, 'EventSource resumed with Last-Event-ID: ' + JSON.stringify(streams));
  const own = streams.some((s) => /[?&]after=[1-9]/.test(s));
  assert(own, 'the page reconnected by itself with ?after=: ' + JSON.stringify(streams));

  // The live answer, put together across the cuts, is the stored one.
  const stored = await storedAnswerHTML(page, turnId);
  assert(stored.turn.status === 'completed', 'turn completed: ' + stored.turn.status);
  assert(html === stored.html, `live HTML equals the stored html\n--- live:\n${html}\n--- stored:\n${stored.html}`);
  const ws = await widgets(page);
  assert(ws.length > 0 && ws.every((w) => w.status === 'success'), 'final widgets: ' + JSON.stringify(ws));
  const ids = ws.map((w) => w.id);
  assert(new Set(ids).size === ids.length, 'no duplicated widget');
  noProblems(problems, /ERR_INTERNET_DISCONNECTED|ERR_INCOMPLETE_CHUNKED_ENCODING|status of 503|EventSource/);
  console.log('streams', JSON.stringify(streams));
});
