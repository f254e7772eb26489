// Shared helpers of the browser tests: launch the system Chromium through
// playwright-core (which downloads no browser), open the page, collect
// console errors and dialogs, save screenshots.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const baseURL = process.argv[2];
if (!baseURL) {
  console.error('usage: node <script>.mjs BASE_URL [SCREENSHOT_DIR]');
  process.exit(2);
}
export const shotDir = process.argv[3] || process.env.TOOLMARK_SCREENSHOTS || fs.mkdtempSync(path.join(os.tmpdir(), 'toolmark-shots-'));
fs.mkdirSync(shotDir, { recursive: true });

export async function launch() {
  // playwright-core gives every launch a fresh temporary profile (it
  // refuses an explicit --user-data-dir with launch()), and removes it.
  const browser = await chromium.launch({
    executablePath: process.env.TOOLMARK_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  const close = async () => {
    await browser.close().catch(() => {});
  };
  return { browser, close };
}

/** openPage opens the page and records dialogs, page errors and CSP reports. */
export async function openPage(browser, opts = {}) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 820 }, ...opts });
  const page = await context.newPage();
  const problems = { dialogs: [], errors: [], console: [] };
  page.on('dialog', async (d) => {
    problems.dialogs.push(`${d.type()}: ${d.message()}`);
    await d.dismiss().catch(() => {});
  });
  page.on('pageerror', (e) => problems.errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.console.push(m.text());
  });
  await page.goto(baseURL + '/');
  await page.waitForSelector('body[data-ready="true"]', { timeout: 15000 });
  return { context, page, problems };
}

export async function shot(page, name) {
  const file = path.join(shotDir, name + '.png');
  await page.screenshot({ path: file, fullPage: false });
  console.log('screenshot', file);
  return file;
}

/** readmeShot also copies a screenshot to $TOOLMARK_README_SHOTS (the README's docs/screenshots) when it is set. */
export async function readmeShot(page, name) {
  const file = await shot(page, name);
  const dir = process.env.TOOLMARK_README_SHOTS;
  if (dir) fs.copyFileSync(file, path.join(dir, name + '.png'));
}

/** tapTargets returns the page's visible controls smaller than 44 × 44 px (links inside answers' text left out). */
export async function tapTargets(page) {
  return page.$$eval('#app button, #app summary, #app a[href], #app textarea', (els) => els
    .filter((e) => e.getClientRects().length && !e.closest('[inert]') && !(e.tagName === 'A' && e.closest('.markdown')))
    .map((e) => ({ e, r: e.getBoundingClientRect() }))
    .filter(({ r }) => r.width > 0 && (r.height < 44 || r.width < 44))
    .map(({ e, r }) => `${e.tagName.toLowerCase()}.${e.className || e.id} ${Math.round(r.width)}×${Math.round(r.height)}`));
}

/** ask types a question and sends it: with Enter, or on a touch screen (where Enter adds a line) with Send. */
export async function ask(page, text) {
  await page.fill('#input', text);
  if (await page.evaluate(() => matchMedia('(pointer: coarse)').matches)) await page.click('#send');
  else await page.press('#input', 'Enter');
  // The box is emptied once the server has accepted the turn.
  await page.waitForFunction(() => document.querySelector('#input').value === '', null, { timeout: 15000 });
}

/** waitTurnEnd waits until no live message remains and Send is back. */
export async function waitTurnEnd(page, timeout = 60000) {
  await page.waitForFunction(() => {
    const send = document.querySelector('#send');
    return !document.querySelector('.message--live, .message--ended') && !send.hidden && !send.disabled;
  }, null, { timeout });
}

/** widgets returns the status of every tool widget on the page, in order. */
export async function widgets(page) {
  return page.$$eval('.toolcall', (els) => els.map((e) => ({ id: e.dataset.toolCallId, status: e.dataset.status, type: e.dataset.toolType, text: e.querySelector('.toolcall__text')?.textContent })));
}

export function assert(cond, msg) {
  if (!cond) throw new Error('assertion failed: ' + msg);
}

