// The coding tools the agent offers its model, as JSON-schema functions. Their names are ones the
// engine already maps onto its compression families (read_file → read, grep → grep, …).

export interface ToolSpec { name: string; description: string; parameters: Record<string, unknown> }

const object = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required, additionalProperties: false });
const str = (description: string) => ({ type: 'string', description });
const int = (description: string) => ({ type: 'integer', description, minimum: 1 });

export const CODING_TOOLS: readonly ToolSpec[] = [
  {
    name: 'read_file',
    description: 'Read a text file of the workspace. Lines come numbered; use offset/limit for long files.',
    parameters: object({ path: str('Workspace-relative path'), offset: int('First line, 1-based'), limit: int('Most lines to return') }, ['path']),
  },
  {
    name: 'list_dir',
    description: 'List a folder of the workspace; folders end with "/".',
    parameters: object({ path: str('Workspace-relative folder; "" or "." is the root') }, ['path']),
  },
  {
    name: 'glob',
    description: 'Find files by glob pattern (e.g. "src/**/*.ts"; "*.md" matches at any depth).',
    parameters: object({ pattern: str('Glob pattern'), path: str('Folder to search in (default: the root)') }, ['pattern']),
  },
  {
    name: 'grep',
    description: 'Search file contents with a JavaScript regular expression; prints path:line:text.',
    parameters: object(
      { pattern: str('Regular expression'), path: str('Folder or file to search (default: the root)'), glob: str('Only files matching this glob'), ignore_case: { type: 'boolean' } },
      ['pattern'],
    ),
  },
  {
    name: 'edit_file',
    description: 'Replace an exact string in a file. old_string must occur exactly once unless replace_all is true.',
    parameters: object(
      { path: str('Workspace-relative path'), old_string: str('Exact text to replace'), new_string: str('Replacement'), replace_all: { type: 'boolean' } },
      ['path', 'old_string', 'new_string'],
    ),
  },
  {
    name: 'write_file',
    description: 'Create or overwrite a file with the given content.',
    parameters: object({ path: str('Workspace-relative path'), content: str('The whole new content') }, ['path', 'content']),
  },
  {
    name: 'run_command',
    description: 'Run a shell command in the workspace root after the user confirms it; returns its output and exit code.',
    parameters: object({ command: str('The shell command line') }, ['command']),
  },
];
