// Build the npm package into dist/:
//   dist/wasm/   the engine (.wasm, without the tokenizer ranks) and its wasm-bindgen glue (ES module)
//   dist/ranks/  the o200k_base and cl100k_base ranks, loaded at run time: the binary form
//                (*.ranks, compiled here once by the engine itself, what the package loads by
//                default) and the official text files (*.tiktoken, still accepted by init())
//   dist/*.js    the TypeScript layer (src/), with .d.ts; dist/node.js and dist/web.js are the entries
// Needs cargo, wasm-bindgen-cli of the pinned version (.ci/setup installs it) and `npm ci` (binaryen).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const bindings = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const root = path.dirname(bindings);
const dist = path.join(bindings, 'dist');
const run = (cmd, args, cwd = root) => execFileSync(cmd, args, { cwd, stdio: 'inherit' });

// The release profile for wasm (LTO); no `embedded-ranks`, so the .wasm stays free of the 5 MB of ranks.
run('cargo', ['build', '-p', 'context-workbench', '--lib', '--profile', 'wasm-release', '--target', 'wasm32-unknown-unknown',
  '--no-default-features', '--features', 'wasm']);
const targetDir = path.resolve(root, process.env.CARGO_TARGET_DIR ?? 'target');
const wasm = path.join(targetDir, 'wasm32-unknown-unknown/wasm-release/context_workbench.wasm');

rmSync(dist, { recursive: true, force: true });
run('wasm-bindgen', ['--target', 'web', '--out-dir', path.join(dist, 'wasm'), wasm]);

// binaryen's wasm-opt (from npm, run by Node) on the glue's .wasm: -O2 takes 13% off the size
// (7% gzipped) after LTO. The features are those rustc enables by default for wasm32.
const bindgenWasm = path.join(dist, 'wasm', 'context_workbench_bg.wasm');
run(process.execPath, [path.join(bindings, 'node_modules/binaryen/bin/wasm-opt'), '-O2',
  '--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext', '--enable-mutable-globals',
  '--enable-reference-types', '--enable-multivalue', bindgenWasm, '-o', bindgenWasm], bindings);

// The rank files tiktoken-rs ships (the official files; the engine checks size and checksum), found
// in the locked dependency graph (`.ci/setup` fetches it; cargo would fetch what is missing).
const metadata = JSON.parse(execFileSync('cargo', ['metadata', '--format-version', '1', '--locked'], {
  cwd: root, encoding: 'utf8', maxBuffer: 1 << 26,
}));
const tiktoken = metadata.packages.find((p) => p.name === 'tiktoken-rs');
if (!tiktoken) throw new Error('build: tiktoken-rs is not among the dependencies');
mkdirSync(path.join(dist, 'ranks'), { recursive: true });
// The binary forms, compiled by the .wasm just built (it checks the text file's checksum, and the
// binary's, so only the official ranks come out).
const glue = await import(path.join(dist, 'wasm', 'context_workbench.js'));
glue.initSync({ module: readFileSync(bindgenWasm) });
for (const encoding of ['o200k_base', 'cl100k_base']) {
  const file = `${encoding}.tiktoken`;
  const text = path.join(path.dirname(tiktoken.manifest_path), 'assets', file);
  copyFileSync(text, path.join(dist, 'ranks', file));
  writeFileSync(path.join(dist, 'ranks', `${encoding}.ranks`), glue.compileRanks(encoding, readFileSync(text)));
}

run(process.execPath, [path.join(bindings, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], bindings);
