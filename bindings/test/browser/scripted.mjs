// Shared by the dashboard's browser tests: a scripted Anthropic reply (the stream of server-sent
// events the Messages API writes for given content blocks), and a process started for its first
// lines of output (`workbench proxy`, `workbench serve`, the npm proxy).
import { spawn } from 'node:child_process';

/** Anthropic's stream of events for a reply of `blocks`; `cut` stops it after the first block's start. */
export function anthropicEvents(id, blocks, cut = false) {
  const out = [['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', content: [], model: 'claude-scripted', stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, output_tokens: 1 } } }]];
  blocks.forEach((block, index) => {
    const start = block.type === 'tool_use' ? { ...block, input: {} } : { type: 'text', text: '' };
    out.push(['content_block_start', { type: 'content_block_start', index, content_block: start }]);
    const delta = block.type === 'tool_use' ? { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } : { type: 'text_delta', text: block.text };
    out.push(['content_block_delta', { type: 'content_block_delta', index, delta }]);
    out.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  const stop = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  out.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } }]);
  out.push(['message_stop', { type: 'message_stop' }]);
  const text = out.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  return cut ? text.slice(0, 2).join('') : text.join('');
}

/** Start `command ARGS` in `cwd`; resolves with the process and its first `lines` stdout lines. */
export function startProcess(command, args, cwd, lines) {
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const got = out.split('\n');
      if (got.length > lines) resolve({ child, lines: got, log: () => err });
    });
    child.on('exit', (code) => reject(new Error(`workbench ${args[0]} exited with ${code}: ${err}`)));
  });
}
