import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { renderTypes, TYPES_PATH } from '../../scripts/generate-types.js';

describe('generated contract types', () => {
  it('src/contract/types.gen.ts is what `npm run generate:types` makes of openapi.yaml', async () => {
    const committed = await readFile(TYPES_PATH, 'utf8');
    expect(committed, 'run `npm run generate:types` and commit the result').toBe(await renderTypes());
  });
});
