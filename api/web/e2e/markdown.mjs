// Markdown of a real model's answer: a task list shows checkboxes, LaTeX is
// typeset by KaTeX within the page's Content-Security-Policy (the source,
// backslashes included, is what KaTeX got), and mermaid stays code; the
// conversation opens at its very end once the math is typeset.
import { run, openPage, ask, waitTurnEnd, shot, assert, noProblems } from './lib.mjs';

await run('markdown', async (browser) => {
  const { page, problems } = await openPage(browser);
  await ask(page, 'Show me the steps and the formula.');
  await waitTurnEnd(page);
  const check = async (when) => {
    await page.waitForSelector('.message--assistant:last-of-type div.math .katex', { timeout: 10000 });
    const m = await page.$eval('.message--assistant:last-of-type .message__body', (body) => ({
      boxes: [...body.querySelectorAll('li > input[type="checkbox"]')].map((b) => ({ checked: b.checked, disabled: b.disabled })),
      display: body.querySelector('div.math annotation[encoding="application/x-tex"]')?.textContent,
      inline: [...body.querySelectorAll('span.math annotation[encoding="application/x-tex"]')].map((a) => a.textContent),
      mermaid: !!body.querySelector('pre code.language-mermaid') && !body.querySelector('svg'),
      text: body.textContent,
    }));
    assert(JSON.stringify(m.boxes) === '[{"checked":true,"disabled":true},{"checked":false,"disabled":true}]', `${when}: task list checkboxes: ${JSON.stringify(m.boxes)}`);
    assert(m.display === '\\int_0^1 x\\,dx', `${when}: the display formula keeps its backslashes: ${m.display}`);
    assert(JSON.stringify(m.inline) === JSON.stringify(['a^2+b^2=c^2', '\\frac{1}{2}']), `${when}: inline formulas: ${JSON.stringify(m.inline)}`);
    assert(m.mermaid, `${when}: mermaid stays code`);
    assert(!m.text.includes('[x]') && !m.text.includes('$$'), `${when}: no raw markers left: ${m.text}`);
  };
  await check('live');
  await shot(page, 'md-answer');
  // Opened in a window shorter than the answer, it opens at its very end,
  // after KaTeX has typeset the formulas (which makes the answer taller).
  for (const [width, height] of [[1200, 360], [375, 560]]) {
    await page.setViewportSize({ width, height });
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await check(`stored, ${width} px`);
    await page.waitForTimeout(500);
    const gap = await page.$eval('#messages', (m) => ({ gap: m.scrollHeight - m.scrollTop - m.clientHeight, over: m.scrollHeight > m.clientHeight }));
    assert(gap.over && gap.gap <= 2, `${width} px: the conversation opens at its end, math typeset: ` + JSON.stringify(gap));
    await shot(page, `md-opened-${width}`);
  }
  noProblems(problems);
});
