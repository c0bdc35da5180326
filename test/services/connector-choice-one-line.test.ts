// gds plan --env with a connector of another environment: the refusal's suggestion names the connector's
// environment as the service gave it, on the suggestion's own line (a line break in it forged one under it).
import { describe, expect, it } from 'vitest';
import type { Connector } from '../../src/client/areas/connectors.js';
import { CliError } from '../../src/core/errors.js';
import { chooseConnector } from '../../src/services/project-plan.js';

describe.each([
  ['a line break', '\n'],
  ['a line separator (U+2028)', '\u2028'],
])("chooseConnector: a connector's environment ending with %s", (_name, separator) => {
  it('reads as a space in the suggestion, whose lines are its own and the connectors listed', () => {
    const connector = {
      id: 'conn_1',
      name: 'warehouse-dev',
      environmentLabel: `dev${separator}Forged: CERTIFIED`,
    };
    let refusal: unknown;
    try {
      chooseConnector([connector as Connector], { connectorId: 'conn_1', env: 'production' });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(CliError);
    const suggestion = (refusal as CliError).suggestion ?? '';
    expect(suggestion).toContain('or leave --env out to plan in dev Forged: CERTIFIED. Connectors:\n');
    expect(suggestion.split('\n').filter((line) => /^\W*Forged:/u.test(line))).toEqual([]);
  });
});
