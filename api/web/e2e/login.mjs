// Token auth mode: the page asks for a token, refuses a wrong one, accepts
// the right one (an HttpOnly cookie, so EventSource works), streams an
// answer, and signs out.
import { run, ask, waitTurnEnd, widgets, shot, assert, baseURL } from './lib.mjs';

const token = process.env.TOOLMARK_TEST_TOKEN;
assert(token, 'TOOLMARK_TEST_TOKEN is set');

await run('login', async (browser) => {
  const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
  const page = await context.newPage();
  const dialogs = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  page.on('response', (r) => { if (r.url().includes('/api/')) console.log('response', r.status(), r.request().method(), new URL(r.url()).pathname); });
  await page.goto(baseURL + '/');
  await page.waitForSelector('#login:not([hidden])', { timeout: 15000 });
  assert(await page.isHidden('#app'), 'the app is hidden before sign-in');
  await page.fill('#token', 'tm_wrong');
  await page.click('#login-form button[type=submit]');
  await page.waitForSelector('#login-error:not([hidden])');
  await shot(page, 'f-login-refused');
  await page.fill('#token', token);
  await page.click('#login-form button[type=submit]');
  await page.waitForSelector('body[data-ready="true"]', { timeout: 15000 });
  const cookies = await context.cookies();
  const session = cookies.find((c) => c.httpOnly);
  assert(session && session.sameSite === 'Strict', 'an HttpOnly SameSite=Strict cookie: ' + JSON.stringify(cookies));
  assert(!(await page.evaluate(() => document.cookie)).includes('tm_'), 'the token is not readable by scripts');
  await ask(page, 'What is toolmark?');
  await waitTurnEnd(page, 60000);
  await shot(page, 'f-signed-in');
  const ws = await widgets(page);
  assert(ws.length > 0 && ws.every((w) => w.status === 'success'), 'the answer streamed: ' + JSON.stringify(ws));
  await page.click('#sign-out');
  await page.waitForSelector('#login:not([hidden])', { timeout: 15000 });
  assert(dialogs.length === 0, 'no dialogs');
});
