import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compactCount, statusText } from '../src/views/statusText';

test('counts are compact', () => {
  assert.deepEqual([999, 1234, 12_345, 128_000, 2_500_000].map(compactCount), ['999', '1.2k', '12k', '128k', '2.5M']);
});

test('the status shows tokens over the window and the cached share', () => {
  const { text, tooltip } = statusText({ tokens: 3000, window: 8000, cachedTokens: 1500, cachedReported: false, model: 'm' });
  assert.equal(text, '3.0k/8.0k · 50% cached');
  assert.match(tooltip, /3000 tokens of a 8000-token window \(38%\)/);
  assert.match(tooltip, /in the engine's count/);
  assert.equal(statusText({ tokens: 0, window: 0, cachedTokens: 0, cachedReported: true, model: 'm' }).text, '0/0 · 0% cached');
});
