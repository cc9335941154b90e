// The scripted session the real Claude Code CLI runs through the proxy in the end-to-end test:
// a plan in TodoWrite, large build logs read (the engine compresses them, and a small window makes
// it compact the finished turns), an edit, the plan updated as it goes. The upstream picks each
// step from the newest tool result Claude Code sends back (`toolu_ccN`), so side calls and retries
// do not shift the script.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const CLAUDE_CODE_TASK = 'Fix the greeting in src/greet.js after checking the build logs.';
export const DONE = 'The greeting is fixed and the logs are checked.';
const LOGS = 6;

/** The workspace files the script reads. */
export function writeClaudeCodeWorkspace(workspace) {
  mkdirSync(path.join(workspace, 'logs'), { recursive: true });
  for (let part = 1; part <= LOGS; part++) {
    const lines = Array.from({ length: 160 }, (_, i) => `2026-11-25T09:${String(i % 60).padStart(2, '0')}:00Z INFO part ${part} step ${i}: compiled module m${part}_${i} in ${(i * 37) % 1000} ms (cache ${i % 3 ? 'hit' : 'miss'})`);
    writeFileSync(path.join(workspace, `logs/part-${part}.log`), `${lines.join('\n')}\n`);
  }
}

const todo = (content, status) => ({ content, status, activeForm: content.replace(/^(\w+)/, (w) => `${w}ing`.replace(/eing$/, 'ing')) });

function plan(done) {
  const items = ['Read the build logs', 'Fix the greeting', 'Check the result'];
  return { todos: items.map((item, i) => todo(item, i < done ? 'completed' : i === done ? 'in_progress' : 'pending')) };
}

/** Step `n` of the session in `workspace`: the tool Claude Code is asked to call, or none (done). */
export function claudeCodeStep(n, workspace) {
  const steps = [
    ['TodoWrite', plan(0)],
    ...Array.from({ length: LOGS }, (_, i) => ['Read', { file_path: path.join(workspace, `logs/part-${i + 1}.log`) }]),
    ['TodoWrite', plan(1)],
    ['Read', { file_path: path.join(workspace, 'src/greet.js') }],
    ['Edit', { file_path: path.join(workspace, 'src/greet.js'), old_string: "'Hello ' + name", new_string: "'Hi ' + name" }],
    ['TodoWrite', plan(2)],
    ['Grep', { pattern: 'Hi ', path: path.join(workspace, 'src') }],
    ['TodoWrite', plan(3)],
  ];
  return steps[n];
}

/** The upstream's reply to a Claude Code request: the next step, by the newest `toolu_ccN` result. */
export function claudeCodeReply(body, workspace) {
  let next = 0;
  for (const message of [...(body.messages ?? [])].reverse()) {
    const ids = (Array.isArray(message.content) ? message.content : []).map((b) => /^toolu_cc(\d+)$/.exec(b.tool_use_id ?? '')?.[1]).filter(Boolean);
    if (ids.length > 0) {
      next = Number(ids.at(-1)) + 1;
      break;
    }
  }
  const step = claudeCodeStep(next, workspace);
  if (!step) return [{ type: 'text', text: DONE }];
  const [name, input] = step;
  return [{ type: 'text', text: `Step ${next}: ${name}.` }, { type: 'tool_use', id: `toolu_cc${next}`, name, input }];
}
