// The `languageModelTools` of package.json, generated from the engine's own plan-tool schemas so
// other agents in VS Code see exactly what the engine accepts. `node scripts/planToolContributions.mjs
// --write` updates package.json; the unit tests fail when it is out of date. `explore` is left out:
// its branches are sub-agents only the extension's own agent runs; another agent's call would
// start branches nobody runs.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContextEngine, memoryHost } from 'context-workbench';

export const TOOL_PREFIX = 'contextWorkbench_';

export async function planToolContributions() {
  const engine = await ContextEngine.create(memoryHost());
  try {
    return engine.goalTools().filter((spec) => spec.name !== 'explore').map((spec) => ({
      name: `${TOOL_PREFIX}${spec.name}`,
      toolReferenceName: `workbench_${spec.name}`,
      displayName: `Context Workbench: ${spec.name.replace(/_/g, ' ')}`,
      modelDescription: spec.description,
      userDescription: `The Context Workbench goal plan: ${spec.name.replace(/_/g, ' ')}.`,
      canBeReferencedInPrompt: true,
      icon: '$(checklist)',
      inputSchema: spec.parameters,
    }));
  } finally {
    engine.dispose();
  }
}

if (process.argv.includes('--write')) {
  const file = path.join(path.dirname(path.dirname(fileURLToPath(import.meta.url))), 'package.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  manifest.contributes.languageModelTools = await planToolContributions();
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`planToolContributions: ${manifest.contributes.languageModelTools.length} tools written to package.json`);
}
