// The package's Node entry.
import './platform-node.js';

export * from './common.js';
export { nodeFsHost, type NodeFsHostOptions } from './hosts/node-fs.js';
