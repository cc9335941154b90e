// Running the agent's coding tools over workspace files and a command runner. Pure over the two
// interfaces, so the same code runs against VS Code and in the unit tests.
import { matcherFor } from './globPattern';
import { errorText } from '../errorText';

export interface AgentFiles {
  readFile(path: string): Promise<{ text: string; mtimeMs: number }>;
  stat(path: string): Promise<{ isDir: boolean; size: number } | null>;
  writeFile(path: string, data: string): Promise<void>;
  listDir(path: string): Promise<Array<{ name: string; isDir: boolean }>>;
}

/** Runs a shell command once the user agrees; `undefined` when the user declined. */
export interface CommandRunner {
  run(command: string, signal?: AbortSignal): Promise<{ output: string; exitCode: number | undefined } | undefined>;
}

export interface ToolRun {
  output: string;
  isError: boolean;
  exitCode?: number;
  /** For a read: the file read and its modification time. */
  path?: string;
  mtimeMs?: number;
}

/** Folders the search tools never walk into, wherever they are (the trace folder is given by path). */
const SKIPPED = new Set(['.git', 'node_modules', 'target', 'dist', '.e2e']);
const MAX_WALK = 20_000;
const MAX_GLOB_HITS = 1_000;
const MAX_GREP_HITS = 500;
const MAX_GREP_FILE_BYTES = 2_000_000;
const DEFAULT_READ_LINES = 2_000;

export class CodingTools {
  /** `skippedPaths`: workspace-relative folders the search tools never walk into either (the trace folder). */
  constructor(private readonly files: AgentFiles, private readonly commands: CommandRunner, private readonly skippedPaths: readonly string[] = []) {}

  /** Run `name` with its JSON `argumentsJson`; a bad call is an error result the model can read. */
  async run(name: string, argumentsJson: string, signal?: AbortSignal): Promise<ToolRun> {
    let args: Record<string, unknown>;
    try {
      const parsed = argumentsJson.trim() === '' ? {} : JSON.parse(argumentsJson);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      args = parsed;
    } catch (e) {
      return fail(`the arguments of ${name} are not a JSON object: ${(e as Error).message}`);
    }
    try {
      switch (name) {
        case 'read_file': return await this.read(text(args, 'path'), num(args, 'offset'), num(args, 'limit'));
        case 'list_dir': return await this.list(optText(args, 'path') ?? '');
        case 'glob': return await this.glob(text(args, 'pattern'), optText(args, 'path') ?? '');
        case 'grep': return await this.grep(text(args, 'pattern'), optText(args, 'path') ?? '', optText(args, 'glob'), args.ignore_case === true);
        case 'edit_file': return await this.edit(text(args, 'path'), text(args, 'old_string'), text(args, 'new_string', true), args.replace_all === true);
        case 'write_file': return await this.write(text(args, 'path'), text(args, 'content', true));
        case 'run_command': return await this.command(text(args, 'command'), signal);
        default: return fail(`no tool named ${name}`);
      }
    } catch (e) {
      return fail(errorText(e));
    }
  }

  private async read(path: string, offset = 1, limit = DEFAULT_READ_LINES): Promise<ToolRun> {
    const { text: content, mtimeMs } = await this.files.readFile(path);
    const lines = content.split('\n');
    if (lines.at(-1) === '') lines.pop();
    const start = Math.max(1, offset);
    const shown = lines.slice(start - 1, start - 1 + limit);
    const numbered = shown.map((line, i) => `${String(start + i).padStart(6)}\t${line}`).join('\n');
    const rest = lines.length - (start - 1 + shown.length);
    const output = rest > 0 ? `${numbered}\n… ${rest} more lines (use offset ${start + shown.length})` : numbered;
    return { output, isError: false, path, mtimeMs };
  }

  private async list(path: string): Promise<ToolRun> {
    const entries = await this.files.listDir(clean(path));
    return ok(entries.map((e) => (e.isDir ? `${e.name}/` : e.name)).join('\n') || '(empty folder)');
  }

  private async glob(pattern: string, path: string): Promise<ToolRun> {
    const matches = matcherFor(pattern);
    const base = clean(path);
    const hits: string[] = [];
    for await (const file of this.walk(base)) {
      const relative = base === '' ? file : file.slice(base.length + 1);
      if (matches(relative)) hits.push(file);
      if (hits.length >= MAX_GLOB_HITS) break;
    }
    return ok(hits.length ? hits.join('\n') : `no files match ${pattern}`);
  }

