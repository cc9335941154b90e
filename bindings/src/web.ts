// The package's browser entry (the `browser` condition of package.json).
import './platform-web.js';

export * from './common.js';
export { browserFsHost, type BrowserFsHostOptions } from './hosts/browser-fs.js';
export { pickedFolderHost, type PickedFiles } from './hosts/picked.js';
