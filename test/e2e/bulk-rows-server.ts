// The test server of the files that move tens of thousands of rows through gds (records-import,
// records-export): on the test PostgreSQL where there is one (GDS_TEST_DATABASE_URL, as CI sets it), else
// on PGlite. What these files test is gds's import and export of the rows; on PGlite the same rows cost the
// test process about twice the CPU (its database thread, and a message each way for every statement). The
// hard values of test/helpers/records.ts still go through PGlite in records-input and records-pacing.
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { noPostgres } from '../helpers/skip.js';

/** A test server for many rows: the spec's rate limit lifted (records-pacing holds it low). */
export function startBulkRowsServer(): Promise<TestServer> {
  return startTestServer({
    rateLimit: 1_000_000,
    ...(noPostgres === undefined ? { database: 'postgres' as const } : {}),
  });
}
