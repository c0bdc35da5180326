// jq's WebAssembly as gds instantiates it (src/cli/jq-instantiate.ts): the import it replaces is jq's
// random_get in this jq-wasm's glue, a --jq run answers as before and loads no WebCrypto (7 ms of CPU, issue
// 25), and the random bytes are random.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fillRandom, RANDOM_IMPORT } from '../../src/cli/jq-instantiate.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const glue = createRequire(import.meta.url).resolve('jq-wasm');

describe('jq instantiated by gds', () => {
  it("replaces the glue's random_get, and only it", () => {
    const source = readFileSync(glue, 'utf8');
    const imports = /var wasmImports = \{([^}]*)\}/.exec(source)?.[1] ?? '';
    expect(imports).toContain(`${RANDOM_IMPORT.name}: _random_get`);
    expect(source).toContain('var _random_get = (buffer, size) => randomFill(');
    const wasmImports = readFileSync(join(dirname(glue), 'build/jq.wasm'));
    expect(
      wasmImports.includes(Buffer.from(`\u0001${RANDOM_IMPORT.module}\u0001${RANDOM_IMPORT.name}\u0000`)),
    ).toBe(true);
  });

  it('a --jq run outside the subset answers as jq does and loads no WebCrypto', () => {
    const script = `
      const before = new Set(process.moduleLoadList);
      const { runJqOver } = await import('./src/cli/jq.ts');
      const lines = [JSON.stringify({ name: 'ORDERS' }), JSON.stringify({ name: 'Customers' })];
      const { text, failure } = await runJqOver(lines, '.name | ascii_downcase | [., length]');
      const crypto = process.moduleLoadList.filter((m) => /crypto/.test(m) && !before.has(m));
      process.stdout.write(JSON.stringify({ text, failure: failure?.message, crypto }));
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual({ text: '["orders",6]\n["customers",9]', crypto: [] });
  });

  it('fills with random bytes', () => {
    const a = new Uint8Array(64);
    const b = new Uint8Array(64);
    fillRandom(a);
    fillRandom(b);
    expect(a.some((byte) => byte !== 0)).toBe(true);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
  });
});
