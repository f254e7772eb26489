// The everyday actions, through the page's controls by their accessible
// names, at 1200 px and on a 375 px phone: Retry a stopped answer (its plan
// does not claim to be done), Regenerate the last answer, Edit the last
// question in place (Esc cancels), Rename the conversation, Export it as
// Markdown and JSON, and Search the conversations (debounced, snippets,
// Esc clears). Each result is checked through the API and on screen; after
// each action that starts a turn the page follows it live as after a send.
import fs from 'node:fs';
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems, tapTargets, recordLive, baseURL } from './lib.mjs';

const getJSON = async (page, path) => {
  const r = await page.request.get(baseURL + path);
  assert(r.ok(), `GET ${path}: ${r.status()}`);
  return r.json();
};

const button = (page, name) => page.getByRole('button', { name, exact: true });

/** shown returns the messages on the page: role, status, turn, text of questions. */
const shown = (page) => page.$$eval('#messages > .message', (els) => els.map((e) => ({
  role: e.classList.contains('message--user') ? 'user' : 'assistant',
  status: e.dataset.status || '', turnId: e.dataset.turnId || '', id: e.dataset.messageId || '',
  text: e.classList.contains('message--user') ? e.querySelector('.message__body').textContent : '',
  live: e.classList.contains('message--live'),
})));

/** conversation returns the conversation's live messages (the replaced left out) and its earlier versions. */
async function conversation(page, id) {
  const c = await getJSON(page, '/api/conversations/' + id);
  const replaced = await getJSON(page, '/api/conversations/' + id + '/replaced');
  return { c, messages: c.messages, replaced: replaced.messages };
}

const currentId = (page) => page.evaluate(() => decodeURIComponent(location.hash.slice(1)));

/**
 * startsLive presses the control `name` and checks that the page follows
 * the new turn as after a send: when the live answer appears, the question
 * is shown above it in place of the replaced ones, Stop shows, the first
 * status is the server's; the turn is a new one. It returns its id.
 */
async function startsLive(page, name, question, thinking) {
  await page.evaluate(recordLive);
  await page.evaluate(() => {
    // What the page showed when the live answer first appeared (a fast
    // model may finish before a poll would see it).
    window.__first = null;
    const seen = new MutationObserver(() => {
      const live = document.querySelector('.message--live');
      if (!live || window.__first) return;
      const arts = [...document.querySelectorAll('#messages > .message')];
      const q = live.previousElementSibling;
      window.__first = {
        turnId: live.dataset.turnId, count: arts.length, last: arts.at(-1) === live,
        question: q && q.classList.contains('message--user') ? q.querySelector('.message__body').textContent : null,
        stop: !document.querySelector('#stop').hidden, send: !document.querySelector('#send').hidden,
      };
      seen.disconnect();
    });
    seen.observe(document.body, { subtree: true, childList: true });
  });
  const before = await shown(page);
  await button(page, name).click();
  await page.waitForFunction(() => window.__first, null, { timeout: 15000 });
  const first = await page.evaluate(() => window.__first);
  assert(first.count === before.length && first.last, `${name}: the replaced question and answer give way to the new ones: ${JSON.stringify(first)}`);
  assert(first.question === question, `${name}: the question shows with the live answer: ${JSON.stringify(first)}`);
  assert(first.stop && !first.send, `${name}: Stop shows while the new answer is written`);
  const turnId = first.turnId;
  assert(turnId && turnId !== before.at(-1).turnId, `${name}: a new turn: ${turnId}`);
  await waitTurnEnd(page, 60000);
  const live = await page.evaluate(() => window.__live);
  assert(live.turnId === turnId, `${name}: the live answer was the new turn's`);
  assert(live.bubbles[0] === thinking, `${name}: the first status is the server's ${JSON.stringify(thinking)}: ${JSON.stringify(live.bubbles)}`);
  const now = await shown(page);
  assert(now.length === before.length && now.at(-1).turnId === turnId && now.at(-2).text === question, `${name}: the new question and answer are shown: ${JSON.stringify(now)}`);
  return turnId;
}

