#!/usr/bin/env node
// `context-workbench proxy [--port N] [--upstream URL]... [--store DIR] [--window N] [--config FILE] [--otlp URL]`:
// `workbench proxy` from the npm package. The flags, their usage text, the config file's format and
// every line printed are the engine's, as in `workbench proxy`: the address and the lines to paste on
// stdout, one log line per request on stderr (and a progress line on a terminal). The first Ctrl-C,
// SIGTERM or SIGHUP (or the end of the process that started it: `npx` stopped) stops new requests and gives
// those in flight the shutdown grace; a second cuts at once; every session is saved, exit 0.
import { readFile } from 'node:fs/promises';
import './platform-node.js';
import { init } from './init.js';
import { configFromFile, parseProxyArgs, proxyUsage } from './wasm/context_workbench.js';
import { type RunningProxy, startProxy } from './proxy/index.js';
import type { Config } from './types.js';

interface ProxyFlags {
  port: number; upstream: string[]; store: string; window?: number; config?: string; otlp?: string; help: boolean;
}

async function main(argv: string[]): Promise<number> {
  await init();
  const [command, ...rest] = argv;
  const usage = proxyUsage();
  if (command === '--help' || command === '-h' || command === undefined) {
    process.stdout.write(`${usage}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command !== 'proxy') {
    process.stderr.write(`context-workbench: unknown command \`${command}\`\n${usage}\n`);
    return 2;
  }
  let flags: ProxyFlags;
  try {
    flags = parseProxyArgs(rest) as ProxyFlags;
  } catch (error) {
    process.stderr.write(`context-workbench: proxy: ${(error as Error).message}\n`);
    return 2;
  }
  if (flags.help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const config = flags.config === undefined ? undefined : await configFile(flags.config);
  const terminal = process.stderr.isTTY === true;
  let running: RunningProxy | undefined;
  const log = (line: string) => {
    if (terminal && running) process.stderr.write(`\r\x1b[K${line}\n${running.progress()}`);
    else process.stderr.write(`${line}\n`);
  };
  running = await startProxy({ port: flags.port, upstream: flags.upstream, store: flags.store, window: flags.window, config, otlp: flags.otlp, log });
  const proxy = running;
  // The signals are taken over before the address is announced, so one that comes at once stops it cleanly.
  const stopped = new Promise<void>((resolve) => {
    let signals = 0;
    const stop = () => {
      // The first signal stops with the grace; the next Ctrl-C or SIGTERM cuts what is still in flight at once.
      signals += 1;
      if (signals === 1) resolve();
      else void proxy.close({ graceMs: 0 });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    // The terminal closed: its writes fail from now on, and the sessions are saved all the same.
    // A closing terminal may send its hangup twice: it never cuts. (Unlike `workbench proxy`,
    // Node cannot tell that `nohup` ignored it.)
    process.on('SIGHUP', () => {
      for (const output of [process.stdout, process.stderr]) output.on('error', () => undefined);
      if (signals === 0) stop();
    });
    // Under `npx`/`npm exec`, a SIGTERM stops npm but never reaches this process (the `sh -c`
    // between them does not pass it on): a parent gone is a stop too.
    const parent = process.ppid;
    const orphaned = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(orphaned);
      stop();
    }, 250);
    orphaned.unref();
  });
  process.stdout.write(`${proxy.banner}\n`);
  await stopped;
  if (terminal) process.stderr.write('\n');
  await proxy.close();
  return 0;
}

/** The engine's configuration from a file: TOML, or JSON when it ends in .json (the engine reads both). */
async function configFile(file: string): Promise<Config> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`);
  }
  return configFromFile(file, text) as Config;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error: unknown) => {
    process.stderr.write(`context-workbench: proxy: ${(error as Error).message ?? String(error)}\n`);
    process.exitCode = 2;
  },
);
