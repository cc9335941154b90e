// The Goal DAG webview's script: the playground's renderer (bindings/playground/dag.js), fed
// the engine's goal tree by the extension. Bundled by scripts/build.mjs into dist/dag/.
import { renderDag } from '../../bindings/playground/dag.js';

const vscode = acquireVsCodeApi();
const container = document.getElementById('dag');
const state = { expanded: new Set(vscode.getState()?.expanded ?? []) };
let tree;

function draw() {
  renderDag(container, tree, state, () => {
    vscode.setState({ expanded: [...state.expanded] });
    draw();
  });
}

window.addEventListener('message', (event) => {
  if (event.data?.type !== 'plan') return;
  tree = event.data.tree;
  draw();
});
vscode.postMessage({ type: 'ready' });
