// The Goal Plan view's model: the engine's goal tree as nested rows with their icon, label and
// tooltip. Pure, so what the view shows is tested without VS Code.
import type { BranchData, GoalData, GoalStats, GoalTreeData, Progress } from '../engine/engineApi';

export interface PlanRow {
  id: string;
  label: string;
  description: string;
  /** A codicon id. */
  icon: string;
  /** A theme colour id for the icon, if any. */
  color?: string;
  tooltip: string;
  current: boolean;
  status: GoalData['status'];
  children: PlanRow[];
}

const ICONS: Record<GoalData['status'], { icon: string; color?: string; word: string }> = {
  pending: { icon: 'circle-large-outline', word: 'pending' },
  in_progress: { icon: 'sync', color: 'charts.blue', word: 'in progress' },
  completed: { icon: 'pass-filled', color: 'charts.green', word: 'done' },
  abandoned: { icon: 'circle-slash', color: 'disabledForeground', word: 'abandoned' },
};

/**
 * Rows for the tree in the engine's order, labelled with the numbers the engine shows the model
 * (`numbers`, by goal id), abandoned goals (and what is under them) left out unless `showAbandoned`;
 * an exploration's branches are rows under its goal, as they run.
 */
export function planRows(tree: GoalTreeData, showAbandoned: boolean, numbers: Record<string, string> = {}): PlanRow[] {
  const current = tree.current_id === undefined ? undefined : String(tree.current_id);
  const byParent = new Map<string, GoalData[]>();
  for (const goal of tree.goals) {
    const parent = goal.parent_id === undefined ? '' : String(goal.parent_id);
    byParent.set(parent, [...(byParent.get(parent) ?? []), goal]);
  }
  const build = (parent: string): PlanRow[] => {
    const visible = (byParent.get(parent) ?? []).filter((g) => showAbandoned || g.status !== 'abandoned');
    return visible.map((goal) => {
      const id = String(goal.id);
      const look = ICONS[goal.status] ?? ICONS.pending;
      const isCurrent = id === current;
      return {
        id,
        label: numbers[id] ? `${numbers[id]} ${goal.description}` : goal.description,
        description: [isCurrent ? 'current' : '', goal.status === 'abandoned' ? 'abandoned' : '', kindLabel(goal)].filter(Boolean).join(' · '),
        icon: isCurrent && goal.status === 'in_progress' ? 'debug-stackframe' : look.icon,
        color: look.color,
        tooltip: tooltipOf(goal, look.word),
        current: isCurrent,
        status: goal.status,
        children: [...branchRows(tree.branches ?? [], id), ...build(id)],
      };
    });
  };
  return build('');
}

/** The current goal's path for the view's message: `Fix the parser › Add a test`. */
export function currentPath(rows: PlanRow[]): string | undefined {
  for (const row of rows) {
    if (row.current) return row.label;
    const below = currentPath(row.children);
    if (below) return `${row.label} › ${below}`;
  }
  return undefined;
}

/** The phase for the view's description: `planning`, `step 2 of 3`, `completed`. */
export function phaseLabel(progress: Progress | undefined): string | undefined {
  const phase = progress?.phase;
  return phase?.phase === 'executing' ? `step ${phase.step + 1} of ${progress?.steps}` : phase?.phase;
}

/** The plan's revisions for the view's message: `revised from item 3` (the latest), how often when more than once. */
export function revisionNote(tree: GoalTreeData): string | undefined {
  const revisions = tree.revisions ?? [];
  const last = revisions.at(-1);
  if (!last) return undefined;
  const dropped = last.dropped.length ? `, dropped ${last.dropped.map((d) => `“${d}”`).join(', ')}` : '';
  return `${revisions.length > 1 ? `revised ${revisions.length}×, last` : 'revised'} from item ${last.from_item}${dropped}`;
}

export function countByStatus(tree: GoalTreeData): Record<GoalData['status'], number> {
  const counts = { pending: 0, in_progress: 0, completed: 0, abandoned: 0 };
  for (const goal of tree.goals) counts[goal.status] = (counts[goal.status] ?? 0) + 1;
  return counts;
}

function branchRows(branches: BranchData[], exploreId: string): PlanRow[] {
  return branches.filter((b) => String(b.explore_start_id) === exploreId).map((b) => {
    const status = b.status === 'completed' ? 'completed' : 'in_progress';
    const look = ICONS[status];
    const word = b.status === 'completed' ? 'finished' : 'exploring';
    return {
      id: `branch-${b.id}`,
      label: `Branch ${b.id}: ${b.description}`,
      description: word,
      icon: look.icon,
      color: look.color,
      tooltip: [`Branch ${b.id}: ${b.description}`, `Status: ${word}`, b.summary ? `Summary: ${b.summary}` : ''].filter(Boolean).join('\n'),
      current: false,
      status,
      children: [],
    };
  });
}

function kindLabel(goal: GoalData): string {
  return goal.type === 'explore_start' ? 'explore' : goal.type === 'explore_merge' ? 'merge' : '';
}

function tooltipOf(goal: GoalData, word: string): string {
  const lines = [`#${goal.id} ${goal.description}`, `Status: ${word}`];
  if (goal.summary) lines.push(`${goal.status === 'abandoned' ? 'Reason' : 'Summary'}: ${goal.summary}`);
  lines.push(statsLine('This goal', goal.self_stats), statsLine('With sub-goals', goal.cumulative_stats));
  return lines.filter(Boolean).join('\n');
}

function statsLine(title: string, stats: GoalStats | undefined): string {
  if (!stats) return '';
  const cost = stats.total_cost > 0 ? `, $${stats.total_cost.toFixed(4)}` : '';
  return `${title}: ${stats.message_count} messages, ${stats.total_tokens} tokens${cost}`;
}
