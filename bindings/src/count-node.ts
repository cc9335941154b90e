// The `./count` entry in Node: counting alone, its files read from the package's dist/ folder.
import './platform-node.js';

export { ENCODINGS, loadEncoding, measureTokens, type CountSources, type Encoding } from './count.js';
