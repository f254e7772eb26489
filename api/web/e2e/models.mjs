// The model picker: it lists what GET /api/models does (labels as text),
// the default picked and named by an accessible label; each answer names
// the model picked for it; a reload picks the conversation's model, and a
// new conversation the default again. Regenerate (by keyboard) and Retry
// (by mouse) answer again with a model chosen in a menu beside them, which
// fits a phone.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems, baseURL, tapTargets } from './lib.mjs';

const picked = (page) => page.$eval('#model', (s) => s.value);
const named = (page) => page.$$eval('.message--assistant .message__model', (els) => els.map((e) => e.textContent));

await run('models', async (browser) => {
  const { page, problems } = await openPage(browser);
  const api = await (await fetch(baseURL + '/api/models')).json();
  await page.waitForFunction((n) => document.querySelectorAll('#model option').length === n, api.models.length);
  const options = await page.$$eval('#model option', (os) => os.map((o) => ({ id: o.value, label: o.textContent })));
  assert(JSON.stringify(options) === JSON.stringify(api.models.map((m) => ({ id: m.id, label: m.label }))),
    'the picker lists the models of GET /api/models: ' + JSON.stringify(options));
  assert(await page.isVisible('#model'), 'the picker shows with two models');
  assert(await page.textContent('#model-name') === '', 'with a picker the sidebar names no model of its own: ' + await page.textContent('#model-name'));
  assert(await picked(page) === api.default && api.default === 'deep', 'the default is picked: ' + await picked(page));
  const name = await page.$eval('#model', (s) => s.labels[0] && s.labels[0].textContent);
  assert(name === 'Model', 'the picker has an accessible label: ' + name);

  await page.selectOption('#model', 'quick');
  await ask(page, 'How does resume work?');
  await waitTurnEnd(page);
  await page.selectOption('#model', 'deep');
  await ask(page, 'And cancellation?');
  await waitTurnEnd(page);
  await shot(page, 'models');
  assert(JSON.stringify(await named(page)) === '["Quick demo","Deep demo"]', 'each answer names its model: ' + JSON.stringify(await named(page)));

  await page.selectOption('#model', 'quick'); // picked, not sent: a reload shows the conversation's
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForFunction(() => document.querySelectorAll('.message--assistant .message__model').length === 2);
  assert(await picked(page) === 'deep', 'after a reload the conversation\'s model is picked: ' + await picked(page));
  assert(JSON.stringify(await named(page)) === '["Quick demo","Deep demo"]', 'after a reload each answer names its model');

  // Regenerate with another model, by keyboard: the arrow beside
  // Regenerate opens the models, the answer's own marked and focused.
  const arrow = '.message--assistant:last-of-type .again__more';
  assert(await page.getAttribute(arrow, 'aria-haspopup') === 'menu', 'the arrow says it opens a menu');
  await page.focus(arrow);
  await page.keyboard.press('Enter');
  await page.waitForSelector('.again__menu');
  const items = await page.$$eval('.again__menu [role="menuitemradio"]', (els) => els.map((e) => ({ label: e.textContent, checked: e.getAttribute('aria-checked') })));
  assert(JSON.stringify(items) === JSON.stringify(api.models.map((m) => ({ label: m.label, checked: String(m.id === 'deep') }))),
    'the menu lists the models, the answer\'s marked: ' + JSON.stringify(items));
  assert(await page.evaluate(() => document.activeElement.textContent) === 'Deep demo', 'the answer\'s model has the focus');
  assert(await page.getAttribute(arrow, 'aria-expanded') === 'true', 'the arrow says the menu is open');
  await page.keyboard.press('Escape');
  assert(await page.$('.again__menu') === null, 'Esc closes the menu');
  assert(await page.evaluate(() => document.activeElement.classList.contains('again__more')), 'Esc gives the focus back to the arrow');
  assert(await page.$('.message--live') === null, 'Esc stops nothing');
  await page.keyboard.press('ArrowDown');
  await page.waitForSelector('.again__menu');
  await page.keyboard.press('ArrowDown'); // wraps to the first, Quick demo
  await page.keyboard.press('Enter');
  await page.waitForSelector('.message--live');
  await waitTurnEnd(page);
  assert(JSON.stringify(await named(page)) === '["Quick demo","Quick demo"]', 'the regenerated answer names its model: ' + JSON.stringify(await named(page)));

  // Retry a stopped answer with another model, by mouse.
  await page.selectOption('#model', 'deep');
  await ask(page, 'Compare resuming a stream with cancelling a turn, and explain snapshots.');
  await page.waitForSelector('.message--live .toolcall, .message--live .message__body p', { timeout: 30000 });
  await page.click('#stop');
  await waitTurnEnd(page);
  await page.click('.message--assistant:last-of-type .again__more');
  assert(await page.textContent('.again__menu .again__caption') === 'Retry with', 'the stopped answer\'s menu retries');
  const checked = await page.$eval('.again__menu [aria-checked="true"]', (e) => e.textContent);
  assert(checked === 'Deep demo', 'the stopped answer\'s model is marked: ' + checked);
  await page.click('.again__menu [data-model="quick"]');
  await page.waitForSelector('.message--live');
  await waitTurnEnd(page);
  assert(JSON.stringify(await named(page)) === '["Quick demo","Quick demo","Quick demo"]', 'the retried answer names its model: ' + JSON.stringify(await named(page)));
  const conv = await (await page.request.get(baseURL + '/api/conversations/' + await page.evaluate(() => decodeURIComponent(location.hash.slice(1))))).json();
  const stored = conv.messages.filter((m) => m.role === 'assistant').map((m) => m.model);
  assert(JSON.stringify(stored) === '["quick","quick","quick"]', 'the server stored each answer\'s model: ' + JSON.stringify(stored));

  // On a phone the menu fits the screen and its items are tap targets.
  await page.setViewportSize({ width: 375, height: 740 });
  await page.waitForTimeout(500); // the conversation list slides away as a drawer
  await page.click('.message--assistant:last-of-type .again__more');
  const fit = await page.$eval('.again__menu', (m) => {
    const r = m.getBoundingClientRect();
    return { left: r.left, right: r.right, items: [...m.querySelectorAll('.again__model')].map((i) => i.getBoundingClientRect().height) };
  });
  assert(fit.left >= 0 && fit.right <= 375 && fit.items.every((h) => h >= 44), 'the phone\'s menu: ' + JSON.stringify(fit));
  const small = (await tapTargets(page)).filter((s) => /again/.test(s));
  assert(small.length === 0, 'the menu\'s controls are tap targets: ' + small);
  await shot(page, 'models-again-phone');
  await page.click('#input'); // a click elsewhere closes it
  assert(await page.$('.again__menu') === null, 'a click elsewhere closes the menu');
  // The picker takes a row of its own on a phone: the message box keeps its width.
  const row = await page.evaluate(() => ({ input: document.querySelector('#input').getBoundingClientRect().width,
    picker: document.querySelector('#model').getBoundingClientRect().bottom, box: document.querySelector('#input').getBoundingClientRect().top }));
  assert(row.input >= 200 && row.picker <= row.box, 'on a phone the message box beside the picker: ' + JSON.stringify(row));
  await shot(page, 'models-composer-phone');
  await page.setViewportSize({ width: 1200, height: 820 });
  await page.click('.message--assistant:last-of-type .again__more');
  await shot(page, 'models-again');
  await page.keyboard.press('Escape');

  await page.click('#new-conversation');
  assert(await picked(page) === 'deep', 'a new conversation picks the default');
  noProblems(problems);
});
