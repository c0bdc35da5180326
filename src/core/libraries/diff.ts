// The diff library (10 ms of CPU and 4 MiB to load), loaded here only, on first use: the modules built on
// it take it as a parameter, so the commands that diff nothing never load it.
import type * as DiffLibrary from 'diff';
import { onFirstUse } from '../on-first-use.js';

export type Diff = typeof DiffLibrary;

export const loadDiff: () => Promise<Diff> = onFirstUse(() => import('diff'));
