// The manifest (package.json) against the engine and the code: the plan tools' schemas, the
// commands' category, the trace folder's default, Restricted Mode's declaration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultConfig, init } from 'context-workbench';
// @ts-expect-error: plain JavaScript build script
import { planToolContributions } from '../scripts/planToolContributions.mjs';

const manifest = JSON.parse(readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../package.json'), 'utf8'));

test("package.json declares the engine's plan tools with the engine's own schemas", async () => {
  assert.deepEqual(manifest.contributes.languageModelTools, await planToolContributions(), 'run: node scripts/planToolContributions.mjs --write');
});

test("the Language Model Tools leave out explore: its branches run only as the extension's own agent's sub-agents, never for another agent's call", () => {
  assert.deepEqual(manifest.contributes.languageModelTools.map((t: { name: string }) => t.name), ['contextWorkbench_goal', 'contextWorkbench_step', 'contextWorkbench_read_progress']);
});

test('every command the manifest declares has a title in the Context Workbench category', () => {
  for (const c of manifest.contributes.commands) {
    assert.match(c.command, /^contextWorkbench\.\w+$/);
    assert.equal(c.category, 'Context Workbench');
  }
  assert.deepEqual(manifest.contributes.chatParticipants.map((p: { name: string }) => p.name), ['workbench']);
});

test("the trace folder's default is the engine's default store root, read from the engine", async () => {
  await init();
  assert.equal(manifest.contributes.configuration.properties['contextWorkbench.traceFolder'].default, defaultConfig().store.root);
});

test('Restricted Mode is declared: limited support, said in a sentence, and the settings a workspace may not set', () => {
  const untrusted = manifest.capabilities.untrustedWorkspaces;
  assert.equal(untrusted.supported, 'limited');
  assert.match(untrusted.description, /Restricted Mode .* read-only/);
  assert.deepEqual(untrusted.restrictedConfigurations, ['contextWorkbench.llm.url', 'contextWorkbench.proxy.upstream', 'contextWorkbench.engine']);
  for (const key of untrusted.restrictedConfigurations) assert.ok(manifest.contributes.configuration.properties[key], key);
  assert.deepEqual(manifest.contributes.viewsWelcome.map((w: { when: string }) => w.when), ['contextWorkbench.hasModel && isWorkspaceTrusted', '!contextWorkbench.hasModel && isWorkspaceTrusted', '!isWorkspaceTrusted']);
});

test('the extension waits to be asked: it activates on its views, commands, chat participant and tools (implied by their contributions) or a trace folder in the workspace, never on every start-up', () => {
  const traceFolder = manifest.contributes.configuration.properties['contextWorkbench.traceFolder'].default;
  assert.deepEqual(manifest.activationEvents, [`workspaceContains:${traceFolder}/**`]);
  assert.ok(manifest.contributes.views.contextWorkbench.length > 0 && manifest.contributes.commands.length > 0);
});

test('the manifest has an icon, a 128×128 PNG in the package, and the repository Cargo.toml and the npm package name', () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const png = readFileSync(path.join(root, manifest.icon));
  assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [128, 128], 'width and height (IHDR)');
  assert.match(manifest.icon, /^media\//, 'media/** is what .vscodeignore packages');
  const cargo = /^repository = "(.+)"$/m.exec(readFileSync(path.join(root, '../Cargo.toml'), 'utf8'))?.[1];
  const npm = JSON.parse(readFileSync(path.join(root, '../bindings/package.json'), 'utf8')).repository.url;
  assert.ok(cargo && !/\.invalid\b/.test(cargo), cargo);
  assert.equal(manifest.repository.url, `git+${cargo}.git`);
  assert.equal(npm, manifest.repository.url);
});
