// Checking a gate1.yml (core/gate1/validate.ts) uses yaml and ajv throughout (62 ms of CPU and 25 MiB to
// load): loaded on first use, off every run that checks no gate1.yml.
import { onFirstUse } from '../../core/on-first-use.js';

export const gate1Validation = onFirstUse(() => import('../../core/gate1/validate.js'));
