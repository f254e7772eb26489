// (b) The network drops mid-turn: the Go test's proxy cuts the page's event
// stream (POST /__test/cut) while the browser is offline, so the browser's
// own reconnections fail too. After the network is back the page resumes
// from its last seq, the answer's text is not duplicated, the turn
// completes, and the live text equals the stored content's text.
import { run, openPage, ask, waitTurnEnd, widgets, shot, assert, noProblems, baseURL } from './lib.mjs';
import { liveTextOf } from './text.mjs';

await run('drop', async (browser) => {
  const { page, context, problems } = await openPage(browser);
  const streams = [];
  page.on('request', async (r) => {
    if (!r.url().includes('/events')) return;
    const i = streams.push(r.url()) - 1;
    const h = await r.allHeaders().catch(() => ({}));
    streams[i] += ' last-event-id=' + (h['last-event-id'] || '');
  });
  // Keep the last live text and the turn id seen before the live view is
  // replaced by the server's html.
  await page.evaluate(() => {
    window.__live = { text: null, turnId: null };
    new MutationObserver(() => {
      const live = document.querySelector('.message--live');
      if (!live) return;
      window.__live.turnId = live.dataset.turnId;
      window.__live.text = [...live.querySelectorAll('.live-text')].map((e) => e.raw).join('\u0000');
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await ask(page, 'Explain how the event stream resumes after a disconnect, and what a snapshot is.');
  await page.waitForFunction(() => [...document.querySelectorAll('.message--live .live-text')].some((e) => e.textContent.length > 20), null, { timeout: 30000 });
  await context.setOffline(true);
  const cut = await (await page.request.post(baseURL + '/__test/cut')).json();
  assert(cut.cut >= 1, 'the proxy cut the open stream: ' + JSON.stringify(cut));
  await page.waitForTimeout(2500);
  await shot(page, 'b-offline');
  await context.setOffline(false);
  // A second cut, online this time: EventSource's own reconnection.
  await page.waitForTimeout(700);
  await page.request.post(baseURL + '/__test/cut');
  await waitTurnEnd(page, 90000);
  await shot(page, 'b-done');

  const { text, turnId } = await page.evaluate(() => window.__live);
  assert(turnId, 'a live turn was seen');
  assert(streams.length >= 2, 'the page reconnected: ' + JSON.stringify(streams));
  const resumed = streams.slice(1).some((s) => /after=[1-9]|last-event-id=[1-9]/.test(s));
  assert(resumed, 'a reconnection resumed from a seq: ' + JSON.stringify(streams));

  // The stored content's text, as the live view shows it.
  const resp = await page.request.get(baseURL + '/api/turns/' + turnId);
  const turn = await resp.json();
  assert(turn.turn.status === 'completed', 'turn completed: ' + turn.turn.status);
  const want = liveTextOf(turn.content);
  const got = text.split('\u0000').join('');
  assert(got === want, `live text equals the stored content's text\n--- live:\n${got}\n--- stored:\n${want}`);
  const ws = await widgets(page);
  assert(ws.length > 0 && ws.every((w) => w.status === 'success'), 'final widgets: ' + JSON.stringify(ws));
  const ids = ws.map((w) => w.id);
  assert(new Set(ids).size === ids.length, 'no duplicated widget');
  noProblems(problems);
  console.log('streams', JSON.stringify(streams));
});
