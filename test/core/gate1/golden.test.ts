// Golden files: each golden/*.yml is validated and its diagnostics, one compiler-style line each,
// must equal golden/*.txt. After a deliberate change of messages: UPDATE_GOLDEN=1 npx vitest run test/core/gate1
// and review the diff of the .txt files.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic, validateGate1 } from '../../../src/core/gate1/index.js';

const dir = join(import.meta.dirname, 'golden');
const cases = readdirSync(dir).filter((f) => f.endsWith('.yml'));

describe('gate1.yml diagnostics match the golden files', () => {
  it.each(cases)('%s', (file) => {
    const result = validateGate1(readFileSync(join(dir, file), 'utf8'), { fileName: file });
    const valid = result.diagnostics.every((d) => d.severity !== 'error');
    const text = [...result.diagnostics.map(formatDiagnostic), `valid: ${valid}`, ''].join('\n');
    const goldenPath = join(dir, file.replace(/\.yml$/, '.txt'));
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(goldenPath, text);
    expect(text).toBe(readFileSync(goldenPath, 'utf8'));
    expect(result.document !== undefined).toBe(valid);
  });
});