  private async grep(pattern: string, path: string, glob: string | undefined, ignoreCase: boolean): Promise<ToolRun> {
    let regex: RegExp;
    try {
      regex = new RegExp(pattern, ignoreCase ? 'i' : '');
    } catch (e) {
      return fail(`invalid regular expression: ${(e as Error).message}`);
    }
    const only = glob ? matcherFor(glob) : () => true;
    const target = clean(path);
    const stat = target === '' ? { isDir: true, size: 0 } : await this.files.stat(target);
    if (!stat) return fail(`no such file or folder: ${target}`);
    const candidates = stat.isDir ? this.walk(target) : single(target);
    const hits: string[] = [];
    for await (const file of candidates) {
      if (!only(file)) continue;
      const info = await this.files.stat(file);
      if (!info || info.size > MAX_GREP_FILE_BYTES) continue;
      const { text: content } = await this.files.readFile(file);
      if (content.includes('\0')) continue;
      const lines = content.split('\n');
      for (let i = 0; i < lines.length && hits.length < MAX_GREP_HITS; i++) {
        if (regex.test(lines[i])) hits.push(`${file}:${i + 1}:${lines[i]}`);
      }
      if (hits.length >= MAX_GREP_HITS) {
        hits.push(`… stopped at ${MAX_GREP_HITS} matches`);
        break;
      }
    }
    return ok(hits.length ? hits.join('\n') : `no matches for ${pattern}`);
  }

  private async edit(path: string, oldString: string, newString: string, replaceAll: boolean): Promise<ToolRun> {
    if (oldString === '') return fail('old_string is empty; use write_file to create a file');
    const { text: content } = await this.files.readFile(path);
    const count = content.split(oldString).length - 1;
    if (count === 0) return fail(`old_string was not found in ${path}`);
    if (count > 1 && !replaceAll) return fail(`old_string occurs ${count} times in ${path}; give more context or set replace_all`);
    const updated = replaceAll ? content.split(oldString).join(newString) : content.replace(oldString, () => newString);
    await this.files.writeFile(path, updated);
    return ok(`edited ${path}: ${replaceAll ? count : 1} replacement${count > 1 && replaceAll ? 's' : ''}`);
  }

  private async write(path: string, content: string): Promise<ToolRun> {
    const existed = (await this.files.stat(path)) !== null;
    await this.files.writeFile(path, content);
    const lines = content === '' ? 0 : content.split('\n').length;
    return ok(`${existed ? 'overwrote' : 'created'} ${path} (${lines} lines)`);
  }

  private async command(command: string, signal?: AbortSignal): Promise<ToolRun> {
    const result = await this.commands.run(command, signal);
    if (!result) return fail('the user declined to run this command');
    const code = result.exitCode;
    return { output: result.output, isError: code !== undefined && code !== 0, exitCode: code };
  }

  /** Every file under `base`, breadth first, skipping build and VCS folders. */
  private async *walk(base: string): AsyncGenerator<string> {
    const queue = [base];
    let seen = 0;
    while (queue.length > 0) {
      const dir = queue.shift() as string;
      const entries = await this.files.listDir(dir);
      for (const entry of entries) {
        const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
        if (entry.isDir) {
          if (!SKIPPED.has(entry.name) && !this.skippedPaths.includes(path)) queue.push(path);
        } else {
          yield path;
          if (++seen >= MAX_WALK) return;
        }
      }
    }
  }
}

async function* single(path: string): AsyncGenerator<string> {
  yield path;
}

function clean(path: string): string {
  return path === '.' || path === './' ? '' : path.replace(/^\.\//, '').replace(/\/+$/, '');
}

function text(args: Record<string, unknown>, key: string, allowEmpty = false): string {
  const value = args[key];
  if (typeof value !== 'string' || (!allowEmpty && value === '')) throw new Error(`missing string argument "${key}"`);
  return value;
}

function optText(args: Record<string, unknown>, key: string): string | undefined {
  const value = args[key];
  return typeof value === 'string' ? value : undefined;
}

function num(args: Record<string, unknown>, key: string): number | undefined {
  const value = args[key];
  return typeof value === 'number' && Number.isFinite(value) && value >= 1 ? Math.floor(value) : undefined;
}

const ok = (output: string): ToolRun => ({ output, isError: false });
const fail = (output: string): ToolRun => ({ output, isError: true });
