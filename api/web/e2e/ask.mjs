// (a) Ask a question: tool widgets go from a spinner to success, the answer shows,
// no spinner is left at the end, and after a reload the server's html shows
// the same final statuses.
import { run, openPage, ask, waitTurnEnd, widgets, shot, assert, noProblems } from './lib.mjs';

await run('ask', async (browser) => {
  const { page, problems } = await openPage(browser);
  assert(await page.isVisible('#demo-banner'), 'the demo banner is shown');
  await shot(page, 'a-empty');

  // Record every status each widget shows while the turn streams.
  await page.evaluate(() => {
    window.__seen = {};
    const record = () => {
      for (const el of document.querySelectorAll('.message--live .toolcall')) {
        const id = el.dataset.toolCallId;
        (window.__seen[id] ||= []);
        const list = window.__seen[id];
        if (list[list.length - 1] !== el.dataset.status) list.push(el.dataset.status);
      }
    };
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
  });
  await ask(page, 'How does resuming a stream work? Make a plan.');
  await page.waitForSelector('.message--live .toolcall', { timeout: 20000 });
  await page.waitForSelector('.message--live .toolcall--running, .message--live .toolcall--success', { timeout: 20000 });
  await shot(page, 'a-streaming');
  await waitTurnEnd(page);
  await shot(page, 'a-done');

  const seen = await page.evaluate(() => window.__seen);
  const ids = Object.keys(seen);
  assert(ids.length >= 1, 'at least one tool widget was seen live');
  // Every widget showed a spinner live (pending while its arguments
  // stream, running while it runs: one render frame may carry a quick
  // search from pending to success) and ended success.
  for (const id of ids) {
    assert(seen[id].some((s) => s === 'pending' || s === 'running'), `widget ${id} showed a spinner live (saw ${seen[id].join(',')})`);
    assert(seen[id][seen[id].length - 1] === 'success', `widget ${id} ended success live (saw ${seen[id].join(',')})`);
  }
  const after = await widgets(page);
  assert(after.length >= ids.length, 'the widgets are in the final html');
  assert(after.every((w) => w.status === 'success'), 'final statuses are success: ' + JSON.stringify(after));
  assert((await page.$$('.toolcall__icon--spinner')).length === 0, 'no spinner left');
  const answer = await page.textContent('.message--assistant:last-of-type .message__body');
  assert(answer && answer.includes('offline demo model'), 'the answer text is shown');

  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('.message--assistant');
  const reloaded = await widgets(page);
  assert(JSON.stringify(reloaded.map((w) => [w.id, w.status])) === JSON.stringify(after.map((w) => [w.id, w.status])),
    `same statuses after reload: ${JSON.stringify(reloaded)} vs ${JSON.stringify(after)}`);
  assert((await page.$$('.toolcall__icon--spinner')).length === 0, 'no spinner after reload');
  await shot(page, 'a-reloaded');
  noProblems(problems);
});
