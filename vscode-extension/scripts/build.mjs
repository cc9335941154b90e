// Bundle the extension with esbuild: dist/extension.js (desktop, Node extension host) and
// dist/web/extension.js (web extension host), each with the engine's .wasm beside it, plus the
// unit tests (dist/test/*.test.mjs). Needs the npm package built first (bindings: npm run build).
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const bindings = path.resolve(here, '../bindings');
const dist = path.join(here, 'dist');
const watch = process.argv.includes('--watch');

const wasm = { node: path.join(bindings, 'dist/node/context_workbench_bg.wasm'), web: path.join(bindings, 'dist/web/context_workbench_bg.wasm') };
for (const file of Object.values(wasm)) {
  if (!existsSync(file)) {
    console.error(`build: ${path.relative(here, file)} is missing: run \`npm run build\` in bindings/ first`);
    process.exit(1);
  }
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(path.join(dist, 'web'), { recursive: true });

const common = { bundle: true, sourcemap: true, logLevel: 'warning', target: 'es2022', external: ['vscode'], alias: { 'context-workbench': bindings } };
await build({ ...common, entryPoints: { extension: 'src/extension.ts' }, outdir: dist, platform: 'node', format: 'cjs' });
await build({ ...common, entryPoints: { extension: 'src/extension.web.ts' }, outdir: path.join(dist, 'web'), platform: 'browser', format: 'cjs', define: { 'process.env.NODE_ENV': '"production"' }, logOverride: { 'empty-import-meta': 'silent' } });
copyFileSync(wasm.node, path.join(dist, 'context_workbench_bg.wasm'));
copyFileSync(wasm.web, path.join(dist, 'web/context_workbench_bg.wasm'));

const tests = readdirSync(path.join(here, 'test')).filter((f) => f.endsWith('.test.ts'));
await build({
  ...common,
  entryPoints: tests.map((f) => path.join('test', f)),
  outdir: path.join(dist, 'test'),
  outExtension: { '.js': '.mjs' },
  platform: 'node',
  format: 'esm',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
if (watch) console.log('build: --watch is not supported; run again');
