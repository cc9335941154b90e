// An in-memory AgentFiles for the unit tests.
import type { AgentFiles } from '../src/agent/codingTools';

export class MemoryFiles implements AgentFiles {
  readonly files = new Map<string, string>();
  constructor(initial: Record<string, string> = {}) {
    for (const [k, v] of Object.entries(initial)) this.files.set(k, v);
  }
  async readFile(path: string) {
    const text = this.files.get(path);
    if (text === undefined) throw Object.assign(new Error(`no such file: ${path}`), { code: 'not_found' });
    return { text, mtimeMs: 1 };
  }
  async stat(path: string) {
    if (this.files.has(path)) return { isDir: false, size: this.files.get(path)!.length, mtimeMs: 1 };
    const prefix = path === '' ? '' : `${path}/`;
    return [...this.files.keys()].some((k) => k.startsWith(prefix)) ? { isDir: true, size: 0, mtimeMs: 1 } : null;
  }
  async writeFile(path: string, data: string) {
    this.files.set(path, data);
  }
  async listDir(path: string) {
    const prefix = path === '' ? '' : `${path}/`;
    const names = new Map<string, boolean>();
    for (const key of this.files.keys()) {
      if (!key.startsWith(prefix)) continue;
      const [first, ...rest] = key.slice(prefix.length).split('/');
      names.set(first, rest.length > 0 || names.get(first) === true);
    }
    return [...names].sort().map(([name, isDir]) => ({ name, isDir }));
  }
}
