// Golden files: each golden/NAME.input (a gate1.yml; not named .yml so that formatters leave the broken
// ones alone) is validated as NAME.yml, and its diagnostics, one compiler-style line each, must equal
// golden/NAME.expected. After a deliberate change of messages: UPDATE_GOLDEN=1 npx vitest run
// test/core/gate1/golden.test.ts, then review the diff of the .expected files.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic, validateGate1 } from '../../../src/core/gate1/index.js';

const dir = join(import.meta.dirname, 'golden');
const cases = readdirSync(dir)
  .filter((f) => f.endsWith('.input'))
  .map((f) => f.replace(/\.input$/, ''));

describe('gate1.yml diagnostics match the golden files', () => {
  it.each(cases)('%s', (name) => {
    const result = validateGate1(readFileSync(join(dir, `${name}.input`), 'utf8'), {
      fileName: `${name}.yml`,
    });
    const valid = result.diagnostics.every((d) => d.severity !== 'error');
    const text = [...result.diagnostics.map(formatDiagnostic), `valid: ${valid}`, ''].join('\n');
    const goldenPath = join(dir, `${name}.expected`);
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(goldenPath, text);
    expect(text).toBe(readFileSync(goldenPath, 'utf8'));
    expect(result.document !== undefined).toBe(valid);
  });
});