/** stopWhileWriting asks a question with a plan and stops it while the answer is written: every step done but the last, Write the answer. */
async function stopWhileWriting(page) {
  await ask(page, 'Compare resuming a stream with cancelling a turn, and explain snapshots. Make a plan.');
  await page.waitForFunction(() => {
    const items = [...document.querySelectorAll('#todos .todo')];
    return items.length > 1 && items.slice(0, -1).every((t) => t.dataset.status === 'done') && items.at(-1).dataset.status === 'in_progress';
  }, null, { timeout: 60000 });
  await page.click('#stop');
  await waitTurnEnd(page, 60000);
}

async function checkPhone(page, when) {
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert(width <= 375, `${when}: nothing scrolls sideways (scrollWidth ${width})`);
  const small = await tapTargets(page);
  assert(small.length === 0, `${when}: tap targets under 44 × 44 px: ${small.join(', ')}`);
  // The header keeps room for the title, or for the title being renamed.
  const title = await page.$eval('.chat__head', (h) => {
    const t = [...h.querySelectorAll('#conversation-title, #rename-input')].find((e) => e.getClientRects().length);
    return t ? t.getBoundingClientRect().width : 0;
  });
  assert(title >= 140, `${when}: the title has room in the header: ${title} px`);
}

async function everyAction(page, { phone, prefix }) {
  const info = await getJSON(page, '/api/info');
  const thinking = info.texts.thinking;
  assert(thinking, 'the server hands over its status words');
  assert(await page.isHidden('#conversation-tools'), 'no Rename or Export before a conversation exists');

  // A stopped answer: its plan says it stopped, and it offers Retry.
  await stopWhileWriting(page);
  const id = await currentId(page);
  let last = (await shown(page)).at(-1);
  assert(last.status === 'cancelled', 'the answer was stopped: ' + JSON.stringify(last));
  const count = await page.textContent('.message--assistant:last-of-type .todos__count');
  assert(/^Stopped · \d+ of \d+ done$/.test(count) && !/(\d+)\/\1 done/.test(count), 'the stopped plan does not claim to be done: ' + count);
  assert(await button(page, 'Retry').isVisible(), 'a stopped answer offers Retry');
  assert(await button(page, 'Regenerate').count() === 0, 'a stopped answer does not offer Regenerate');
  assert(await button(page, 'Edit').isVisible(), 'the last question offers Edit');
  if (phone) await checkPhone(page, 'stopped');
  await shot(page, prefix + '-stopped');

  // Retry.
  const question = (await shown(page)).at(-2).text;
  const stoppedTurn = last.turnId;
  const retried = await startsLive(page, 'Retry', question, thinking);
  let api = await conversation(page, id);
  assert(api.messages.length === 2, 'the conversation holds the new question and answer: ' + api.messages.length);
  assert(api.messages[1].turnId === retried && api.messages[1].status === 'complete', 'the new answer completed: ' + api.messages[1].status);
  assert(api.replaced.some((m) => m.turnId === stoppedTurn && m.replacedBy === retried), 'the stopped answer is an earlier version');
  last = (await shown(page)).at(-1);
  assert(last.turnId === retried && last.status === 'complete', 'the page shows the new answer: ' + JSON.stringify(last));
  assert(await page.isHidden('.message--assistant:last-of-type .message__note'), 'no "Stopped" note is left');
  assert(await button(page, 'Retry').count() === 0, 'a finished answer does not offer Retry');
  assert(await button(page, 'Regenerate').isVisible(), 'the finished answer offers Regenerate');
  const doneCount = await page.textContent('.message--assistant:last-of-type .todos__count');
  assert(/^(\d+)\/\1 done$/.test(doneCount), 'the finished plan is done: ' + doneCount);
  await shot(page, prefix + '-retried');

  // Regenerate, with the keyboard: it is reached with Tab and shows its focus.
  await page.focus('.message--assistant:last-of-type .copy-answer');
  await page.keyboard.press('Shift+Tab');
  const focus = await page.evaluate(() => {
    const a = document.activeElement;
    const s = getComputedStyle(a);
    return { text: a.textContent, outline: s.outlineStyle, width: parseFloat(s.outlineWidth) };
  });
  assert(focus.text === 'Regenerate' && focus.outline !== 'none' && focus.width >= 2, 'Regenerate is reached with the keyboard and shows its focus: ' + JSON.stringify(focus));
  await shot(page, prefix + '-regenerate-focus');
  await page.evaluate(recordLive);
  await page.keyboard.press('Enter');
  await page.waitForSelector('.message--live', { timeout: 15000 });
  assert(await page.evaluate(() => document.activeElement.id) === 'stop', 'the focus moved to Stop');
  await waitTurnEnd(page, 60000);
  const regenerated = (await shown(page)).at(-1).turnId;
  assert(regenerated && regenerated !== retried, 'Regenerate started a new turn');
  assert((await page.evaluate(() => window.__live.bubbles[0])) !== undefined, 'the regenerated answer was followed live');
  api = await conversation(page, id);
  assert(api.messages.length === 2 && api.messages[1].turnId === regenerated && api.messages[1].status === 'complete', 'the regenerated answer replaced the last one');
  assert(api.replaced.some((m) => m.turnId === retried && m.replacedBy === regenerated), 'the retried answer is an earlier version');
  assert((await shown(page)).length === 2, 'one question and one answer on screen');

  // Edit: Esc leaves the question as it was.
  await button(page, 'Edit').click();
  const box = page.getByRole('textbox', { name: 'Edit message' });
  assert(await box.inputValue() === question, 'the editor holds the question');
  await box.fill('Something else');
  if (phone) await checkPhone(page, 'editing');
  await shot(page, prefix + '-editing');
  await box.press('Escape');
  assert(await box.count() === 0, 'Esc closed the editor');
  assert((await shown(page)).at(-2).text === question, 'Esc left the question as it was');
  assert(await page.isHidden('#stop'), 'Esc started or stopped nothing');
  assert(await page.evaluate(() => document.activeElement.textContent) === 'Edit', 'the focus is back on Edit');
  // Cancel does the same; Save sends the edited question.
  await button(page, 'Edit').click();
  await button(page, 'Cancel').click();
  assert(await box.count() === 0 && (await shown(page)).at(-2).text === question, 'Cancel left the question as it was');
  await button(page, 'Edit').click();
  const edited = 'How does cancellation work, and what happens after a crash?';
  await box.fill(edited);
  const editedTurn = await startsLive(page, 'Save', edited, thinking);
  api = await conversation(page, id);
  assert(api.messages.length === 2 && api.messages[0].content === edited && api.messages[1].turnId === editedTurn, 'the server holds the edited question and its answer');
  assert(api.replaced.some((m) => m.role === 'user' && m.content === question && m.replacedBy === editedTurn), 'the old question is an earlier version');
  await shot(page, prefix + '-edited');

  // Rename: Esc keeps the title, Enter saves the new one.
  const oldTitle = await page.textContent('#conversation-title');
  await button(page, 'Rename').click();
  const title = page.getByRole('textbox', { name: 'Conversation title' });
  await title.fill('Not this one');
  if (phone) {
    await checkPhone(page, 'renaming');
    const w = await page.$eval('#rename-input', (el) => el.getBoundingClientRect().width);
    assert(w >= 250, 'on a phone the title being renamed has the header\'s width: ' + w);
  }
  await shot(page, prefix + '-renaming');
  await title.press('Escape');
  assert(await page.textContent('#conversation-title') === oldTitle && await page.isVisible('#conversation-title'), 'Esc kept the title');
  await button(page, 'Rename').click();
  const name = prefix === 'x' ? 'Cancellation notes' : 'Phone notes';
  await title.fill(name);
  await title.press('Enter');
  await page.waitForFunction((n) => document.querySelector('#conversation-title').textContent === n, name);
  assert((await getJSON(page, '/api/conversations/' + id)).conversation.title === name, 'the server holds the new title');
  assert(await page.title() === name + ' — toolmark', 'the tab shows the new title');
  await page.waitForFunction(([cid, n]) => document.querySelector(`#conversation-list [data-id="${cid}"] .conversation__title`)?.textContent === n, [id, name]);

  // Export: a menu of two downloads.
  await button(page, 'Export').click();
  if (phone) await checkPhone(page, 'export menu');
  await shot(page, prefix + '-export');
  const markdown = await download(page, 'Markdown (.md)');
  assert(markdown.name.endsWith('.md') && markdown.text.startsWith('# ' + name + '\n'), 'the Markdown export: ' + markdown.name + ' ' + markdown.text.slice(0, 80));
  assert(markdown.text.includes(edited) && !markdown.text.includes('Make a plan'), 'the Markdown export holds the edited question, not the replaced one');
  assert(await page.isHidden('#export-menu'), 'the menu closed');
  await button(page, 'Export').click();
  await page.keyboard.press('ArrowDown');
  const json = await download(page, 'JSON (.json)');
  const exported = JSON.parse(json.text);
  assert(json.name.endsWith('.json') && exported.conversation.title === name && exported.messages.length === 2, 'the JSON export');
  assert(exported.messages[1].id === api.messages[1].id, 'the JSON export holds the answer shown');
  await button(page, 'Export').click();
  await page.keyboard.press('Escape');
  assert(await page.isHidden('#export-menu') && await page.evaluate(() => document.activeElement.id) === 'export', 'Esc closes the menu, the focus back on Export');

  // Search, in the drawer on a phone.
  if (phone) await page.click('#menu');
  const search = page.getByRole('searchbox', { name: 'Search conversations' });
  await search.fill('crash');
  await page.waitForSelector('#search-results:not([hidden]) .search__result', { timeout: 10000 });
  const want = (await getJSON(page, '/api/conversations?q=crash')).conversations;
  const got = await page.$$eval('#search-results .search__result', (els) => els.map((e) => ({
    id: e.dataset.id, snippet: e.querySelector('.search__snippet')?.textContent || '', marks: [...e.querySelectorAll('mark')].map((m) => m.textContent.toLowerCase()),
  })));
  assert(JSON.stringify(got.map((g) => g.id)) === JSON.stringify(want.map((c) => c.id)), 'the results are the server\'s: ' + JSON.stringify(got));
  assert(got.some((g) => g.id === id), 'the edited conversation is found');
  const hit = got.find((g) => g.id === id);
  assert(hit.snippet === want.find((c) => c.id === id).snippet && hit.marks.includes('crash'), 'its snippet shows, the match marked: ' + JSON.stringify(hit));
  assert(await page.isHidden('#browse'), 'the results take the list\'s place');
  if (phone) await checkPhone(page, 'search');
  await shot(page, prefix + '-search');
  await search.fill('zebra-nothing');
  await page.waitForFunction(() => document.querySelector('#search-status').textContent.startsWith('No conversation'));
  await search.press('Escape');
  assert(await search.inputValue() === '' && await page.isVisible('#browse') && await page.isHidden('#search-results'), 'Esc empties the box and brings the list back');
  if (phone) assert(await page.evaluate(() => document.querySelector('#app').classList.contains('app--sidebar-open')), 'the first Esc leaves the drawer open');
  await search.fill('crash');
  await page.waitForSelector('#search-results:not([hidden]) .search__result');
  await page.click(`#search-results [data-id="${id}"] a`);
  await page.waitForFunction((cid) => location.hash === '#' + cid, id);
  if (phone) await page.waitForFunction(() => document.querySelector('#sidebar').getBoundingClientRect().right <= 0);
  await page.waitForSelector('.message--assistant');
  await shot(page, prefix + '-done');
}

