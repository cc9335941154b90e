// The one error class of the package: everything the engine, its hosts and this layer throw
// or reject with is a ContextWorkbenchError with a stable `code`.

/** An error of the engine or the package. `code` is stable (`invalid_input`, `host_timeout`, …). */
export class ContextWorkbenchError extends Error {
  override readonly name = 'ContextWorkbenchError';
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** Any thrown value as a ContextWorkbenchError: the engine's own keep their code; a wasm trap
 * (a bug: the instance is then unusable) is `internal`; a wrong argument type is `invalid_input`. */
export function asWorkbenchError(error: unknown): ContextWorkbenchError {
  if (error instanceof ContextWorkbenchError) return error;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (error.name === 'ContextWorkbenchError' && typeof code === 'string') {
      return new ContextWorkbenchError(code, error.message);
    }
    if (error instanceof WebAssembly.RuntimeError) {
      return new ContextWorkbenchError('internal', `the engine trapped (${error.message}); create a new one`);
    }
    if (error instanceof TypeError) return new ContextWorkbenchError('invalid_input', error.message);
    return new ContextWorkbenchError('internal', error.message);
  }
  return new ContextWorkbenchError('internal', String(error));
}

/** Run `f`, rethrowing whatever it throws as a ContextWorkbenchError. */
export function guarded<T>(f: () => T): T {
  try {
    return f();
  } catch (error) {
    throw asWorkbenchError(error);
  }
}

/** Await `f()`, rejecting with a ContextWorkbenchError whatever it throws or rejects with. */
export async function guardedAsync<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (error) {
    throw asWorkbenchError(error);
  }
}
