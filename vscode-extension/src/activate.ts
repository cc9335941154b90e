// Wiring shared by the desktop and the web entry: views, commands, the chat participant and the
// Language Model Tools over one workbench session. No logic of its own.
import * as vscode from 'vscode';
import { registerEndpointModelProvider } from './chat/endpointModelProvider';
import { TOOL_PREFIX, registerPlanTools } from './chat/planTools';
import { registerWorkbenchParticipant } from './chat/workbenchParticipant';
import { compressSelection, compressTerminalOutput } from './commands/compressCommands';
import { guarded } from './commands/reportError';
import { runTaskCommand } from './commands/runTaskCommand';
import { followSession } from './commands/followCommand';
import { compactNow, exportTrace, openTrace, showRawTrace } from './commands/traceCommands';
import { promptForApiKey, readSettings } from './config/settings';
import { loadEngine } from './engine/loadEngine';
import { packageBackend } from './engine/packageEngine';
import { watchModel } from './llm/modelContext';
import { TerminalCommands } from './hosts/terminalCommands';
import type { RealPath } from './hosts/workspaceFiles';
import { WorkspaceFiles } from './hosts/workspaceFiles';
import { LiveSessions } from './live/liveSessions';
import { traceStoreOpener } from './live/openTraceStore';
import type { StartProxy } from './proxy/proxyApi';
import { ProxyControl } from './proxy/proxyControl';
import { WorkbenchSession } from './session/workbenchSession';
import { DagPanel } from './views/dagPanel';
import { GoalPlanView } from './views/goalPlanView';
import { LAST_PROMPT_URI, PromptDocuments } from './views/promptDocument';
import { PromptStatusBar } from './views/statusBar';
import { followTrust, trustGated } from './trust/restrictedMode';

export interface Platform {
  /** Which extension host runs this bundle, for the output channel. */
  kind: 'desktop' | 'web';
  /** Resolves symbolic links (desktop only). */
  realPath?: RealPath;
  /** Starts the package's proxy server (desktop only: a browser cannot listen for connections). */
  startProxy?: StartProxy;
}

/** What the entry awaits on deactivation: the proxy finishes the requests in flight and saves. */
export interface Activated { deactivate(): Promise<void> }

/**
 * How long deactivation waits for the proxy's requests in flight before cutting them short: VS
 * Code ends the extension host about five seconds after deactivation starts, and the sessions
 * still have to be saved after the wait.
 */
const DEACTIVATION_GRACE_MS = 2000;

