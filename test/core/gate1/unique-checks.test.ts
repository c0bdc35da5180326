// gate1.yml uniqueChecks (a uniqueness besides the grain key): validated like the other check lists.
import { beforeAll, describe, expect, it } from 'vitest';
import { validateGate1 } from '../../../src/core/gate1/index.js';
import { loadPredicateParser } from '../../../src/core/gate1/predicate-sql.js';

beforeAll(loadPredicateParser);

const codes = (text: string) =>
  validateGate1(text, { fileName: 'gate1.yml', columns: ['id', 'email', 'region'] }).diagnostics.map(
    (d) => `${d.severity} ${d.code}`,
  );

describe('uniqueChecks', () => {
  it('takes a name, one or more columns of the table and a severity', () => {
    const text = 'uniqueChecks:\n  - name: email_once\n    columns: [email]\n    severity: HARD_FAIL\n';
    const result = validateGate1(text, { fileName: 'gate1.yml', columns: ['id', 'email'] });
    expect(result.diagnostics).toEqual([]);
    expect(result.document?.uniqueChecks).toEqual([
      { name: 'email_once', columns: ['email'], severity: 'HARD_FAIL' },
    ]);
  });

  it('takes nullsDistinct: false (NULL compared as a value), and only a boolean there', () => {
    const text =
      'uniqueChecks:\n  - name: u\n    columns: [id, region]\n    severity: WARN\n    nullsDistinct: false\n';
    expect(codes(text)).toEqual([]);
    expect(codes(text.replace('false', 'no way'))).toEqual(['error schema-type']);
  });

  it('refuses an unknown column, a name another check has, no columns and an unknown key', () => {
    expect(codes('uniqueChecks:\n  - name: u\n    columns: [id, mail]\n    severity: WARN\n')).toEqual([
      'error unknown-column',
    ]);
    expect(
      codes(
        'customPredicates:\n  - name: u\n    sql: id > 0\n    severity: WARN\nuniqueChecks:\n  - name: u\n    columns: [id]\n    severity: WARN\n',
      ),
    ).toEqual(['error duplicate-name']);
    expect(codes('uniqueChecks:\n  - name: u\n    columns: []\n    severity: WARN\n')).toHaveLength(1);
    expect(
      codes('uniqueChecks:\n  - name: u\n    columns: [id]\n    severity: WARN\n    where: x\n'),
    ).toEqual(['error schema-unknown-key']);
  });
});
