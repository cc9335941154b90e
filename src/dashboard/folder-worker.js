// The dashboard's query API over a trace store folder picked in the browser, off the page's
// thread: the package's TraceStore over a read-only host of the picked files, each read when a
// route needs it. Nothing leaves the browser and nothing is written. It imports the npm package's
// build (`bindings/dist/`), so the page is served from the repository's root.
import { TraceStore, pickedFolderHost } from '../../bindings/dist/web.js';

let opened;

self.onmessage = async ({ data }) => {
  try {
    if (data.type === 'open') {
      const store = opened && (await opened).store;
      store?.dispose();
      opened = open(data.files);
      await opened;
      self.postMessage({ id: data.id, status: 200, body: '{}' });
    } else {
      const { store } = await opened;
      self.postMessage({ id: data.id, ...(await store.answer('GET', data.path, data.query)) });
    }
  } catch (error) {
    const body = JSON.stringify({ error: { code: error?.code ?? 'internal', message: error?.message ?? String(error) } });
    self.postMessage({ id: data.id, status: 500, body });
  }
};

/** The store of `files` ([path, File] pairs): the folder holds it as `.trace` (a workspace), or
 * is it (the root must be a folder of the workspace, so its files are put under `.trace/`). */
async function open(files) {
  const workspace = files.some(([path]) => path.startsWith('.trace/'));
  const picked = workspace ? files : files.map(([path, file]) => [`.trace/${path}`, file]);
  const store = await TraceStore.create(pickedFolderHost(picked), { root: '.trace' });
  return { store };
}
