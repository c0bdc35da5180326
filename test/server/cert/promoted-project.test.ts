// The project a promotion records on the table it registers (`gds env promote`): the promoted table's, with an
// id gds derived from where that table was (`shop@con_dev`, `shop@dev`) made the target connector's, so that
// `gds plan` in the target environment finds the table its own (test/commands/project-environment-move.test.ts).
import { describe, expect, it } from 'vitest';
import { bundleProject, promotedProject } from '../../../src/server/certification/promotion.js';

const inDev = (project: string | null, connectorId: string | null = 'con_dev') => ({
  project,
  environmentLabel: 'dev',
  connectorId,
});

describe('promotedProject', () => {
  it.each([
    ['gds.yml’s id, kept', inDev('shop'), 'shop'],
    ['an id with an @ that is not where the table was, kept', inDev('shop@con_other'), 'shop@con_other'],
    ['derived from the connector', inDev('shop@con_dev'), 'shop@con_prod'],
    ['derived from the connectors of --env', inDev('shop@con_a+con_dev'), 'shop@con_prod'],
    ['derived from the environment', inDev('shop@dev'), 'shop@con_prod'],
    ['none: registered by hand', inDev(null), undefined],
  ] as const)('%s', (_what, table, expected) => {
    expect(promotedProject(table, { id: 'con_prod' })).toBe(expected);
  });
});

// A bundle's import records what the promotion of its table would, from the project and connector it carries.
describe('bundleProject', () => {
  const table = (extra: { project?: string; connectorId?: string }) => ({
    name: 'orders',
    mode: 'MODE_A' as const,
    environmentLabel: 'dev',
    source: 'analytics_dev.orders',
    ...extra,
  });

  it.each([
    ['none: a bundle written before bundles carried one', table({}), undefined],
    ['gds.yml’s id, kept', table({ project: 'shop', connectorId: 'con_dev' }), 'shop'],
    [
      'derived from the connector',
      table({ project: 'shop@con_dev', connectorId: 'con_dev' }),
      'shop@con_prod',
    ],
    ['derived from the environment', table({ project: 'shop@dev' }), 'shop@con_prod'],
    ['another connector’s, kept', table({ project: 'shop@con_dev' }), 'shop@con_dev'],
  ] as const)('%s', (_what, bundled, expected) => {
    expect(bundleProject(bundled, { id: 'con_prod' })).toBe(expected);
  });

  it('refuses an id no push may name', () => {
    expect(() => bundleProject(table({ project: 'shop\u0007' }), { id: 'con_prod' })).toThrow(
      /table\.project must be/,
    );
  });
});
