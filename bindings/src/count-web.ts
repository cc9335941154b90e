// The `./count` entry in browsers: counting alone, its files fetched from beside this module.
import './platform-web.js';

export { ENCODINGS, loadEncoding, measureTokens, type CountSources, type Encoding } from './count.js';
