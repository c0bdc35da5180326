// A dbt project's files (services/dbt-project.ts) and its names in the warehouse's case (core/dbt/case.ts)
// use yaml throughout (32 ms of CPU and 12 MiB to load): loaded on first use, off every other run.
import { onFirstUse } from '../../core/on-first-use.js';

export const dbtProjectService = onFirstUse(() => import('../dbt-project.js'));
export const dbtCase = onFirstUse(() => import('../../core/dbt/case.js'));
