// A reasoning model's thinking folds above its answer: "Thought for N s",
// closed, live and after a reload; opened, it shows the model's text as
// text (its markup inert), and none of it is in the answer.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems } from './lib.mjs';

const foldOf = () => {
  const art = [...document.querySelectorAll('.message--assistant')].pop();
  const fold = art && art.querySelector('details.reasoning');
  if (!fold) return null;
  const body = art.querySelector('.message__body');
  return {
    hidden: fold.hidden,
    open: fold.open,
    summary: fold.querySelector('summary').textContent,
    text: fold.querySelector('.reasoning__text').textContent,
    markup: fold.querySelectorAll('img, b').length,
    above: !!(fold.compareDocumentPosition(body) & Node.DOCUMENT_POSITION_FOLLOWING),
    answer: body.textContent,
  };
};

await run('reasoning', async (browser) => {
  const { page, problems } = await openPage(browser);
  await page.evaluate(() => {
    window.__folds = [];
    new MutationObserver(() => {
      const s = document.querySelector('.message--live details.reasoning:not([hidden]) summary');
      if (s && window.__folds[window.__folds.length - 1] !== s.textContent) window.__folds.push(s.textContent);
    }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await ask(page, 'How does resume work?');
  await waitTurnEnd(page);
  const check = async (when) => {
    const f = await page.evaluate(foldOf);
    assert(f && !f.hidden, `${when}: the answer has a fold`);
    assert(!f.open, `${when}: the fold is closed`);
    assert(/^Thought for \d+ s$/.test(f.summary), `${when}: summary ${f.summary}`);
    assert(f.text.includes('<img src=x onerror=alert(1)>') && f.text.includes('<b>bold?</b>') && f.text.includes('The docs say how.'),
      `${when}: the thinking as text: ${JSON.stringify(f.text)}`);
    assert(f.markup === 0, `${when}: the thinking's markup became elements`);
    assert(f.above, `${when}: the fold is above the answer`);
    assert(f.answer.includes('Clients resume with Last-Event-ID.') && !f.answer.includes('Let me think'), `${when}: answer ${f.answer}`);
  };
  await check('after the turn');
  const seen = await page.evaluate(() => window.__folds);
  assert(seen.length > 0 && seen.every((s) => s === 'Thinking…' || /^Thought for \d+ s$/.test(s)), `the live fold showed ${JSON.stringify(seen)}`);
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('.message--assistant details.reasoning:not([hidden])');
  await check('after a reload');
  await shot(page, 'reasoning-folded');
  await page.click('.message--assistant:last-of-type details.reasoning summary');
  assert((await page.evaluate(foldOf)).open, 'a click opens the fold');
  await shot(page, 'reasoning-open');
  noProblems(problems);
});
