// Detail views read times as lists do (docs/output.md, Times): relative on a terminal (`12m ago`,
// `in 59m`), the ISO time piped, so a script still parses it.
import { describe, expect, it } from 'vitest';
import { printStatus } from '../../src/cli/governance-views.js';
import { printSavedTokens, printTokenBundle } from '../../src/cli/token-bundle.js';
import type { TableStatus } from '../../src/client/areas/tables.js';
import type { TokenBundle } from '../../src/contract/types.js';
import { capturedOutput } from '../helpers/captured-output.js';
import type { SavedIntegration } from '../../src/auth/integration-profile.js';

const output = capturedOutput;

const ago = new Date(Date.now() - 12 * 60_000 - 5000).toISOString();
const ahead = new Date(Date.now() + 59 * 60_000 + 5000).toISOString();
const later = new Date(Date.now() + 30 * 86_400_000 + 5000).toISOString();

const status = {
  id: 'tbl_1',
  name: 'orders',
  governanceId: 'tbl_1',
  mode: 'ENFORCED',
  gate: 1,
  environmentLabel: 'dev',
  state: 'CERTIFIED',
  source: null,
  definitionVersion: 1,
  gate1Version: 1,
  dataVersion: 2,
  certification: null,
  certifiedView: {
    name: 'certified_dev.orders',
    health: 'published',
    republished: false,
    version: 1,
    detail: '',
    ungatedSince: ago,
  },
  schemaDrift: { checked: false },
  openRecertificationRequests: 1,
  activeJobs: [],
} as unknown as TableStatus;

describe('gds status: the certified view rebuilt and not gated since', () => {
  it('on a terminal says how long ago the relation was rebuilt, not the ISO time', () => {
    const { out, stdout } = output(true);
    printStatus(out, status);
    expect(stdout.text).toContain(
      'certified_dev.orders published v1 (the relation was rebuilt 12m ago: its rows have not been gated since)',
    );
    expect(stdout.text).not.toContain(ago);
  });

  it('piped keeps the ISO time', () => {
    const { out, stdout } = output(false);
    printStatus(out, status);
    expect(stdout.text).toContain(`its rows have not been gated since ${ago})`);
  });
});

describe('gds status: the versions a review proof is taken at', () => {
  it("names the contract's revision, and leaves it out for a service that sends none", () => {
    const withContract = output(false);
    printStatus(withContract.out, { ...status, contractVersion: 3 } as TableStatus);
    expect(withContract.stdout.text).toContain('definition 1, gate1 1, data 2, contract 3\n');
    const older = output(false);
    printStatus(older.out, status);
    expect(older.stdout.text).toContain('definition 1, gate1 1, data 2\n');
  });
});

const tokens = {
  accessToken: 'access',
  expiresAt: ahead,
  refreshToken: 'refresh',
  refreshExpiresAt: later,
} as TokenBundle;

describe('tokens issue/refresh: when the tokens expire', () => {
  it('reads in 59m and in 1mo on a terminal', () => {
    const shown = output(true);
    printTokenBundle(shown.out, tokens);
    expect(shown.stdout.text).toContain('expires in 59m\n');
    expect(shown.stdout.text).toContain('expires in 1mo, single use');
    const saved = output(true);
    const profile = {
      saved: { name: 'ci', storage: 'file' },
      location: '/x',
    } as unknown as SavedIntegration<unknown>;
    printSavedTokens(saved.out, profile, tokens);
    expect(saved.stdout.text).toBe(
      'Access token:  expires in 59m\nRefresh token: expires in 1mo, single use\n',
    );
  });

  it('piped, the ISO times', () => {
    const { out, stdout } = output(false);
    printTokenBundle(out, tokens);
    expect(stdout.text).toContain(`expires ${ahead}\n`);
    expect(stdout.text).toContain(`expires ${later}, single use`);
  });
});
