// Poll a probe in the end-to-end checks until it answers.

/** Poll `probe` until it returns a truthy value (a rejection or a `(…)` string is no answer); the last value is in the error. */
export async function until(what, probe, timeoutMs = 30_000, everyMs = 400) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await probe().catch((e) => `(${e.message})`);
    if (last && !(typeof last === 'string' && last.startsWith('('))) return last;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms; last seen: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
