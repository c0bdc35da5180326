// The reference server's defaults that `npm run server`'s command line (options.ts) names, and its check of a
// stage: here rather than in app.ts, so that `--help` and a refused command line answer without loading the
// server (app.ts and what it imports: about a second of CPU a process).

export const DEFAULT_PORT = 8787;
/** The REST door's stage: its base URL is `{origin}/{stage}` and its paths begin there with `/api`. */
export const DEFAULT_STAGE = 'v1';
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_RATE_LIMIT = 200;
/** Each database statement's deadline in ms. */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/** Names a stage may not take: the paths the server serves at its root. */
const RESERVED_STAGES = new Set(['api', 'dashboard', 'device', 'oauth', 'graphql', 'mcp']);

/** A `--stage`: one path segment of letters, digits, `-` and `_`, not one of the root's own names. */
export function checkStage(stage: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(stage) || RESERVED_STAGES.has(stage.toLowerCase()))
    throw new Error(
      `stage must be one path segment of letters, digits, - and _ (such as v1 or prod), not one of ${[...RESERVED_STAGES].join(', ')}; got ${JSON.stringify(stage)}`,
    );
  return stage;
}
