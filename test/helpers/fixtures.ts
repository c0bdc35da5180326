import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** `../shared/fixtures` beside the repository: real inputs written by other tools (dbt artifacts). */
export const sharedFixturesDir = fileURLToPath(new URL('../../../shared/fixtures/', import.meta.url));

export function readSharedFixture(relativePath: string): string {
  return readFileSync(sharedFixturesDir + relativePath, 'utf8');
}
