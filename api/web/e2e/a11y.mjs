// One live region, buttons told apart: in a research turn with sub-agents
// and searches, the page has exactly one polite live region (#announce);
// no tool widget, bubble or status line is one. It announces what the
// tools do briefly ("subagent started", "search documents finished", a
// failed fetch with its reason), a few words at a time, never the widgets'
// whole text. Within each turn every button has an accessible name of its
// own (Edit, Copy answer, Regenerate, Copy go code, Steps: <task>, …), as
// Playwright's getByRole finds them.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems } from './lib.mjs';

/** liveRegions counts the page's live regions: polite and assertive. */
async function liveRegions(page) {
  return page.evaluate(() => {
    const ids = (sel) => [...document.querySelectorAll(sel)].map((e) => e.id || e.className);
    return {
      polite: ids('[role=status], [role=log], [role=marquee], [role=timer], output, [aria-live=polite]'),
      assertive: ids('[role=alert], [aria-live=assertive]'),
    };
  });
}

/** buttonNames returns the accessible names of the buttons of each turn (a question and its answer). */
async function buttonNames(page) {
  const arts = page.locator('#messages > .message');
  const turns = [];
  for (let i = 0; i < (await arts.count()); i++) {
    const art = arts.nth(i);
    const names = [...(await art.ariaSnapshot()).matchAll(/- '?button "((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
    if (await art.evaluate((a) => a.classList.contains('message--user'))) turns.push(names);
    else if (turns.length) turns[turns.length - 1].push(...names);
  }
  return turns;
}

await run('a11y', async (browser) => {
  const { page, problems } = await openPage(browser);
  await page.evaluate(() => {
    window.__said = [];
    new MutationObserver(() => window.__said.push(document.querySelector('#announce').textContent))
      .observe(document.querySelector('#announce'), { childList: true, characterData: true, subtree: true });
  });
  await ask(page, 'Research how cancellation works; what happens after a crash? Show an example.');
  await page.waitForSelector('.message--live .toolcall', { timeout: 30000 });
  let regions = await liveRegions(page);
  assert(regions.polite.length === 1 && regions.polite[0] === 'announce', 'while it streams, one polite live region: ' + JSON.stringify(regions));
  await waitTurnEnd(page, 90000);
  await ask(page, 'How do clients resume a stream after a dropped connection? Show an example.');
  await waitTurnEnd(page, 90000);
  await ask(page, 'Fetch http://127.0.0.1:1/nothing-here');
  await waitTurnEnd(page, 90000);

  regions = await liveRegions(page);
  assert(regions.polite.length === 1 && regions.polite[0] === 'announce', 'one polite live region: ' + JSON.stringify(regions));
  assert(regions.assertive.every((id) => ['login-error', 'error-banner'].includes(id)), 'only the error banners are assertive: ' + JSON.stringify(regions));
  const widgets = await page.$$eval('.toolcall', (els) => els.length);
  assert(widgets >= 4, 'the turns have tool widgets: ' + widgets);

  // What came in the last moments is said together a moment later.
  await page.waitForFunction(() => /fetch url failed/.test(window.__said.join(' ')) && /Answer complete\./.test(window.__said.at(-1)), null, { timeout: 10000 });
  const said = await page.evaluate(() => window.__said);
  const all = said.join(' | ');
  assert(/subagent started/.test(all) && /subagent finished/.test(all), 'the sub-agents are announced: ' + all);
  assert(/search documents finished/.test(all), 'the searches are announced: ' + all);
  assert(/fetch url failed: \S/.test(all), 'a failed fetch is announced with its reason: ' + all);
  assert(/Answer complete\./.test(all), 'the end is announced: ' + all);
  assert(said.every((s) => s.length < 400 && !/[<>]/.test(s)), 'announcements are short words: ' + JSON.stringify(said));
  assert(said.length < widgets * 2, `fewer announcements (${said.length}) than tool status changes (${widgets * 2}): they are gathered`);

  // Every button of a turn has a name of its own.
  const turns = await buttonNames(page);
  assert(turns.length === 3, 'three turns: ' + JSON.stringify(turns));
  for (const names of turns) {
    const twice = names.filter((n, i) => names.indexOf(n) !== i);
    assert(twice.length === 0, 'no two buttons of a turn share a name: ' + JSON.stringify(names));
    assert(!names.includes('Steps') && !names.includes('Copy'), 'no bare "Steps" or "Copy": ' + JSON.stringify(names));
  }
  const research = page.locator('.message--assistant').first();
  for (const name of ['Copy answer', 'Regenerate']) {
    assert((await research.getByRole('button', { name, exact: true }).count()) === 1, `the answer has one "${name}"`);
  }
  const steps = research.getByRole('button', { name: /^Steps: Look up / });
  assert((await steps.count()) >= 2, 'each sub-agent has its Steps button named by its task');
  const example = page.locator('.message--assistant').nth(1);
  assert((await example.getByRole('button', { name: /^Copy (\S+ )?code( \d+)?$/ }).count()) >= 1, 'the example code has its Copy: ' + JSON.stringify(turns));
  assert((await page.locator('.message--user').first().getByRole('button', { name: 'Edit', exact: true }).count()) === 1, 'the question has Edit');
  await shot(page, 'a11y');
  noProblems(problems);
});
