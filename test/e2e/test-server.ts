// The reference server of the end-to-end tests: startTestServer of test/helpers/server.ts, on the test
// PostgreSQL where there is one (GDS_TEST_DATABASE_URL, as CI sets it) unless the options name the engine,
// else on PGlite as before. What these files test is gds against the service, not its database: on PGlite the
// test process also carried the database's work (its database thread, a message each way for every
// statement, the seeded copy each server starts on), the most CPU of many files. The engines are tested on
// both in test/server; the files here whose subject is an engine name it or keep to helpers/server.ts
// (embedded-limit: PGlite's own limit; parallel-writes, records-precision and the describe.each(ENGINES)
// files: both), and records-input keeps the hard values of helpers/records.ts going through PGlite.
import type { TestServer, TestServerOptions } from '../helpers/server.js';
import { startTestServer as startOnEngine } from '../helpers/server.js';
import { noPostgres } from '../helpers/skip.js';

export function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  return startOnEngine({
    ...(noPostgres === undefined ? { database: 'postgres' as const } : {}),
    ...options,
  });
}
