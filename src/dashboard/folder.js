// A trace store folder opened in the browser: the dashboard page with `?folder` (the playground
// links to it; any static server), whose folder is picked or dropped. Its files are read in a
// worker by the package's TraceStore, which answers the query API a workbench server answers, so
// the dashboard draws it unchanged. What was picked is a snapshot: pick it again for newer calls.
import { el } from './dom.js';

/** The query API over `files` ([path, File] pairs): `get(path?query)` resolves to { status, body }. */
export function folderApi(files) {
  const worker = new Worker(new URL('./folder-worker.js', import.meta.url), { type: 'module' });
  const waiting = new Map();
  let next = 0;
  const fail = (message) => ({ status: 500, body: JSON.stringify({ error: { code: 'internal', message } }) });
  worker.onmessage = ({ data }) => {
    waiting.get(data.id)?.(data);
    waiting.delete(data.id);
  };
  worker.onerror = (event) => {
    event.preventDefault();
    for (const resolve of waiting.values()) resolve(fail(`The folder's reader stopped: ${event.message || 'it did not load'}`));
    waiting.clear();
  };
  const ask = (message) => new Promise((resolve) => {
    const id = ++next;
    waiting.set(id, resolve);
    worker.postMessage({ ...message, id });
  });
  const opened = ask({ type: 'open', files });
  return {
    async get(target) {
      const open = await opened;
      if (open.status !== 200) return open;
      const [path, query = ''] = target.split(/\?(.*)/s);
      return ask({ type: 'get', path: `/${path}`, query });
    },
    close: () => worker.terminate(),
  };
}

/** What the page shows before a folder is open: a folder input, and a drop anywhere on the page. */
export function folderPicker(onFiles) {
  return el('div', { class: 'empty', id: 'folder-picker' },
    el('p', {}, 'Open a trace store: the ', el('code', {}, '.trace'), ' folder of a workspace where ', el('code', {}, 'workbench proxy'),
      ' or the VS Code extension saved its sessions, or the workspace folder itself. It is read here, in this browser: nothing is uploaded.'),
    el('label', { class: 'folder' }, 'Choose a folder ',
      el('input', { type: 'file', id: 'folder', webkitdirectory: true, multiple: true, onchange: (e) => onFiles(pickedFiles(e.target.files)) })),
    el('p', { class: 'hint' }, 'Or drop the folder on this page.'));
}

/** Call `onFiles` with the files of a folder dropped anywhere on the page. */
export function acceptDrops(onFiles, onError) {
  addEventListener('dragover', (event) => event.preventDefault());
  addEventListener('drop', (event) => {
    event.preventDefault();
    const entry = [...event.dataTransfer.items].map((item) => item.webkitGetAsEntry?.()).find((e) => e?.isDirectory);
    if (!entry) return onError('Drop a folder (a trace store), not a file.');
    droppedFiles(entry).then(onFiles, (error) => onError(`The folder could not be read: ${error?.message ?? error}`));
  });
}

/** The [path, File] pairs of a folder input's files, their paths inside the picked folder. */
function pickedFiles(fileList) {
  return [...fileList].map((file) => [file.webkitRelativePath.split('/').slice(1).join('/'), file]).filter(([path]) => path);
}

/** The [path, File] pairs under a dropped directory entry, their paths inside it. */
async function droppedFiles(directory) {
  const out = [];
  const walk = async (dir, prefix) => {
    const reader = dir.createReader();
    for (let batch; (batch = await new Promise((ok, fail) => reader.readEntries(ok, fail))).length > 0;) {
      for (const entry of batch) {
        if (entry.isDirectory) await walk(entry, `${prefix}${entry.name}/`);
        else out.push([`${prefix}${entry.name}`, await new Promise((ok, fail) => entry.file(ok, fail))]);
      }
    }
  };
  await walk(directory, '');
  return out;
}
