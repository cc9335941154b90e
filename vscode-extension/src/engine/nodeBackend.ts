// The engine's Node build (wasm-bindgen `--target nodejs`, the .wasm beside the bundle).
import * as engineModule from 'context-workbench';
import type { EngineBackend } from './engineApi';
import { packageBackend, packagePlanToolNames } from './packageEngine';

export function nodeBackend(): EngineBackend {
  return packageBackend(engineModule as unknown as Parameters<typeof packageBackend>[0]);
}

export function planToolNames(): string[] {
  return packagePlanToolNames(engineModule as unknown as Parameters<typeof packagePlanToolNames>[0]);
}
