import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentSetups, terminalEnvironment, upstreamOption } from '../src/proxy/agentSetup';

test('what each agent needs, from the proxy address', () => {
  const setups = agentSetups('http://127.0.0.1:8787/');
  assert.deepEqual(setups.map((s) => s.value), [
    'export ANTHROPIC_BASE_URL=http://127.0.0.1:8787',
    'http://127.0.0.1:8787/v1',
    'http://127.0.0.1:8787',
    'apiBase: http://127.0.0.1:8787/v1',
    'apiBase: http://127.0.0.1:8787/v1/',
    'export OPENAI_BASE_URL=http://127.0.0.1:8787/v1',
  ]);
  assert.match(setups[1].where, /"OpenAI Compatible" → Base URL/);
  assert.match(setups[2].where, /Use custom base URL/);
  assert.deepEqual(terminalEnvironment('http://127.0.0.1:9000'), { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9000', OPENAI_BASE_URL: 'http://127.0.0.1:9000/v1' });
});

test('the upstream setting: empty, one URL, or one per API', () => {
  assert.equal(upstreamOption('  '), undefined);
  assert.equal(upstreamOption('http://localhost:4000'), 'http://localhost:4000');
  assert.deepEqual(upstreamOption('anthropic=http://a openai=http://b'), ['anthropic=http://a', 'openai=http://b']);
});
