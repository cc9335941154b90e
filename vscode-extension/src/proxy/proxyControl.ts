// "Start Proxy for Other Agents" / "Stop Proxy": the package's proxy in the extension host, on
// 127.0.0.1, its sessions under the trace folder where the views follow them. While it runs: a
// status-bar item, one-click copies of what each agent needs, and ANTHROPIC_BASE_URL /
// OPENAI_BASE_URL in the integrated terminals opened after it started (unless turned off).
import * as vscode from 'vscode';
import { readSettings } from '../config/settings';
import { agentSetups, terminalEnvironment, upstreamOption } from './agentSetup';
import type { RunningProxy, StartProxy } from './proxyApi';
import { errorText } from '../errorText';

export interface ProxySettings { port: number; upstream: string; terminalEnvironment: boolean }

export function readProxySettings(): ProxySettings {
  const c = vscode.workspace.getConfiguration('contextWorkbench.proxy');
  const port = Math.floor(c.get<number>('port') ?? 8787);
  return {
    port: port >= 0 && port <= 65535 ? port : 8787,
    upstream: (c.get<string>('upstream') ?? '').trim(),
    terminalEnvironment: c.get<boolean>('terminalEnvironment') ?? true,
  };
}

export class ProxyControl implements vscode.Disposable {
  private running?: RunningProxy;
  /** The proxy Stop Proxy is stopping: the editor closing meanwhile still bounds its wait. */
  private stopping?: RunningProxy;
  private starting = false;
  private readonly item = vscode.window.createStatusBarItem('contextWorkbench.proxy', vscode.StatusBarAlignment.Right, 101);

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
    /** Absent in a browser: it cannot listen for connections. */
    private readonly startProxy: StartProxy | undefined,
    /** Loads the engine's wasm before the proxy uses it. */
    private readonly ready: () => Promise<void>,
    /** Called once the proxy listens (the views look for its sessions). */
    private readonly started: () => void,
  ) {
    this.item.name = 'Context Workbench Proxy';
    this.item.command = 'contextWorkbench.proxyAddress';
    // Terminals of a later window must not inherit the address of a proxy that is gone.
    context.environmentVariableCollection.persistent = false;
  }

  get url(): string | undefined {
    return this.running?.url;
  }

  async start(): Promise<void> {
    if (!this.startProxy) {
      void vscode.window.showInformationMessage(
        'Context Workbench: the proxy cannot run here. This window runs extensions in the browser, and a browser cannot listen for connections. Run `npx context-workbench proxy` or `workbench proxy` in a terminal of the project instead: the views follow the sessions it writes under the trace folder.',
      );
      return;
    }
    if (this.running) {
      const choice = await vscode.window.showInformationMessage(`Context Workbench: the proxy already runs at ${this.running.url}.`, 'Show What Agents Need', 'Stop Proxy');
      if (choice === 'Show What Agents Need') await this.showAddress();
      if (choice === 'Stop Proxy') await this.stop();
      return;
    }
    if (this.starting) {
      void vscode.window.showInformationMessage('Context Workbench: the proxy is starting.');
      return;
    }
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder || folder.uri.scheme !== 'file') throw new Error('the proxy needs an open folder on this machine: its sessions are saved under the folder\'s trace folder.');
    this.starting = true;
    let running: RunningProxy;
    try {
      await this.ready();
      let port = readProxySettings().port;
      for (;;) {
        try {
          running = await this.listen(folder.uri.fsPath, port);
          break;
        } catch (e) {
          if ((e as { code?: string }).code !== 'port_in_use') throw e;
          const next = await askForPort(port);
          if (next === undefined) return;
          port = next;
        }
      }
    } finally {
      this.starting = false;
    }
    this.running = running;
    const url = running.url;
    this.output.appendLine(`Context Workbench: the proxy runs at ${url}; sessions are saved under ${running.storeDir}`);
    this.item.text = `$(radio-tower) Proxy :${running.port}`;
    this.item.tooltip = `The Context Workbench proxy runs at ${url}.\nSessions: ${running.storeDir}\nClick for what each agent needs; stop it with Context Workbench: Stop Proxy.`;
    this.item.show();
    if (readProxySettings().terminalEnvironment) {
      const env = this.context.environmentVariableCollection;
      for (const [name, value] of Object.entries(terminalEnvironment(url))) env.replace(name, value);
      env.description = `The Context Workbench proxy at ${url}`;
    }
    this.started();
    void this.announce();
  }

  private async listen(workspace: string, port: number): Promise<RunningProxy> {
    const settings = readSettings();
    return this.startProxy!({
      port,
      upstream: upstreamOption(readProxySettings().upstream),
      workspace,
      store: settings.traceFolder,
      window: settings.window > 0 ? settings.window : undefined,
      config: settings.engine,
      log: (line) => this.output.appendLine(`[proxy] ${line}`),
    });
  }

  /** The address, with one-click copies of the two lines most agents need. */
  private async announce(): Promise<void> {
    const url = this.running?.url;
    if (!url) return;
    const claude = 'Copy ANTHROPIC_BASE_URL';
    const openai = 'Copy Base URL (…/v1)';
    const more = 'Other Agents…';
    const choice = await vscode.window.showInformationMessage(`Context Workbench: the proxy runs at ${url}. Point your agent at it; its session appears in the views.`, claude, openai, more);
    const setups = agentSetups(url);
    if (choice === claude) await copy(setups[0].value);
    if (choice === openai) await copy(setups[1].value);
    if (choice === more) await this.showAddress();
  }

  /** Every agent's line in a quick pick; the one picked is copied. */
  async showAddress(): Promise<void> {
    if (!this.running) {
      void vscode.window.showInformationMessage('Context Workbench: the proxy is not running. Start it with Context Workbench: Start Proxy for Other Agents.');
      return;
    }
    const pick = await vscode.window.showQuickPick(
      agentSetups(this.running.url).map((s) => ({ label: s.value, description: s.agent, detail: s.where })),
      { title: `The proxy at ${this.running.url}: copy what your agent needs` },
    );
    if (pick) await copy(pick.label);
  }

  async stop(): Promise<void> {
    const running = this.running;
    if (!running) {
      void vscode.window.showInformationMessage('Context Workbench: the proxy is not running.');
      return;
    }
    await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Context Workbench: stopping the proxy (finishing requests in flight)' }, () => this.close());
    void vscode.window.showInformationMessage(`Context Workbench: the proxy at ${running.url} stopped; its sessions are saved.`);
  }

  /**
   * Stop accepting, finish what is in flight, save the sessions; the terminals' variables go. With
   * `graceMs` (the window closing: VS Code gives deactivation about five seconds), what is still
   * in flight after it is cut short so that the sessions are saved in time.
   */
  async close(graceMs?: number): Promise<void> {
    const options = graceMs === undefined ? undefined : { graceMs };
    if (!this.running) {
      await this.stopping?.close(options);
      return;
    }
    const running = this.running;
    this.running = undefined;
    this.stopping = running;
    this.item.hide();
    this.context.environmentVariableCollection.clear();
    try {
      await running.close(options);
      this.output.appendLine(`Context Workbench: the proxy at ${running.url} stopped; every session is saved.`);
    } catch (e) {
      this.output.appendLine(`✗ the proxy at ${running.url} did not stop cleanly: ${errorText(e)}`);
      throw e;
    } finally {
      this.stopping = undefined;
    }
  }

  dispose(): void {
    void this.close().catch(() => undefined);
    this.item.dispose();
  }
}

async function copy(text: string): Promise<void> {
  await vscode.env.clipboard.writeText(text);
  void vscode.window.setStatusBarMessage(`Context Workbench: copied ${text}`, 4000);
}

/** Port `port` is taken: a free one, another one, or nothing. */
async function askForPort(port: number): Promise<number | undefined> {
  const free = 'Use a Free Port';
  const other = 'Choose Another Port…';
  const choice = await vscode.window.showErrorMessage(`Context Workbench: port ${port} is in use on 127.0.0.1 (another proxy or server listens there).`, free, other);
  if (choice === free) return 0;
  if (choice !== other) return undefined;
  const typed = await vscode.window.showInputBox({
    title: 'Port for the proxy',
    prompt: 'A port on 127.0.0.1 (1–65535), or 0 for a free one',
    value: String(port + 1),
    validateInput: (v) => (/^\d+$/.test(v.trim()) && Number(v) <= 65535 ? undefined : 'a number from 0 to 65535'),
  });
  return typed === undefined ? undefined : Number(typed.trim());
}
