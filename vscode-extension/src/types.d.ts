declare module 'context-workbench';
declare module 'context-workbench/dist/web/context_workbench.js' {
  export function initSync(input: { module: BufferSource | WebAssembly.Module }): unknown;
  export const ContextEngine: unknown;
}
