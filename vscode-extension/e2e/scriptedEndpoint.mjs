// The one stand-in the tests allow: a scripted OpenAI-compatible chat endpoint on 127.0.0.1.
// It keeps every request it receives, so tests can assert on what the extension really sent.
//
// A script maps a task (matched on the text of the newest user message) to the replies of its
// steps, given in order as the task's requests arrive (a task marked `again` gives its one step
// every time). A request without tools is the engine's own call (a summary, a state update, the
// LLM compactor) and gets `internalReply`.
import http from 'node:http';

/**
 * @typedef {{ text?: string, toolCalls?: Array<{ name: string, arguments: object | string }>,
 *   status?: number, delayMs?: number, hang?: boolean, chunkDelayMs?: number }} Reply
 * @typedef {{ match: RegExp, again?: boolean, steps: Array<Reply | ((request: object) => Reply)> }} Task
 */

/** Start the endpoint; resolves to `{ url, requests, close }`. `url` ends in `/v1`. */
export async function startScriptedEndpoint({ tasks, internalReply = defaultInternalReply, log = () => {} }) {
  const requests = [];
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (piece) => (body += piece));
    req.on('end', () => {
      void answer(req, res, body).catch((e) => {
        log(`scripted endpoint: ${e.stack ?? e}`);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(e.message ?? e) } }));
      });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  const stepOf = new Map();

  async function answer(req, res, raw) {
    // The web extension host calls from a browser worker: allow it across origins.
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-allow-headers', 'content-type, authorization, accept');
    res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
    if (req.method === 'OPTIONS') {
      res.writeHead(204);
      res.end();
      return;
    }
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    const request = JSON.parse(raw);
    const entry = { index: requests.length, headers: req.headers, body: request, raw };
    requests.push(entry);
    let reply;
    if (!Array.isArray(request.tools) || request.tools.length === 0) {
      reply = internalReply(request);
      entry.kind = 'internal';
    } else {
      const task = locate(tasks, request);
      // Steps are counted per task as requests arrive: a compaction may fold earlier assistant
      // messages away, so the request alone cannot tell how far the task has got.
      const step = stepOf.get(task) ?? 0;
      if (task) stepOf.set(task, step + 1);
      entry.kind = 'agent';
      entry.task = task === undefined ? null : tasks.indexOf(task);
      entry.step = step;
      // A task marked `again` answers every request with its one step (run it as often as needed).
      const scripted = task?.steps[task.again ? 0 : step];
      reply = typeof scripted === 'function' ? scripted(request) : scripted;
      reply ??= { text: `The script has no step ${step} for this task; stopping.` };
    }
    log(`scripted endpoint: #${entry.index} ${entry.kind} step ${entry.step ?? '-'} → ${summarize(reply)}`);
    if (reply.delayMs) await sleep(reply.delayMs);
    if (reply.hang) {
      await new Promise((resolve) => req.on('close', resolve));
      entry.closedByClient = true;
      return;
    }
    if (reply.status && reply.status !== 200) {
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: reply.text ?? 'scripted failure' } }));
      return;
    }
    await stream(res, request, reply);
  }

  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    agentRequests: () => requests.filter((r) => r.kind === 'agent'),
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The task is the newest user message that starts like one of the tasks (`match` is anchored
 * by the scenario); the engine's tail, which may quote the mission, never starts like a task.
 */
function locate(tasks, request) {
  const messages = request.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role !== 'user') continue;
    const task = tasks.find((t) => t.match.test(textOf(messages[i])));
    if (task) return task;
  }
  return undefined;
}

export function textOf(message) {
  if (typeof message.content === 'string') return message.content;
  if (Array.isArray(message.content)) return message.content.map((p) => p.text ?? '').join('');
  return '';
}

async function stream(res, request, reply) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const base = { id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 0, model: request.model };
  const send = async (delta, extra = {}) => {
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`);
    if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
  };
  await send({ role: 'assistant', content: '' });
  const text = reply.text ?? '';
  for (let i = 0; i < text.length; i += 24) await send({ content: text.slice(i, i + 24) });
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
    await send({ tool_calls: [{ index, id: `call_${Date.now().toString(36)}_${index}`, type: 'function', function: { name: call.name, arguments: '' } }] });
    for (let i = 0; i < args.length; i += 40) await send({ tool_calls: [{ index, function: { arguments: args.slice(i, i + 40) } }] });
  }
  const finish = reply.toolCalls?.length ? 'tool_calls' : 'stop';
  res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] })}\n\n`);
  // No usage: a scripted model cannot count tokens as a provider would, so the engine's own
  // count stays in charge (as with endpoints that do not report usage).
  res.end('data: [DONE]\n\n');
}

/** The engine's own calls: a tail compaction gets the JSON its prompt asks for, anything else a summary. */
function defaultInternalReply(request) {
  const prompt = (request.messages ?? []).map(textOf).join('\n');
  const turns = /Turns (\d+)-(\d+) \(each message/.exec(prompt);
  if (/TAIL_COMPACTION|compressed_turns/.test(prompt) && turns) {
    const [start, end] = [Number(turns[1]), Number(turns[2])];
    return {
      text: JSON.stringify({
        compressed_turns: {
          replaces: { start_turn: start, end_turn: end },
          goal: 'finish the task',
          what_we_learned: [{ conclusion: 'the earlier turns read and changed the files named in the task', evidence: [] }],
          anchors: [],
          exec_assertions: [],
          open_questions: [],
          next_actions: ['continue with the current goal'],
        },
        state_delta: { current_goal: 'finish the task', open_questions: [], next_actions: ['continue with the current goal'] },
      }),
    };
  }
  return { text: 'Summary: the earlier work is done; the files named in the task were read and edited as asked.' };
}

function summarize(reply) {
  if (reply.status) return `HTTP ${reply.status}`;
  if (reply.hang) return 'hang';
  if (reply.toolCalls?.length) return reply.toolCalls.map((c) => c.name).join(', ');
  return JSON.stringify((reply.text ?? '').slice(0, 60));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
