// One counter in a fresh process: `node bench/count.mjs wasm|gpt-tokenizer|js-tiktoken`.
// Prints one JSON line: the time to first count (module load + encoder + a short count, cold),
// the corpus's tokens, the median wall and CPU time of 5 timed counts after a warm-up, and the
// peak RSS.
import { corpus } from './corpus.mjs';

// The short text of the time to first count (the same in benches/tokens.rs).
const SHORT = 'Run the failing test again and read the traceback.';
const REPS = 5;

// Each loader returns count(text); special-token text is counted as plain text, as the engine does.
const loaders = {
  wasm: async () => {
    const { ContextEngine, memoryHost } = await import('../dist/node.js');
    const engine = await ContextEngine.create(memoryHost(), { encoding: 'o200k_base' });
    return (text) => engine.countTokens(text);
  },
  'gpt-tokenizer': async () => {
    const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
    const options = { disallowedSpecial: new Set() };
    return (text) => countTokens(text, options);
  },
  'js-tiktoken': async () => {
    const { Tiktoken } = await import('js-tiktoken/lite');
    const { default: ranks } = await import('js-tiktoken/ranks/o200k_base');
    const encoder = new Tiktoken(ranks);
    return (text) => encoder.encode(text, [], []).length;
  },
};

const name = process.argv[2];
if (!loaders[name]) throw new Error(`unknown counter ${name}; one of ${Object.keys(loaders).join(', ')}`);
const start = performance.now();
const count = await loaders[name]();
const shortTokens = count(SHORT);
const firstMs = performance.now() - start;

const { text, bytes, files } = corpus();
const tokens = count(text);
// CPU time of the whole process (V8's compiler and GC threads too), steadier than wall time on a busy machine.
const cpu = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1e6; };
const seconds = [];
const cpuSeconds = [];
for (let i = 0; i < REPS; i++) {
  const [t, c] = [performance.now(), cpu()];
  if (count(text) !== tokens) throw new Error(`${name} counted the corpus differently twice`);
  seconds.push((performance.now() - t) / 1e3);
  cpuSeconds.push(cpu() - c);
}
const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
const peakRssMb = (process.resourceUsage().maxRSS * 1024) / 1e6;
console.log(JSON.stringify({
  bytes, files, tokens, seconds: median(seconds), cpu_seconds: median(cpuSeconds),
  short_tokens: shortTokens, first_ms: firstMs, peak_rss_mb: peakRssMb,
}));
