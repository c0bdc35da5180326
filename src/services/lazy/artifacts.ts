// Reading, comparing and pushing view definitions (core/artifacts, services/artifacts.ts) uses yaml and the
// diff library throughout (42 ms of CPU and 16 MiB to load): loaded on first use, off every other run.
import { onFirstUse } from '../../core/on-first-use.js';

export const artifactsCore = onFirstUse(() => import('../../core/artifacts/index.js'));
export const artifactsService = onFirstUse(() => import('../artifacts.js'));
