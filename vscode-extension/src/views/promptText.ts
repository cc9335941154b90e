// The Prompt View's text: exactly what the last call sent, message by message, with each block
// that renders a history message marked, and marked compressed when it differs from its raw
// original. Pure.
import type { PreparedCall } from '../engine/engineApi';

export interface PromptBlock {
  /** 0-based line of the block's header. */
  line: number;
  /** The history message it renders (`m000012`), or the range a compaction block replaced (`m000022..m000025`). */
  source: string;
  compressed: boolean;
}

export interface PromptText { text: string; blocks: PromptBlock[] }

type Part = { type?: string; text?: string; output?: string; name?: string; arguments?: string; call_id?: string; [k: string]: unknown };

/** The text of one message's parts as sent. */
export function partsText(parts: unknown[]): string {
  return (parts as Part[])
    .map((p) => {
      if (typeof p === 'string') return p;
      if (p.type === 'text' && typeof p.text === 'string') return p.text;
      if (p.type === 'tool_call') return `→ ${p.name}(${p.arguments ?? ''})`;
      if (p.type === 'tool_result') return typeof p.output === 'string' ? p.output : JSON.stringify(p);
      return typeof p.text === 'string' ? p.text : JSON.stringify(p);
    })
    .join('\n');
}

/** `head`: lines shown under the title (a followed session and what it saved). */
export function renderPrompt(call: PreparedCall, rawText: (source: string) => string | undefined, title: string, head: string[] = []): PromptText {
  const lines: string[] = [
    `# ${title}`,
    ...head.map((line) => `# ${line}`),
    `# ${call.tokens} tokens · ${call.expectedCachedTokens} in the unchanged prefix · ${call.view.messages.length} messages · ${call.tools.length} tools`,
  ];
  if (call.firstChangedByte !== undefined) lines.push(`# first byte changed since the previous call: ${call.firstChangedByte}`);
  for (const r of call.rewrites) lines.push(`# rewrite: ${r.mechanism} (${r.position})`);
  const blocks: PromptBlock[] = [];
  call.view.messages.forEach((message, i) => {
    lines.push('');
    const shown = partsText(message.content);
    let header = `──── ${i + 1} · ${message.role} · ${message.layer}`;
    if (message.source) {
      const raw = rawText(message.source);
      const compressed = raw !== undefined && raw !== shown;
      header += ` · raw#${message.source}${compressed ? ` · compressed from ${raw.length} to ${shown.length} characters` : ''}`;
      blocks.push({ line: lines.length, source: message.source, compressed });
    } else if (message.replaces) {
      const raw = rawText(message.replaces);
      header += ` · compaction of raw#${message.replaces}${raw !== undefined ? ` · ${raw.length} characters compressed to ${shown.length}` : ''}`;
      blocks.push({ line: lines.length, source: message.replaces, compressed: true });
    }
    lines.push(`${header} ────`);
    lines.push(...shown.split('\n'));
  });
  lines.push('', `──── tools offered: ${call.tools.map((t) => t.function.name).join(', ')} ────`);
  return { text: lines.join('\n'), blocks };
}
