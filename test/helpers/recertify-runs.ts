// `gds recertify` runs against a test server: the server itself (jobs run by hand, with certified tables a
// rebuild dropped the views of, and a CI job's token), gds's environment for a run in the test process, and
// runs through the service function (recertify()) for the tests of its resume state: each run in a state
// folder of its own (XDG_STATE_HOME), counting the signals it sends, and stopped part-way when asked (its nth
// signal fails before it is sent).
//
//   ({ server, token, names } = await startRecertifyServer({ postgres, models: 1_000, prefix: 'whole' }));
//   runInProcess(args, { env: recertifyEnv(dir, server.url, token) });
//   const paths = await runFiles(names, 'inv-1');
//   const { response, error, warnings, sent } = await recertifyRun(server, token, paths, { stopAt: 2 });
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiClient } from '../../src/client/index.js';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { RecertifyResponse } from '../../src/contract/types.js';
import type { RecertifyWarning } from '../../src/services/recertification.js';
import { recertify } from '../../src/services/recertification.js';
import { certifiedCopies, recertifyToken, runResultsOf } from './certified-copies.js';
import type { TestServer } from './server.js';
import { startTestServer } from './server.js';

export interface RecertifyServer {
  server: TestServer;
  /** A CI job's token: dev, workspace:write:recertify. */
  token: string;
  /** The certified copies' names, `${prefix}_1…`. */
  names: string[];
}

/** A test server (jobs run by hand) with `models` certified copies (none by default) and a recertify token. */
export async function startRecertifyServer(
  options: { postgres?: boolean; models?: number; prefix?: string } = {},
): Promise<RecertifyServer> {
  const server = await startTestServer({
    jobs: 'manual',
    ...(options.postgres ? { database: 'postgres' as const } : {}),
  });
  const names = options.models ? await certifiedCopies(server, options.models, options.prefix ?? 'copy') : [];
  return { server, token: await recertifyToken(server), names };
}

/** gds's environment for a run against `url` with `token`: its config and resume state in `dir`. */
export function recertifyEnv(dir: string, url: string, token: string): Record<string, string> {
  return {
    GDS_CONFIG_DIR: join(dir, 'gds'),
    XDG_STATE_HOME: join(dir, 'state'),
    SERVICE_API_URL: url,
    SERVICE_TOKEN: token,
  };
}

export interface RunFiles {
  /** run_results.json of a run in which every model of the names was rebuilt. */
  file: string;
  /** XDG_STATE_HOME of the runs. */
  stateHome: string;
  /** Where the state files are: `${stateHome}/gds/recertify`. */
  stateFolder: string;
}

/** A fresh folder with the run results of a run of its own (its own dbt invocation id). */
export async function runFiles(names: readonly string[], invocationId: string): Promise<RunFiles> {
  const dir = await mkdtemp(join(tmpdir(), 'gds-recertify-state-'));
  const file = join(dir, 'run_results.json');
  await writeFile(file, runResultsOf(names, invocationId));
  return { file, stateHome: join(dir, 'state'), stateFolder: join(dir, 'state', 'gds', 'recertify') };
}

/**
 * One run of the environment `dev` with `token`; `stopAt`: its nth signal fails, unsent; `beforeFirst`: waited
 * for before its first signal is sent (after it read its state).
 */
export async function recertifyRun(
  server: Pick<TestServer, 'url'>,
  token: string,
  paths: Pick<RunFiles, 'file' | 'stateHome'>,
  options: { stopAt?: number; beforeFirst?: () => Promise<unknown> } = {},
): Promise<{ response?: RecertifyResponse; error?: unknown; warnings: RecertifyWarning[]; sent: number }> {
  const client = createApiClient({
    baseUrl: server.url,
    auth: staticToken(token),
    sleep: async () => {},
    logger: () => {},
  });
  const warnings: RecertifyWarning[] = [];
  let sent = 0;
  const counting: Pick<ApiClient, 'recertification'> = {
    recertification: {
      ...client.recertification,
      signal: async (request, call) => {
        sent += 1;
        if (sent === 1) await options.beforeFirst?.();
        if (sent === options.stopAt) throw new Error('stopped');
        return client.recertification.signal(request, call);
      },
    },
  };
  const input = {
    runResults: paths.file,
    environmentLabel: 'dev',
    service: server.url,
    token,
    env: { XDG_STATE_HOME: paths.stateHome },
  };
  try {
    const response = await recertify(counting, input, (w) => warnings.push(w));
    return { response, warnings, sent };
  } catch (error) {
    return { error, warnings, sent };
  } finally {
    await client.close();
  }
}
