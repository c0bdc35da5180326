// The dev products view as a SQL artifact for the bench modules that push it as a real process, with the
// environment such a process runs in (this folder is not itself a bench module).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestServer } from '../../../test/helpers/server.js';

export interface ProductsArtifact {
  /** The dev connector. */
  connector: string;
  /** The .sql file, written at once with every column. */
  file: string;
  /** Rewrites the file with the first `count` columns (a different definition). */
  write(count?: number): void;
  /** How many columns the object has. */
  columnCount: number;
  /** GDS_CONFIG_DIR, SERVICE_API_URL and SERVICE_TOKEN (an ADMIN's CLI token). */
  env: Record<string, string>;
}

export function productsArtifact(server: TestServer, dir: string): ProductsArtifact {
  const connector = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
  const columns =
    server.ready.warehouseObjects.find((o) => o.source === 'analytics_dev.products')?.columns ?? [];
  const file = join(dir, 'products.sql');
  const write = (count = columns.length) =>
    writeFileSync(
      file,
      `CREATE VIEW analytics_dev.products AS SELECT ${columns
        .slice(0, count)
        .map((c) => c.name)
        .join(', ')} FROM raw.products`,
    );
  write();
  const env = {
    GDS_CONFIG_DIR: join(dir, 'gds'),
    SERVICE_API_URL: server.url,
    SERVICE_TOKEN: server.user('ADMIN').cliToken,
  };
  return { connector, file, write, columnCount: columns.length, env };
}
