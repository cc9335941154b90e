// The engine's goal/progress tools as Language Model Tools, so other agents in VS Code keep
// their plan on the same goal tree. Declared in package.json (generated from the engine's own
// schemas by scripts/planToolContributions.mjs; explore is left out: its branches run only in
// the extension's own agent); `name` there is `contextWorkbench_<tool>`.
import * as vscode from 'vscode';
import type { WorkbenchSession } from '../session/workbenchSession';
import { decideTool } from '../trust/trustPolicy';

export const TOOL_PREFIX = 'contextWorkbench_';

export function registerPlanTools(session: WorkbenchSession, engineToolNames: readonly string[]): vscode.Disposable[] {
  if (!vscode.lm || typeof vscode.lm.registerTool !== 'function') return [];
  return engineToolNames.map((name) =>
    vscode.lm.registerTool<Record<string, unknown>>(`${TOOL_PREFIX}${name}`, {
      async invoke(options) {
        // In Restricted Mode the plan is only read: the model is told why a change waits.
        const decision = decideTool(name, vscode.workspace.isTrusted);
        if (!decision.run) return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(`Refused: ${decision.message}`)]);
        const { engine } = await session.ensure();
        const answer = engine.callGoalTool(name, JSON.stringify(options.input ?? {}));
        session.planChanged();
        const text = answer.isError ? `Refused: ${answer.text}` : answer.text;
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
      },
      prepareInvocation() {
        return { invocationMessage: `Updating the Context Workbench plan (${name})` };
      },
    }),
  );
}
