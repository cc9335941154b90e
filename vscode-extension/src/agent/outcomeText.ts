// How a task's outcome reads for the user. Pure.
import type { TaskOutcome } from './agentLoop';

export function outcomeText(outcome: TaskOutcome): { text: string; isError: boolean } {
  switch (outcome.kind) {
    case 'answered': return { text: `Task finished after ${outcome.rounds} model call${outcome.rounds === 1 ? '' : 's'}.`, isError: false };
    case 'round_limit': return { text: `Stopped after ${outcome.rounds} model calls (contextWorkbench.maxRounds); the plan shows where it got to.`, isError: true };
    case 'cancelled': return { text: `Cancelled after ${outcome.rounds} model call${outcome.rounds === 1 ? '' : 's'}; what was done so far is kept in the trace.`, isError: false };
    case 'failed': return { text: `The task failed: ${outcome.message}`, isError: true };
  }
}

/** A one-line description of a tool call for progress lines: `read_file src/a.ts`. */
export function toolCallLine(name: string, argumentsJson: string): string {
  let args: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(argumentsJson);
    if (parsed && typeof parsed === 'object') args = parsed;
  } catch {
    return name;
  }
  const key = ['path', 'pattern', 'command', 'description', 'goal', 'summary'].find((k) => typeof args[k] === 'string');
  const value = key ? String(args[key]) : '';
  return value ? `${name} ${value.length > 80 ? `${value.slice(0, 77)}…` : value}` : name;
}
