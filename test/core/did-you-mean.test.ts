import { describe, expect, it } from 'vitest';
import { closest, editDistance } from '../../src/core/did-you-mean.js';
import { validateGate1 } from '../../src/core/gate1/index.js';

describe('closest', () => {
  it('a word the allowed one begins with wins over a nearer edit (HARD is HARD_FAIL, not WARN)', () => {
    expect(editDistance('HARD', 'WARN')).toBe(2);
    expect(closest('HARD', ['HARD_FAIL', 'SOFT_FAIL', 'WARN'])).toBe('HARD_FAIL');
    expect(closest('soft', ['HARD_FAIL', 'SOFT_FAIL', 'WARN'])).toBe('SOFT_FAIL');
  });

  it('case and punctuation aside, then the nearest by edit distance, else nothing', () => {
    expect(closest('hard-fail', ['HARD_FAIL', 'WARN'])).toBe('HARD_FAIL');
    expect(closest('CERTIFID', ['QUARANTINED', 'CERTIFIED', 'CORE'])).toBe('CERTIFIED');
    expect(closest('gate:resutl', ['gate:result', 'gate:run', 'list'])).toBe('gate:result');
    expect(closest('zzz', ['list', 'status'])).toBeUndefined();
  });

  it('gate1.yml severity HARD suggests HARD_FAIL', () => {
    const text = 'customPredicates:\n  - name: x\n    sql: a > 0\n    severity: HARD\n';
    const [d] = validateGate1(text, { fileName: 'g.yml' }).diagnostics;
    expect(d?.message).toContain('(did you mean HARD_FAIL?)');
  });
});
