// Diffs of gate1.yml, contracts and definitions (core/gate-diff.ts) use yaml and the diff library throughout
// (42 ms of CPU and 16 MiB to load): loaded on first use, off every run that diffs nothing.
import { onFirstUse } from '../../core/on-first-use.js';

export const gateDiffModule = onFirstUse(() => import('../../core/gate-diff.js'));
