// Build the wasm engine and its JS glue: dist/node (CommonJS, loads the .wasm beside it) and
// dist/web (ES module with init()/initSync()). Needs cargo and wasm-bindgen-cli of the pinned
// version on PATH (the repository's .ci/setup installs it).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { writeFileSync } from 'node:fs';

const bindings = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const root = path.dirname(bindings);
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });

run('cargo', ['build', '--lib', '--profile', 'wasm-release', '--target', 'wasm32-unknown-unknown', '--features', 'wasm']);
const targetDir = path.resolve(root, process.env.CARGO_TARGET_DIR ?? 'target');
const wasm = path.join(targetDir, 'wasm32-unknown-unknown/wasm-release/context_workbench.wasm');
for (const target of ['nodejs', 'web']) {
  const out = path.join(bindings, 'dist', target === 'nodejs' ? 'node' : 'web');
  run('wasm-bindgen', ['--target', target, '--out-dir', out, wasm]);
}
// The Node glue is CommonJS inside an ESM package: mark its folder so Node loads it as such.
writeFileSync(path.join(bindings, 'dist/node/package.json'), '{ "type": "commonjs" }\n');
