// The README's table of the agents tested end to end, written from the rows the real-agent
// matrix leaves in target/agent-matrix/ (tests/proxy_agents.rs, and Claude Code's session in
// tests/proxy_clients.rs). Run after the matrix:
//   cargo test -p workbench-cli --test proxy_agents --test proxy_clients -- --include-ignored
//   node crates/workbench-cli/tests/clients/agent-table.mjs
// It replaces what lies between the README's `agent-matrix` markers, and nothing else.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const dir = path.join(root, 'target/agent-matrix');
const readme = path.join(root, 'README.md');
const [start, end] = ['<!-- agent-matrix:start -->', '<!-- agent-matrix:end -->'];
const apis = { Messages: 'Anthropic Messages', Chat: 'OpenAI Chat Completions', Responses: 'OpenAI Responses', Gemini: 'Gemini API' };

let files;
try {
  files = readdirSync(dir).filter((f) => f.endsWith('.json'));
} catch {
  files = [];
}
if (files.length === 0) {
  console.error(`agent-table: no rows in ${dir}: run the matrix first (see the top of this file)`);
  process.exit(2);
}
const rows = files.map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')));
const bareName = (row) => row.agent.split(' ').filter((w) => !/^\d/.test(w)).join(' ');
// "(text mode)" tells apart an agent's runs in both modes (mini-swe-agent); aider has only one.
const bothModes = new Set(rows.filter((r) => !r.text).map(bareName));
const byAgent = new Map();
for (const row of rows) {
  const name = bareName(row) + (row.text && bothModes.has(bareName(row)) ? ' (text mode)' : '');
  byAgent.set(name, [...(byAgent.get(name) ?? []), row]);
}

// Versions the proxy cannot name (the agent's User-Agent has none): the pinned ones.
const here = path.dirname(fileURLToPath(import.meta.url));
const npmPins = JSON.parse(readFileSync(path.join(here, 'package.json'), 'utf8')).dependencies;
const pipPins = Object.fromEntries(
  ['mini-swe-agent.txt', 'aider.txt']
    .flatMap((f) => readFileSync(path.join(here, f), 'utf8').split('\n'))
    .map((l) => l.split('==')),
);
const pinned = { Cline: npmPins.cline, Continue: npmPins['@continuedev/cli'], goose: npmPins['@aaif/goose-binary-linux-x64'], 'mini-swe-agent': pipPins['mini-swe-agent'], aider: pipPins['aider-chat'] };

const lines = [
  '| agent | version | API | managed through | plan read | calls | tokens upstream ÷ the agent\'s (window) |',
  '|---|---|---|---|---|---|---|',
];
for (const [name, runs] of [...byAgent].sort(([a], [b]) => a.localeCompare(b))) {
  const native = runs.find((r) => r.build === 'Native') ?? runs[0];
  const bare = name.replace(' (text mode)', '');
  const version = native.agent.slice(bare.length).trim() || pinned[bare] || '?';
  const shells = runs.filter((r) => r.managed).map((r) => (r.build === 'Native' ? '`workbench proxy`' : 'npm proxy'));
  const plan = native.plan == null ? 'no plan tool offered' : `yes (${native.plan} items)`;
  const share = (native.prompt_tokens / native.client_tokens).toFixed(2);
  const tokens = `${share} of ${native.client_tokens.toLocaleString('en-US')} (${native.window / 1000}k)`;
  const cells = [name, version, apis[native.api] ?? native.api, shells.sort().join(', '), plan, native.calls, tokens];
  lines.push(`| ${cells.join(' | ')} |`);
}

const text = readFileSync(readme, 'utf8');
const [head, rest] = text.split(start);
if (rest === undefined || !rest.includes(end)) {
  console.error(`agent-table: README.md has no ${start} … ${end} section`);
  process.exit(2);
}
const tail = rest.slice(rest.indexOf(end));
writeFileSync(readme, `${head}${start}\n${lines.join('\n')}\n${tail}`);
console.log(`agent-table: ${byAgent.size} agents written to README.md`);
