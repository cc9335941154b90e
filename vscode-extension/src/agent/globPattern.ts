// Glob patterns as coding agents write them (`src/**/*.ts`, `*.{js,mjs}`, `test?.py`), matched
// against workspace-relative `/` paths. Pure.

/** A RegExp matching whole workspace-relative paths. `**` spans folders, `*` and `?` do not. */
export function globToRegExp(pattern: string): RegExp {
  let out = '';
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        const slashAfter = pattern[i + 2] === '/';
        out += slashAfter ? '(?:[^/]*/)*' : '.*';
        i += slashAfter ? 2 : 1;
      } else {
        out += '[^/]*';
      }
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '{') {
      depth++;
      out += '(?:';
    } else if (c === '}' && depth > 0) {
      depth--;
      out += ')';
    } else if (c === ',' && depth > 0) {
      out += '|';
    } else if (c === '[') {
      const close = pattern.indexOf(']', i + 1);
      if (close < 0) {
        out += '\\[';
      } else {
        const body = pattern.slice(i + 1, close).replace(/^!/, '^').replace(/\\/g, '\\\\');
        out += `[${body}]`;
        i = close;
      }
    } else {
      out += c.replace(/[.+^$()|\\/]/g, '\\$&');
    }
  }
  if (depth > 0) throw new Error(`unbalanced braces in glob ${JSON.stringify(pattern)}`);
  return new RegExp(`^${out}$`);
}

/** A pattern without a `/` matches at any depth, as in .gitignore (`*.ts` finds `src/a.ts`). */
export function matcherFor(pattern: string): (path: string) => boolean {
  const trimmed = pattern.replace(/^\.\//, '');
  const anchored = trimmed.includes('/') ? trimmed : `**/${trimmed}`;
  const regex = globToRegExp(anchored);
  return (path) => regex.test(path);
}
