// reach.js — whether the server can be reached again after a request could
// not get there. Any request sent later that the server answers, or an event
// stream that opens, says it can; until then a probe asks again, with
// backoff. A message that said "could not" waits here to be taken back.

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** backoff returns the wait before attempt n (0-based): 1 s doubling to 15 s. */
export const backoff = (n) => Math.min(1000 * 2 ** Math.min(n, 4), 15000);

let clock = 0;
let waiting = [];

/** sent marks a request going out; answered takes its mark. */
export const sent = () => ++clock;

/** answered says the server answered a request sent at mark (a stream that opened: no mark). */
export function answered(mark = Infinity) {
  const due = waiting.filter((w) => w.after < mark);
  waiting = waiting.filter((w) => w.after >= mark);
  for (const w of due) w.fn();
}

/**
 * whenBack calls fn once the server answers a request sent from now on;
 * probe() sends one, after 1 s and then less and less often, until it has
 * or over() says the wait no longer matters.
 */
export async function whenBack(fn, probe, over) {
  const w = { after: clock, fn };
  waiting.push(w);
  for (let n = 0; waiting.includes(w); n++) {
    await sleep(backoff(n));
    if (over()) {
      waiting = waiting.filter((x) => x !== w);
      return;
    }
    if (waiting.includes(w)) await probe().catch(() => {});
  }
}
