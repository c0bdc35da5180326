// What dbt's PreviousState holds besides the manifest, for the `result:` and `source_status:` selectors: the
// run_results.json of the `--state` folder (each node's status in the run that wrote it: dbt's
// ResultSelectorMethod), and the sources.json of that folder and of the project's target/ (the freshness of
// each source then and now: dbt's SourceStatusSelectorMethod). Pure: no I/O.
import { DbtManifestError, isEntry, text } from './manifest.js';
import type { PreviousRun, RunResults, SourceFreshness } from './types.js';

export type { PreviousRun };

/** The results list of a dbt artifact of `kind` (run-results, sources); a DbtManifestError when it is another. */
function resultsOf(value: unknown, kind: string, writtenBy: string): Array<Record<string, unknown>> {
  if (!isEntry(value)) throw new DbtManifestError(`it is not a JSON object: is it dbt's ${kind}.json?`);
  const metadata = isEntry(value['metadata']) ? value['metadata'] : {};
  const schema = text(metadata['dbt_schema_version']);
  if (schema !== undefined && !new RegExp(`/${kind}/v\\d+\\.json$`).test(schema))
    throw new DbtManifestError(`it is a ${schema}, not dbt's ${kind}: ${writtenBy}`);
  const results = value['results'];
  if (!Array.isArray(results))
    throw new DbtManifestError(`it has no results list: it is not dbt's ${kind} (${writtenBy})`);
  return (results as unknown[]).filter(isEntry);
}

/** A parsed run_results.json: each result's status by its unique id. */
export function readRunResults(value: unknown): RunResults {
  const statuses: RunResults = new Map();
  for (const result of resultsOf(
    value,
    'run-results',
    'dbt run, build, test or seed writes run_results.json',
  )) {
    const id = text(result['unique_id']);
    const status = text(result['status']);
    if (id !== undefined && status !== undefined) statuses.set(id, status);
  }
  return statuses;
}

/** A parsed sources.json (`dbt source freshness`): as dbt reads it, a result without max_loaded_at is a runtime error. */
export function readSourceFreshness(value: unknown): SourceFreshness {
  const freshness: SourceFreshness = { loadedAt: new Map(), runtimeErrors: new Set() };
  for (const result of resultsOf(value, 'sources', 'dbt source freshness writes sources.json')) {
    const id = text(result['unique_id']);
    if (id === undefined) continue;
    const loadedAt = result['max_loaded_at'];
    if (loadedAt === undefined) freshness.runtimeErrors.add(id);
    else freshness.loadedAt.set(id, typeof loadedAt === 'string' ? loadedAt : String(loadedAt));
  }
  return freshness;
}

/** Which of two max_loaded_at is later: as instants when both read as dates, else as texts. */
function later(a: string, b: string): boolean {
  const [x, y] = [Date.parse(a), Date.parse(b)];
  return Number.isFinite(x) && Number.isFinite(y) ? x > y : a > b;
}

/**
 * dbt's `source_status:fresher`: the sources loaded now and not before, or loaded later now than then; not
 * those whose check now failed to run. Any other value selects nothing, as in dbt.
 */
export function sourcesWithStatus(
  status: string,
  previous: SourceFreshness,
  current: SourceFreshness,
): Set<string> {
  const matches = new Set<string>();
  if (status !== 'fresher') return matches;
  current.loadedAt.forEach((now, id) => {
    const then = previous.loadedAt.get(id);
    if ((then === undefined || later(now, then)) && !current.runtimeErrors.has(id)) matches.add(id);
  });
  return matches;
}