export async function run(name, fn) {
  const { browser, close } = await launch();
  try {
    await fn(browser);
    console.log(`ok ${name}`);
  } catch (e) {
    console.error(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
    process.exitCode = 1;
  } finally {
    await close();
  }
}

/**
 * noProblems fails on any dialog, uncaught page error or console error;
 * `expected` matches console errors a test causes on purpose (a dropped
 * network, say).
 */
export function noProblems(problems, expected = null) {
  assert(problems.dialogs.length === 0, 'dialogs opened: ' + problems.dialogs.join('; '));
  assert(problems.errors.length === 0, 'page errors: ' + problems.errors.join('; '));
  const csp = problems.console.filter((m) => /Content Security Policy/i.test(m));
  assert(csp.length === 0, 'CSP violations: ' + csp.join('; '));
  const other = problems.console.filter((m) => !(expected && expected.test(m)));
  assert(other.length === 0, 'console errors: ' + other.join('; '));
}

/**
 * recordLive keeps, in window.__live, what the live answer looked like the
 * last time it changed while it was live: its turn id and its HTML without
 * the page's own controls ([data-ui]), plus every status bubble text shown.
 */
export function recordLive() {
  window.__live = { turnId: null, html: null, bubbles: [], snapshots: [] };
  const clean = (body) => {
    const c = body.cloneNode(true);
    for (const el of c.querySelectorAll('[data-ui]')) el.remove();
    for (const el of c.querySelectorAll('*')) {
      for (const a of [...el.attributes]) if (a.name.startsWith('data-ui')) el.removeAttribute(a.name);
    }
    return c.innerHTML;
  };
  const answerText = (body) => {
    const c = body.cloneNode(true);
    for (const el of c.querySelectorAll('.toolcall, [data-ui]')) el.remove();
    return c.textContent.trim();
  };
  new MutationObserver(() => {
    const live = document.querySelector('.message--live');
    if (!live) return;
    const body = live.querySelector('.message__body');
    const bubble = live.querySelector('.bubble');
    const text = bubble && !bubble.hidden ? bubble.querySelector('.bubble__text').textContent : '';
    window.__live.turnId = live.dataset.turnId;
    window.__live.html = clean(body);
    const b = window.__live.bubbles;
    if (text && b[b.length - 1] !== text) b.push(text);
    window.__live.snapshots.push({
      bubble: text,
      text: answerText(body).length,
      raw: /\*\*|__|`/.test(answerText(body)),
      strong: !!body.querySelector(':scope > p > strong'),
      li: !!body.querySelector('li:not(.toolcall__child)'),
      code: !!body.querySelector(':scope > p code, :scope > pre code'),
      running: [...body.querySelectorAll('.toolcall')].filter((w) => ['pending', 'running'].includes(w.dataset.status))
        .map((w) => ({ id: w.dataset.toolCallId, type: w.dataset.toolType, text: w.querySelector('.toolcall__text')?.textContent })),
    });
  }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
}

/** normalizeHTML returns html as the browser serialises it. */
export async function normalizeHTML(page, html) {
  return page.evaluate((h) => {
    const t = document.createElement('template');
    t.innerHTML = h;
    return t.innerHTML;
  }, html);
}

/** storedAnswerHTML returns the turn's stored html, serialised by the browser. */
export async function storedAnswerHTML(page, turnId) {
  const turn = await (await page.request.get(baseURL + '/api/turns/' + turnId)).json();
  return { turn: turn.turn, html: await normalizeHTML(page, turn.html) };
}

/** shownAnswerHTML returns the HTML of the last answer on the page, without the page's controls. */
export async function shownAnswerHTML(page) {
  return page.$eval('.message--assistant:last-of-type .message__body', (body) => {
    const c = body.cloneNode(true);
    for (const el of c.querySelectorAll('[data-ui]')) el.remove();
    for (const el of c.querySelectorAll('*')) {
      for (const a of [...el.attributes]) if (a.name.startsWith('data-ui')) el.removeAttribute(a.name);
    }
    return c.innerHTML;
  });
}
