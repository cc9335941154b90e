// One engine thread of the npm proxy (`node:worker_threads`): a ProxyWorker holds the
// conversations the server assigns this thread, over the workspace's files; the dashboard's own
// thread answers the query API (`answer`) with a TraceStore over the same files. The server posts
// `{ id, op, args }` (an operation below) and gets `{ id, result }` or `{ id, error }`.
import { parentPort, workerData } from 'node:worker_threads';
import '../platform-node.js';
import { ProxyWorker } from '../wasm/context_workbench.js';
import { asWorkbenchError } from '../errors.js';
import { guardHost } from '../host.js';
import { nodeFsHost } from '../hosts/node-fs.js';
import { TraceStore } from '../store.js';
import { type Encoding, ensureEncoding, init } from '../init.js';
import type { EngineThreadData } from './pool.js';

const data = workerData as EngineThreadData;
await init({ wasm: data.wasm, ranks: data.ranks });
await ensureEncoding(data.config.encoding as Encoding);
const files = nodeFsHost(data.workspace, { blocking: true });
const engines = new ProxyWorker(guardHost(files, { onEvent() {}, onProgress() {} }), data.config);
let store: Promise<TraceStore> | undefined;
const operations = {
  recover: () => engines.recover(),
  read: (...args: Parameters<ProxyWorker['read']>) => engines.read(...args),
  prepare: (...args: Parameters<ProxyWorker['prepare']>) => engines.prepare(...args),
  finish: (...args: Parameters<ProxyWorker['finish']>) => engines.finish(...args),
  recordSideCall: (...args: Parameters<ProxyWorker['recordSideCall']>) => engines.recordSideCall(...args),
  close: (key: string) => engines.close(key),
  closeAll: () => engines.closeAll(),
  answer: async (root: string, method: string, path: string, query: string) =>
    (await (store ??= TraceStore.create(files, { root }))).answer(method, path, query),
};
/** What a thread does, by name: the server's `EnginePool.call` is typed by it. */
export type Operations = typeof operations;

parentPort!.on('message', async ({ id, op, args }: { id: number; op: keyof Operations; args: never[] }) => {
  try {
    parentPort!.postMessage({ id, result: await (operations[op] as (...args: never[]) => unknown)(...args) });
  } catch (error) {
    const e = asWorkbenchError(error);
    parentPort!.postMessage({ id, error: { message: e.message, code: e.code } });
  }
  // A prepared call's body is on its way: its session is saved while the upstream has it. Each
  // message is handled to its end before the next one (the host works in place, so nothing here
  // waits on the event loop): a key's prepare, save and finish never interleave.
  await engines.saveBehind();
});
parentPort!.postMessage({ ready: true });
