// The `gds gate submit NAME` a plan's or apply's reason gives to run: pasted into a shell, it names the very
// table, whatever its name holds (a space, `;`, `$(…)`, a line break of the service's).
import { describe, expect, it } from 'vitest';
import { bashWords } from '../helpers/bash-words.js';
import type { HeldTable } from '../../src/client/areas/tables.js';
import { certifiedNotSubmitted } from '../../src/services/project-apply.js';
import { lastSubmission } from '../../src/services/project-plan.js';
import type { PlanClient } from '../../src/services/project-plan-types.js';

const NAMES = ['Customer Orders', 'x;touch PWNED', "it's $(id)", 'orders\nForged: ok'];

describe('the gds gate submit a reason gives', () => {
  it.each(NAMES)('of a CERTIFIED table apply --submit leaves: %j pastes back whole', (name) => {
    const reason = certifiedNotSubmitted(name);
    expect(bashWords(/gds gate submit (.*) submits it for review$/.exec(reason)?.[1] ?? '')).toEqual([name]);
  });

  it.each(NAMES)('of a QUARANTINED table submitted as it is: %j pastes back whole', async (name) => {
    const row = {
      id: 'tbl_1',
      name,
      definition: { definitionVersion: 3 },
      gate1: { version: 2 },
    } as unknown as HeldTable;
    const client = {
      gateJobs: {
        list: async () => ({ jobs: [{ id: 'job_1', type: 'gate1-submit' }] }),
        lookup: async () => ({ tableVersion: { definition: 3, gate1: 2 } }),
      },
    } as unknown as PlanClient;
    const { submit, reason } = await lastSubmission(client, row, {});
    expect(submit).toBe(false);
    expect(bashWords(/gds gate submit (.*) submits it again$/.exec(reason)?.[1] ?? '')).toEqual([name]);
  });
});
