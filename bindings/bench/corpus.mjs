// The token-counting corpus, the same as benches/tokens.rs builds: the .json files of
// data/traces/vorflux in name order, concatenated, whole files until at least
// BENCH_CORPUS_MB (default 2) MB of UTF-8 (MB = 10^6 bytes).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function corpus() {
  const dir = path.resolve(root, 'data/traces/vorflux');
  const limit = Number(process.env.BENCH_CORPUS_MB ?? 2) * 1e6;
  const names = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  let text = '';
  let bytes = 0;
  let files = 0;
  for (const name of names) {
    if (bytes >= limit) break;
    const file = readFileSync(path.join(dir, name));
    text += file.toString('utf8');
    bytes += file.length;
    files += 1;
  }
  return { text, bytes, files };
}
