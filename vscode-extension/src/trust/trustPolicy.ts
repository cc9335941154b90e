// What Restricted Mode (a folder VS Code does not trust) allows: the commands that only read and
// show run as usual; those that run the agent, start a process or write in the folder explain
// that the folder must be trusted first. Pure, so the decisions are tested without VS Code.

/** Commands (ids without `contextWorkbench.`) that run the agent, start a process or write in the folder. */
export const NEEDS_TRUST: ReadonlySet<string> = new Set(['runTask', 'compactNow', 'exportTrace', 'openTrace', 'startProxy']);

/** Commands that only read and show (or touch nothing in the folder): they run in Restricted Mode too. */
export const READ_ONLY: ReadonlySet<string> = new Set([
  'compressSelection', 'compressTerminalOutput', 'showRawTrace', 'followSession', 'stopProxy', 'proxyAddress',
  'showDag', 'showPrompt', 'expandBlock', 'toggleAbandoned', 'setApiKey',
]);

/** The plan tools (Language Model Tools) that change the plan; `read_progress` only reads it. */
const PLAN_TOOLS_THAT_WRITE: ReadonlySet<string> = new Set(['goal', 'step']);

/** The button of the explanation; it runs `workbench.trust.manage`. */
export const MANAGE_TRUST = 'Manage Workspace Trust';

export type Decision = { run: true } | { run: false; message: string };

/** Whether `command` runs now; a command nobody classified is treated as one that needs trust. */
export function decide(command: string, title: string, trusted: boolean): Decision {
  if (trusted || READ_ONLY.has(command)) return { run: true };
  return { run: false, message: restrictedMessage(title) };
}

/** Whether the plan tool `name` (without its prefix) may run now. */
export function decideTool(name: string, trusted: boolean): Decision {
  if (trusted || !PLAN_TOOLS_THAT_WRITE.has(name)) return { run: true };
  return { run: false, message: restrictedMessage(`The plan tool \`${name}\``) };
}

/** Why `what` does not run in this folder, and what does. */
export function restrictedMessage(what: string): string {
  return `Context Workbench: ${what} needs a trusted folder. This folder is open in Restricted Mode, where Context Workbench only shows what its trace folder holds (the Goal Plan, the Prompt View, the Goal DAG, the sessions it follows), read-only. Running the agent or the proxy, and anything that writes in the folder or runs a command, waits until you trust the folder.`;
}

/** The Goal Plan's description: `finished` for a finished plan, and `read-only` in Restricted Mode. */
export function planDescription(finished: boolean, trusted: boolean): string | undefined {
  const parts = [...(finished ? ['finished'] : []), ...(trusted ? [] : ['read-only (Restricted Mode)'])];
  return parts.length > 0 ? parts.join(' · ') : undefined;
}

/** The Goal Plan's message line (its summary of the plan), led by `Read-only (Restricted Mode)` in Restricted Mode. */
export function planMessage(summary: string | undefined, trusted: boolean): string | undefined {
  if (trusted || summary === undefined) return summary;
  return `Read-only (Restricted Mode) · ${summary}`;
}
