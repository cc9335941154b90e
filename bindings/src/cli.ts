#!/usr/bin/env node
// `npx context-workbench proxy [--port N] [--upstream URL]... [--store DIR] [--window N] [--config FILE]`:
// `workbench proxy` from the npm package, with the same output: the address and the two base-URL
// lines on stdout, one log line per request on stderr (and a progress line on a terminal).
// Ctrl-C or SIGTERM: no new requests, the ones in flight finish, every session is saved, exit 0.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { type RunningProxy, startProxy } from './proxy/index.js';
import type { Config } from './types.js';

const USAGE = `usage: context-workbench proxy [--port N] [--upstream URL | anthropic=URL | openai=URL]... [--store DIR] [--window N] [--config FILE.json]

Puts the Context Workbench engine in front of an agent that speaks Anthropic Messages or OpenAI
Chat Completions (Claude Code, Cline, OpenCode, …): listens on 127.0.0.1 (port 8787), sends the
engine's prompt upstream, saves each conversation under --store (.trace).`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h' || command === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command !== 'proxy') {
    process.stderr.write(`context-workbench: unknown command \`${command}\`\n${USAGE}\n`);
    return 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      port: { type: 'string' }, upstream: { type: 'string', multiple: true }, store: { type: 'string' },
      window: { type: 'string' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const port = values.port === undefined ? 8787 : integer('--port', values.port, 0, 65535);
  const window = values.window === undefined ? undefined : integer('--window', values.window, 1, 2 ** 32 - 1);
  const config = values.config === undefined ? undefined : await configFile(values.config);
  const terminal = process.stderr.isTTY === true;
  let running: RunningProxy | undefined;
  const log = (line: string) => {
    if (terminal && running) process.stderr.write(`\r\x1b[K${line}\n${running.progress()}`);
    else process.stderr.write(`${line}\n`);
  };
  running = await startProxy({ port, upstream: values.upstream, store: values.store, window, config, log });
  process.stdout.write(`${running.url}\nANTHROPIC_BASE_URL=${running.url}\nOPENAI_BASE_URL=${running.url}/v1\n`);
  const proxy = running;
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  if (terminal) process.stderr.write('\n');
  await proxy.close();
  return 0;
}

function integer(flag: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max) throw new Error(`${flag} \`${text}\`: expected a whole number from ${min} to ${max}`);
  return n;
}

/** The engine's configuration from a JSON file (the keys of `workbench --config`). */
async function configFile(file: string): Promise<Config> {
  if (!file.endsWith('.json')) {
    throw new Error(`--config ${file}: the npm proxy reads JSON config files (the same keys as the TOML one of \`workbench --config\`)`);
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as Config;
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error: unknown) => {
    process.stderr.write(`workbench: proxy: ${(error as Error).message ?? String(error)}\n`);
    process.exitCode = 2;
  },
);