export function activateWith(context: vscode.ExtensionContext, platform: Platform): Activated {
  const output = vscode.window.createOutputChannel('Context Workbench');
  output.appendLine(`Context Workbench: running in the ${platform.kind === 'web' ? 'web (browser)' : 'desktop (Node)'} extension host`);
  const backend = packageBackend(() => loadEngine(context.extensionUri));
  const plan = new GoalPlanView();
  const status = new PromptStatusBar();
  const terminal = new TerminalCommands(vscode.workspace.workspaceFolders?.[0]?.uri);
  const dag = new DagPanel(context.extensionUri);
  let session: WorkbenchSession;
  let live: LiveSessions;
  // The views show the agent's session, or one followed from the trace folder: the raw originals
  // and the DAG come from whichever they show.
  const prompts = new PromptDocuments((source) => (live.showing ? live.rawText(source) : session.rawText(source)));
  let shownPlan = dag.current;
  const onPlan = (tree: typeof shownPlan) => {
    shownPlan = tree;
    dag.update(tree);
  };
  session = new WorkbenchSession({ secrets: context.secrets, backend, realPath: platform.realPath, terminal, plan, prompts, status, output, onPlan, onAgentActive: () => live.agentActive() });
  const openStore = traceStoreOpener(() => loadEngine(context.extensionUri), platform.realPath);
  live = new LiveSessions({ output, plan, prompts, status, onPlan, agentTraceId: () => session.traceId(), agentBusy: () => session.busy, openStore });
  const proxy = new ProxyControl(context, output, platform.startProxy, () => loadEngine(context.extensionUri), () => live.refresh());
  context.subscriptions.push(output, plan, status, terminal, dag, prompts, session, live, proxy, watchModel());

  // In Restricted Mode, what runs the agent, starts a process or writes explains why it waits for trust.
  const command = (id: string, what: string, handler: (...args: never[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(`contextWorkbench.${id}`, guarded(what, trustGated(id, what, handler), output)));
  command('runTask', 'Run Task', (task?: string) => runTaskCommand(session, output, typeof task === 'string' ? task : undefined));
  command('compressSelection', 'Compress Selection', () => compressSelection(session, prompts));
  command('compressTerminalOutput', 'Compress Terminal Output', () => compressTerminalOutput(session, prompts, terminal));
  command('compactNow', 'Compact Now', () => compactNow(session));
  command('showRawTrace', 'Show Raw Trace', () => showRawTrace(session, prompts, live.showing));
  command('exportTrace', 'Export Trace', () => exportTrace(session));
  command('openTrace', 'Open Trace', () => openTrace(session));
  command('showDag', 'Show Goal DAG', async () => dag.show(shownPlan));
  command('followSession', 'Follow a Session', () => followSession(live, readSettings().traceFolder));
  command('startProxy', 'Start Proxy', () => proxy.start());
  command('stopProxy', 'Stop Proxy', () => proxy.stop());
  command('proxyAddress', 'Proxy Address', () => proxy.showAddress());
  command('showPrompt', 'Show Last Prompt', async () => vscode.window.showTextDocument(await vscode.workspace.openTextDocument(LAST_PROMPT_URI), { preview: false }));
  command('expandBlock', 'Expand Compressed Block', async (given?: string) => {
    const source = typeof given === 'string' ? given : await pickCompressedBlock(prompts);
    if (source) await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(PromptDocuments.rawUri(source)), { viewColumn: vscode.ViewColumn.Beside, preview: false });
  });
  command('setApiKey', 'Set API Key', () => promptForApiKey(context.secrets));
  command('toggleAbandoned', 'Show Abandoned Goals', () => {
    const shown = plan.toggleAbandoned();
    void vscode.window.setStatusBarMessage(`Context Workbench: abandoned goals ${shown ? 'shown' : 'hidden'}`, 3000);
  });

  const folders = vscode.workspace.workspaceFolders ?? [];
  const relativeOf = (uri: vscode.Uri) => (folders.length > 0 ? new WorkspaceFiles(folders).relativeOf(uri) : undefined);
  const participant = registerWorkbenchParticipant(session, context.extensionUri, relativeOf);
  if (participant) context.subscriptions.push(participant);
  context.subscriptions.push(...registerPlanTools(session, declaredPlanTools(context)));
  const provider = registerEndpointModelProvider(context.secrets, (text) => backend.countTokens(text));
  if (provider) context.subscriptions.push(provider);
  if (folders.length === 0) output.appendLine('Context Workbench: no folder is open; open one to run tasks.');
  context.subscriptions.push(followTrust((trusted) => {
    plan.setTrusted(trusted);
    output.appendLine(trusted ? 'Context Workbench: the folder is trusted: every command runs.' : 'Context Workbench: Restricted Mode: the views show the trace folder read-only; running a task or the proxy waits until the folder is trusted.');
  }));
  return { deactivate: () => proxy.close(DEACTIVATION_GRACE_MS) };
}

async function pickCompressedBlock(prompts: PromptDocuments): Promise<string | undefined> {
  const blocks = prompts.compressedBlocks();
  if (blocks.length === 0) {
    void vscode.window.showInformationMessage('Context Workbench: the last prompt has no compressed block.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(blocks.map((b) => ({ label: b.header.replace(/^─+ | ─+$/g, ''), source: b.source })), { title: 'Expand which compressed block to its raw original?' });
  return pick?.source;
}

/** The engine's plan tools as package.json declares them (generated from the engine's schemas). */
function declaredPlanTools(context: vscode.ExtensionContext): string[] {
  const declared: Array<{ name: string }> = context.extension.packageJSON?.contributes?.languageModelTools ?? [];
  return declared.map((t) => t.name).filter((n) => n.startsWith(TOOL_PREFIX)).map((n) => n.slice(TOOL_PREFIX.length));
}
