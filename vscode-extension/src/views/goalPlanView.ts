// The "Goal Plan" tree view: the engine's goal tree, live from its events.
import * as vscode from 'vscode';
import type { GoalTreeData, Progress } from '../engine/engineApi';
import { planDescription, planMessage } from '../trust/trustPolicy';
import { countByStatus, currentPath, phaseLabel, type PlanRow, planRows, revisionNote } from './planModel';

export class GoalPlanView implements vscode.TreeDataProvider<PlanRow>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<PlanRow | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private rows: PlanRow[] = [];
  private tree: GoalTreeData = { mission: '', goals: [] };
  private numbers: Record<string, string> = {};
  private progress: Progress | undefined;
  private showAbandoned = false;
  private trusted = true;
  private readonly view: vscode.TreeView<PlanRow>;

  constructor() {
    this.view = vscode.window.createTreeView('contextWorkbench.goalPlan', { treeDataProvider: this, showCollapseAll: true });
  }

  /** Show `tree`; `progress` when the engine running it gives one (the extension's own agent). */
  update(tree: GoalTreeData, numbers: Record<string, string> = this.numbers, progress?: Progress): void {
    this.tree = tree;
    this.numbers = numbers;
    this.progress = progress;
    this.rows = planRows(tree, this.showAbandoned, numbers);
    const counts = countByStatus(tree);
    const path = currentPath(this.rows);
    const hidden = !this.showAbandoned && counts.abandoned > 0 ? ` · ${counts.abandoned} abandoned hidden` : '';
    const revised = revisionNote(tree);
    const summary = tree.goals.length === 0 ? undefined : `${path ? `Now: ${path}` : 'No current goal'} · ${counts.completed}/${tree.goals.length - counts.abandoned} done${hidden}${revised ? ` · ${revised}` : ''}`;
    this.view.message = planMessage(summary, this.trusted);
    this.view.description = [phaseLabel(progress), planDescription(tree.completed === true, this.trusted)].filter(Boolean).join(' · ') || undefined;
    this.changed.fire(undefined);
  }

  /** In Restricted Mode the view says it is read-only; trust granted later takes that away. */
  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
    this.update(this.tree, this.numbers, this.progress);
  }

  toggleAbandoned(): boolean {
    this.showAbandoned = !this.showAbandoned;
    this.update(this.tree, this.numbers, this.progress);
    return this.showAbandoned;
  }

  getTreeItem(row: PlanRow): vscode.TreeItem {
    const item = new vscode.TreeItem(row.label, row.children.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
    // The id changes with the toggle, so rows that gain children come back expanded.
    item.id = `${row.id}${this.showAbandoned ? '+abandoned' : ''}`;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.iconPath = new vscode.ThemeIcon(row.icon, row.color ? new vscode.ThemeColor(row.color) : undefined);
    item.contextValue = `goal.${row.status}`;
    return item;
  }

  getChildren(row?: PlanRow): PlanRow[] {
    return row ? row.children : this.rows;
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}
