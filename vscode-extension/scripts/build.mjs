// Bundle the extension with esbuild: dist/extension.js (desktop, Node extension host) and
// dist/web/extension.js (web extension host), dist/proxyWorker.mjs (the proxy's engine thread,
// desktop), the engine's .wasm and binary rank files (*.ranks) in dist/engine/
// (both hosts read them through vscode.workspace.fs), and the unit tests (dist/test/*.test.mjs,
// which load the npm package from node_modules). Needs the package built (bindings: npm run build).
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const bindings = path.resolve(here, '../bindings');
const dist = path.join(here, 'dist');
const watch = process.argv.includes('--watch');

const engineFiles = ['wasm/context_workbench_bg.wasm', 'ranks/o200k_base.ranks', 'ranks/cl100k_base.ranks'].map((f) => path.join(bindings, 'dist', f));
for (const file of engineFiles) {
  if (!existsSync(file)) {
    console.error(`build: ${path.relative(here, file)} is missing: run \`npm run build\` in bindings/ first`);
    process.exit(1);
  }
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(path.join(dist, 'web'), { recursive: true });
mkdirSync(path.join(dist, 'engine'), { recursive: true });

// The package finds its files through import.meta.url, empty in these CommonJS bundles; the
// extension always calls init() with the bytes instead (src/engine/loadEngine.ts).
const common = { bundle: true, sourcemap: true, logLevel: 'warning', target: 'es2022', external: ['vscode'], logOverride: { 'empty-import-meta': 'silent' } };
// What the .vsix ships, without whitespace and with simpler syntax (names kept, for readable stack
// traces): 0.1 MB less, keeping the .vsix under 3 MB (#50).
const shipped = { ...common, minifyWhitespace: true, minifySyntax: true };
await build({ ...shipped, entryPoints: { extension: 'src/extension.ts' }, outdir: dist, platform: 'node', format: 'cjs' });
// The proxy's engine thread (a worker_threads script of its own; an ES module for its top-level await).
await build({ ...shipped, entryPoints: { proxyWorker: path.join(bindings, 'dist/proxy/worker.js') }, outdir: dist, platform: 'node', format: 'esm', outExtension: { '.js': '.mjs' } });
await build({ ...shipped, entryPoints: { extension: 'src/extension.web.ts' }, outdir: path.join(dist, 'web'), platform: 'browser', format: 'cjs', define: { 'process.env.NODE_ENV': '"production"' } });
for (const file of engineFiles) copyFileSync(file, path.join(dist, 'engine', path.basename(file)));

// The Goal DAG webview: the playground's renderer and styles, bundled with the webview's script.
mkdirSync(path.join(dist, 'dag'), { recursive: true });
await build({ ...shipped, entryPoints: { dagView: 'media/dagView.js' }, outdir: path.join(dist, 'dag'), platform: 'browser', format: 'iife', sourcemap: false });
copyFileSync(path.join(bindings, 'playground/style.css'), path.join(dist, 'dag/dag.css'));

const tests = readdirSync(path.join(here, 'test')).filter((f) => f.endsWith('.test.ts'));
await build({
  ...common,
  entryPoints: tests.map((f) => path.join('test', f)),
  outdir: path.join(dist, 'test'),
  outExtension: { '.js': '.mjs' },
  platform: 'node',
  format: 'esm',
  external: ['vscode', 'context-workbench'],
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
if (watch) console.log('build: --watch is not supported; run again');
