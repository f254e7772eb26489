// The model picker: it lists what GET /api/models does (labels as text),
// the default picked and named by an accessible label; each answer names
// the model picked for it; a reload picks the conversation's model, and a
// new conversation the default again.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems, baseURL } from './lib.mjs';

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

  await page.click('#new-conversation');
  assert(await picked(page) === 'deep', 'a new conversation picks the default');
  noProblems(problems);
});