/** download clicks the menu's link `name` and returns the file's name and text. */
async function download(page, name) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name }).click()]);
  const text = fs.readFileSync(await d.path(), 'utf8');
  return { name: d.suggestedFilename(), text };
}

/**
 * failedAnswer: a model that fails once (TOOLMARK_ACTIONS=failed; the
 * server's model answers 401, then an answer): the failed answer says why
 * and offers Retry, which answers it.
 */
async function failedAnswer(page, { phone, prefix }) {
  const { texts } = await getJSON(page, '/api/info');
  await ask(page, 'What is a lease?');
  await waitTurnEnd(page, 60000);
  const id = await currentId(page);
  const failed = (await shown(page)).at(-1);
  assert(failed.status === 'failed', 'the answer failed: ' + JSON.stringify(failed));
  const note = await page.textContent('.message--assistant:last-of-type .message__note');
  const { turn: stored, html } = await getJSON(page, '/api/turns/' + failed.turnId);
  assert(note && note === stored.error, `the failed answer says why, in the server's words: ${JSON.stringify(note)} vs ${JSON.stringify(stored.error)}`);
  assert(html || await page.isHidden('.message--assistant:last-of-type .message__body'), 'an answer that failed before its first word shows no empty box');
  // Shown as an error (not small grey text), and Copy answer copies it.
  const look = await page.$eval('.message--assistant:last-of-type .message__note', (el) => {
    const cs = getComputedStyle(el);
    return { size: parseFloat(cs.fontSize), border: cs.borderTopStyle, color: cs.color, muted: getComputedStyle(document.querySelector('.message__time')).color };
  });
  assert(look.size >= 14 && look.border === 'solid' && look.color !== look.muted, 'the error is shown as an error: ' + JSON.stringify(look));
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.locator('.message--assistant:last-of-type').getByRole('button', { name: 'Copy answer' }).click();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert(copied === stored.error, `Copy answer copies the error: ${JSON.stringify(copied)}`);
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('.message--assistant');
  assert(html || await page.isHidden('.message--assistant:last-of-type .message__body'), 'nor after a reload');
  const reloaded = await page.textContent('.message--assistant:last-of-type .message__note');
  assert(reloaded === stored.error, `after a reload too, the failed answer says why in the server's words: ${JSON.stringify(reloaded)}`);
  assert(await button(page, 'Retry').isVisible() && await button(page, 'Regenerate').count() === 0, 'a failed answer offers Retry');
  if (phone) await checkPhone(page, 'failed');
  await shot(page, prefix + '-failed');
  const retried = await startsLive(page, 'Retry', 'What is a lease?', texts.thinking);
  const api = await conversation(page, id);
  assert(api.messages.length === 2 && api.messages[1].turnId === retried && api.messages[1].status === 'complete', 'the retried answer completed');
  assert(api.replaced.some((m) => m.turnId === failed.turnId && m.replacedBy === retried), 'the failed answer is an earlier version');
  assert((await page.textContent('.message--assistant:last-of-type .message__body')).includes('A lease is'), 'the new answer shows');
  assert(await page.isHidden('.message--assistant:last-of-type .message__note'), 'no error is left on it');
  await shot(page, prefix + '-failed-retried');
}

const flow = process.env.TOOLMARK_ACTIONS === 'failed' ? failedAnswer : everyAction;

await run('actions', async (browser) => {
  const { page, problems } = await openPage(browser, { acceptDownloads: true });
  await flow(page, { phone: false, prefix: 'x' });
  noProblems(problems);
});

await run('actions-phone', async (browser) => {
  const { page, problems } = await openPage(browser, { viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true, acceptDownloads: true });
  await flow(page, { phone: true, prefix: 'xm' });
  noProblems(problems);
});
