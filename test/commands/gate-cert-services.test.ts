// The services of the gate, certification and contract commands, each with a real client over msw stubs
// (every stub must be used, any other request fails the test): what goes over the wire, what comes back,
// and what is refused locally with nothing sent.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient } from '../../src/client/index.js';
import type { Bundle } from '../../src/client/areas/promotions.js';
import type { Gate1ProofBody, GateJobBody } from '../../src/contract/types.js';
import { bundleDigest } from '../../src/core/bundle-seal.js';
import {
  certifyTable,
  evidenceOf,
  rejectTable,
  requireInteractiveSession,
} from '../../src/services/certification.js';
import { intentRequest, setIntent } from '../../src/services/contract-intent.js';
import {
  applyGate,
  cancelGateJob,
  diffWithServer,
  gateJobResult,
  gateJobStatus,
  gateRunRequest,
  listGateJobs,
  runGate,
  suggestGate,
  watchGateJob,
} from '../../src/services/gates.js';
import {
  checkBundleTable,
  importBundle,
  parseBundle,
  promoteTable,
  relayPromotion,
} from '../../src/services/promotions.js';
import { listVersions, restoreVersion } from '../../src/services/versions.js';
import { configHistory, setConfig } from '../../src/services/workspace-config.js';
import { BASE, useMockApi } from '../client/mock-api.js';

const api = useMockApi();
const DEST = 'https://dest.test';
const at = (path: string, base = BASE) => `${base}${path}`;

const clients: ApiClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
function newClient(baseUrl = BASE, token = 'cli_servicesGovToken0001'): ApiClient {
  const client = createApiClient({
    baseUrl,
    auth: staticToken(token),
    sleep: async () => {},
    logger: () => {},
  });
  clients.push(client);
  return client;
}

async function refusal(work: Promise<unknown>): Promise<CliError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

const proof = (passed: boolean): Gate1ProofBody => ({
  id: null,
  kind: 'run',
  gate: 1,
  tableId: 't_1',
  passed,
  results: [],
  failedPredicates: passed ? [] : ['price_positive'],
  rowsChecked: 3,
  sample: null,
  tableVersion: { definition: 1, gate1: 1, data: 1 },
  ranAt: '2026-01-01T00:00:00.000Z',
});
const job = (status: GateJobBody['status'], gate: 1 | 2 | 3 = 2): GateJobBody => ({
  id: 'job_1',
  tableId: 't_1',
  type: gate === 1 ? 'gate-baseline-auto' : gate === 2 ? 'gate2' : 'gate3',
  gate,
  status,
  params: {},
  createdBy: 'usr_1',
  createdAt: '2026-01-01T00:00:00.000Z',
  startedAt: null,
  finishedAt: null,
});
const gateVersion = (version: number, content: string) => ({
  tableId: 't_1',
  version,
  content,
  createdBy: 'usr_1',
  createdAt: '2026-01-01T00:00:00.000Z',
});

const validGate =
  'customPredicates:\n  - name: price_positive\n    sql: price > 0\n    severity: HARD_FAIL\n';

describe('applyGate', () => {
  it('refuses an invalid gate1.yml locally (exit 2, every error in details) and sends nothing', async () => {
    const text = 'customPredicates:\n  - name: x\n    sql: "pg_sleep(1)"\n    severity: HARD_FAIL\n';
    const error = await refusal(applyGate(newClient(), 't_1', { name: 'g.yml', text }));
    expect(error.exitCode).toBe(2);
    expect(error.code).toBe('invalid_gate1');
    expect(error.message).toContain('nothing was sent');
    const { diagnostics } = error.details as { diagnostics: Array<{ file: string; line: number }> };
    expect(diagnostics[0]).toMatchObject({ file: 'g.yml', line: 3 });
    expect(api.seen).toEqual([]);
  });

  it('sends a valid file as {content} with PUT when it differs from the current version', async () => {
    let body: unknown;
    api.use(
      http.get(at('/api/tables/t_1/gate1'), () =>
        HttpResponse.json(gateVersion(1, validGate.replace('> 0', '>= 0'))),
      ),
      http.put(at('/api/tables/t_1/gate1'), async ({ request }) => {
        body = await request.json();
        return HttpResponse.json({
          ...gateVersion(2, validGate),
          warnings: [],
          recertificationRequestId: null,
        });
      }),
    );
    const outcome = await applyGate(newClient(), 't_1', { name: 'g.yml', text: validGate });
    expect(body).toEqual({ content: validGate });
    expect(outcome.kind).toBe('applied');
    if (outcome.kind !== 'applied') return;
    expect(outcome.applied.version).toBe(2);
    expect(outcome.diff).toContain('-    sql: price >= 0');
    expect(outcome.diff).toContain('+    sql: price > 0');
  });

  it('sends the version it compared with as If-Match; a 412 precondition_failed is exit 6 naming the current version', async () => {
    const ifMatch: Array<string | null> = [];
    api.use(
      http.get(at('/api/tables/t_1/gate1'), () =>
        HttpResponse.json(gateVersion(3, validGate.replace('> 0', '>= 0'))),
      ),
      http.put(at('/api/tables/t_1/gate1'), ({ request }) => {
        ifMatch.push(request.headers.get('if-match'));
        return HttpResponse.json(
          {
            error: {
              code: 'precondition_failed',
              message: 'gate1.yml of t_1 is now v4, not v3 as this write expected: it changed meanwhile.',
              details: { currentVersion: 4, expectedVersion: 3 },
            },
          },
          { status: 412 },
        );
      }),
    );
    const error = await applyGate(newClient(), 't_1', { name: 'g.yml', text: validGate }).catch(
      (e: unknown) => e,
    );
    expect(ifMatch).toEqual(['3']);
    expect(error).toMatchObject({ status: 412, code: 'precondition_failed' });
  });

  it('a PUT the service answers changed: false (a parallel apply stored these rules) is "unchanged"', async () => {
    api.use(
      http.get(at('/api/tables/t_1/gate1'), () =>
        HttpResponse.json({ error: { code: 'gate1_not_found', message: 'none' } }, { status: 404 }),
      ),
      http.put(at('/api/tables/t_1/gate1'), ({ request }) => {
        expect(request.headers.get('if-match')).toBe('0');
        return HttpResponse.json({
          ...gateVersion(1, validGate),
          warnings: [],
          recertificationRequestId: null,
          changed: false,
        });
      }),
    );
    const outcome = await applyGate(newClient(), 't_1', { name: 'g.yml', text: validGate });
    expect(outcome).toMatchObject({ kind: 'unchanged', current: { version: 1 } });
  });

  it('sends the first version when none was applied yet', async () => {
    api.use(
      http.get(at('/api/tables/t_1/gate1'), () =>
        HttpResponse.json({ error: { code: 'gate1_not_found', message: 'none' } }, { status: 404 }),
      ),
      http.put(at('/api/tables/t_1/gate1'), () =>
        HttpResponse.json({ ...gateVersion(1, validGate), warnings: [], recertificationRequestId: null }),
      ),
    );
    const outcome = await applyGate(newClient(), 't_1', { name: 'g.yml', text: validGate });
    expect(outcome.kind).toBe('applied');
  });

  it('sends nothing when the rules are the current version in another formatting', async () => {
    api.use(http.get(at('/api/tables/t_1/gate1'), () => HttpResponse.json(gateVersion(4, validGate))));
    const reformatted =
      '# same rules\ncustomPredicates:\n  - { severity: HARD_FAIL, sql: "price > 0", name: price_positive }\n';
    const outcome = await applyGate(newClient(), 't_1', { name: 'g.yml', text: reformatted });
    expect(outcome).toMatchObject({ kind: 'unchanged', current: { version: 4, changed: false } });
    expect(api.seen.map((r) => r.method)).toEqual(['GET']);
  });

  it('--dry-run returns the diff and sends nothing', async () => {
    api.use(http.get(at('/api/tables/t_1/gate1'), () => HttpResponse.json(gateVersion(1, validGate))));
    const outcome = await applyGate(
      newClient(),
      't_1',
      { name: 'g.yml', text: validGate.replace('> 0', '>= 0') },
      { dryRun: true },
    );
    expect(outcome.kind).toBe('preview');
    if (outcome.kind === 'preview') expect(outcome.diff).toContain('+    sql: price >= 0');
    expect(api.seen.map((r) => r.method)).toEqual(['GET']);
  });
});

describe('diffWithServer', () => {
  it("compares the local file with the server's current version (exit 1 material), named table@vN", async () => {
    api.use(http.get(at('/api/tables/t_1/gate1'), () => HttpResponse.json(gateVersion(3, validGate))));
    const diff = await diffWithServer(
      newClient(),
      't_1',
      { kind: 'current', after: { name: 'local.yml', text: validGate.replace('> 0', '>= 0') } },
      { semantic: false },
    );
    expect(diff.identical).toBe(false);
    expect(diff.unified).toContain('--- t_1@v3');
    expect(diff.unified).toContain('+++ local.yml');
  });

  it('a table with no gate1.yml yet: the file against an empty one, different, noneApplied', async () => {
    api.use(
      http.get(at('/api/tables/t_1/gate1'), () =>
        HttpResponse.json({ error: { code: 'gate1_not_found', message: 'none' } }, { status: 404 }),
      ),
    );
    const after = { name: 'local.yml', text: validGate };
    const diff = await diffWithServer(newClient(), 't_1', { kind: 'current', after }, { semantic: false });
    expect(diff).toMatchObject({ identical: false, noneApplied: true });
    expect(diff.unified).toContain('--- t_1 (no gate1.yml yet)');
  });

  it('compares two stored versions, fetching each once', async () => {
    api.use(
      http.get(at('/api/tables/t_1/gate1/versions/v1'), () => HttpResponse.json(gateVersion(1, validGate))),
      http.get(at('/api/tables/t_1/gate1/versions/v2'), () =>
        HttpResponse.json(gateVersion(2, `# reformatted\n${validGate}`)),
      ),
    );
    const target = { kind: 'versions' as const, from: 'v1', to: 'v2' };
    const diff = await diffWithServer(newClient(), 't_1', target, { semantic: true });
    expect(diff.identical).toBe(true);
    expect(api.seen).toHaveLength(2);
  });
});

describe('gate runs and jobs', () => {
  it("Gate 3 without --baseline is refused locally with the spec's message; --sample is Gate 1 only", () => {
    const refuse = (input: Parameters<typeof gateRunRequest>[0]) => {
      try {
        gateRunRequest(input);
      } catch (error) {
        return error as CliError;
      }
      throw new Error('not refused');
    };
    const gate3 = refuse({ gate: 3 });
    expect(gate3.message).toBe('--baseline <reportId> is required for Gate 3');
    expect(gate3.exitCode).toBe(2);
    expect(refuse({ gate: 2, sample: 'head:5' }).code).toBe('sample_gate1_only');
    expect(refuse({ gate: 1, baseline: 'job_1' }).code).toBe('baseline_gate3_only');
    expect(gateRunRequest({ gate: 1, sample: 'head:5' })).toEqual({ gate: 1, sample: 'head:5' });
  });

  it('a Gate 1 run answers with the proof (200), a Gate 2 run with the queued job (202)', async () => {
    const bodies: unknown[] = [];
    api.use(
      http.post(at('/api/tables/t_1/gate-runs'), async ({ request }) => {
        const body = (await request.json()) as { gate: number };
        bodies.push(body);
        return body.gate === 1
          ? HttpResponse.json(proof(false))
          : HttpResponse.json({ job: job('QUEUED') }, { status: 202 });
      }),
    );
    const client = newClient();
    expect(await runGate(client, 't_1', { gate: 1 })).toEqual({ kind: 'proof', proof: proof(false) });
    expect(await runGate(client, 't_1', { gate: 2 })).toEqual({ kind: 'job', job: job('QUEUED') });
    expect(bodies).toEqual([{ gate: 1 }, { gate: 2 }]);
  });

  it('status and cancel send ?gate=N; result sends no gate', async () => {
    api.use(
      http.get(at('/api/gate-jobs/job_1'), () => HttpResponse.json(job('RUNNING'))),
      http.get(at('/api/gate-jobs/job_1/result'), () =>
        HttpResponse.json({ ...job('SUCCEEDED'), result: {} }),
      ),
      http.post(at('/api/gate-jobs/job_1/cancel'), () => HttpResponse.json(job('CANCELLED', 1))),
    );
    const client = newClient();
    expect(await gateJobStatus(client, 'job_1', 2)).toMatchObject({ status: 'RUNNING' });
    expect(await gateJobResult(client, 'job_1')).toMatchObject({ status: 'SUCCEEDED' });
    expect((await cancelGateJob(client, 'job_1', 1)).status).toBe('CANCELLED');
    expect(api.seen.map((r) => r.url.search)).toEqual(['?gate=2', '', '?gate=1']);
  });

  it("watchGateJob ends on a status the spec does not name (a service's TIMED_OUT), not polling for ever", async () => {
    const statuses = ['RUNNING', 'TIMED_OUT', 'SUCCEEDED'];
    api.use(
      http.get(at('/api/gate-jobs/job_1'), () =>
        HttpResponse.json({ ...job('RUNNING'), status: statuses.shift() ?? 'SUCCEEDED' }),
      ),
    );
    const last = await watchGateJob(
      newClient(),
      'job_1',
      2,
      { intervalMs: 600, sleep: async () => {} },
      () => undefined,
    );
    expect((last as { status: string }).status).toBe('TIMED_OUT');
  });

  it('watchGateJob follows a job until it ends, reporting each change once', async () => {
    const statuses: Array<'QUEUED' | 'RUNNING' | 'SUCCEEDED'> = ['QUEUED', 'QUEUED', 'RUNNING', 'SUCCEEDED'];
    api.use(
      http.get(at('/api/gate-jobs/job_1'), () => HttpResponse.json(job(statuses.shift() ?? 'SUCCEEDED'))),
    );
    const seen: string[] = [];
    const sleeps: number[] = [];
    const last = await watchGateJob(
      newClient(),
      'job_1',
      2,
      { intervalMs: 600, sleep: async (ms) => void sleeps.push(ms) },
      (record) => {
        seen.push('status' in record ? record.status : 'proof');
      },
    );
    expect(seen).toEqual(['QUEUED', 'RUNNING', 'SUCCEEDED']);
    // 0.25 s, then doubled, capped at --interval.
    expect(sleeps).toEqual([250, 500, 600]);
    expect(last).toMatchObject({ status: 'SUCCEEDED' });
    expect(api.seen.map((r) => r.url.search)).toEqual(['?gate=2', '?gate=2', '?gate=2', '?gate=2']);
  });

  it('listGateJobs reads the table’s jobs with the limit', async () => {
    const rows = [
      {
        id: 'prf_1',
        gate: 1,
        type: 'gate1-submit',
        status: 'PASSED',
        startedAt: 'x',
        endedAt: 'x',
        proof: 'prf_1',
      },
    ];
    api.use(
      http.get(at('/api/tables/t_1/gate-jobs'), () => HttpResponse.json({ tableId: 't_1', jobs: rows })),
    );
    expect(await listGateJobs(newClient(), 't_1', 5)).toEqual(rows);
    expect(api.seen.map((r) => r.url.search)).toEqual(['?limit=5']);
  });

  it('a 409 on result (job not terminal) reaches the caller as the ApiError', async () => {
    api.use(
      http.get(at('/api/gate-jobs/job_1/result'), () =>
        HttpResponse.json({ error: { code: 'job_not_terminal', message: 'still running' } }, { status: 409 }),
      ),
    );
    await expect(gateJobResult(newClient(), 'job_1')).rejects.toMatchObject({
      status: 409,
      code: 'job_not_terminal',
    });
  });

  it('suggest returns the yaml and the justifications apart', async () => {
    const body = {
      tableId: 't_1',
      yaml: validGate,
      suggestions: [{ kind: 'custom', name: 'price_positive', column: 'price', justification: 'all > 0' }],
      notes: [],
      profile: [],
    };
    api.use(http.post(at('/api/tables/t_1/gate1/suggestions'), () => HttpResponse.json(body)));
    expect(await suggestGate(newClient(), 't_1')).toEqual(body);
  });
});

describe('certification', () => {
  it('refuses a static token from --token, SERVICE_TOKEN or a profile, naming gds auth login', () => {
    for (const [tokenSource, named] of [
      ['flag', '--token'],
      ['env', 'SERVICE_TOKEN'],
      ['profile:ci', 'profile ci'],
    ] as const) {
      let error: CliError | undefined;
      try {
        requireInteractiveSession({ tokenKind: 'static', tokenSource });
      } catch (e) {
        error = e as CliError;
      }
      expect(error?.exitCode).toBe(3);
      expect(error?.message).toContain(named);
      expect(error?.suggestion).toContain('gds auth login');
    }
    expect(() =>
      requireInteractiveSession({ tokenKind: 'session', tokenSource: 'profile:me' }),
    ).not.toThrow();
  });

  it('refuses an integration token saved with --save-profile, saying so', () => {
    expect(() => requireInteractiveSession({ tokenKind: 'integration', tokenSource: 'profile:ci' })).toThrow(
      'the token from profile ci (stored with gds tokens issue --save-profile) is an integration token',
    );
  });

  it('computes the evidence sha256, size and file name locally and sends only those', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gds-evidence-'));
    const path = join(dir, 'review.pdf');
    const content = Buffer.from('%PDF evidence of review\n'.repeat(1000));
    await writeFile(path, content);
    let body: unknown;
    api.use(
      http.post(at('/api/tables/t_1/semantic-contract/certify'), async ({ request }) => {
        body = await request.json();
        return HttpResponse.json({
          contract: {
            id: 'sc_1',
            status: 'CERTIFIED',
            certifiedAt: '2026-01-01T00:00:00.000Z',
            grain: '',
            grainType: null,
            grainKeyColumns: [],
          },
        });
      }),
    );
    const evidence = await evidenceOf(path);
    await certifyTable(newClient(), 't_1', { note: 'ok', evidence });
    expect(body).toEqual({
      note: 'ok',
      evidenceFileName: 'review.pdf',
      evidenceHash: createHash('sha256').update(content).digest('hex'),
      evidenceSize: content.length,
    });
    const missing = await refusal(evidenceOf(join(dir, 'nope.pdf')));
    expect(missing.exitCode).toBe(2);
  });

  it('reject sends the reason; a blank reason is refused with nothing sent', async () => {
    const blank = await refusal(rejectTable(newClient(), 't_1', '  '));
    expect(blank.exitCode).toBe(2);
    expect(api.seen).toEqual([]);
    let body: unknown;
    api.use(
      http.post(at('/api/tables/t_1/reject'), async ({ request }) => {
        body = await request.json();
        return HttpResponse.json({ tableId: 't_1', state: 'QUARANTINED' });
      }),
    );
    expect(await rejectTable(newClient(), 't_1', 'nulls')).toEqual({ tableId: 't_1', state: 'QUARANTINED' });
    expect(body).toEqual({ reason: 'nulls' });
  });
});

describe('versions, config and intent', () => {
  it('restore sends {to, reason, env}; list unwraps the versions', async () => {
    let body: unknown;
    api.use(
      http.get(at('/api/tables/t_1/versions'), () => HttpResponse.json({ tableId: 't_1', versions: [] })),
      http.post(at('/api/tables/t_1/versions/restore'), async ({ request }) => {
        body = await request.json();
        return HttpResponse.json({ error: { code: 'env_mismatch', message: 'no' } }, { status: 400 });
      }),
    );
    const client = newClient();
    expect(await listVersions(client, 't_1')).toEqual([]);
    await expect(restoreVersion(client, 't_1', { to: 2, reason: 'r', env: 'prod' })).rejects.toMatchObject({
      status: 400,
    });
    expect(body).toEqual({ to: 2, reason: 'r', env: 'prod' });
  });

  it('config set sends {value} to the key; history unwraps the changes', async () => {
    let body: unknown;
    const entry = {
      key: 'gate_mode',
      value: 'ADVISORY',
      allowedValues: [],
      updatedAt: null,
      updatedBy: null,
      updatedByEmail: null,
    };
    api.use(
      http.put(at('/api/config/gate_mode'), async ({ request }) => {
        body = await request.json();
        return HttpResponse.json(entry);
      }),
      http.get(at('/api/config/gate_mode/history'), () =>
        HttpResponse.json({ key: 'gate_mode', changes: [] }),
      ),
    );
    const client = newClient();
    expect(await setConfig(client, 'gate_mode', 'ADVISORY')).toEqual(entry);
    expect(body).toEqual({ value: 'ADVISORY' });
    expect(await configHistory(client, 'gate_mode')).toEqual([]);
  });

  it('intentRequest upper-cases the enumerations, dedupes consumers and sends only what was given', () => {
    expect(intentRequest({ intent: 'metric', allowedConsumers: 'human, ai,HUMAN' })).toEqual({
      intent: 'METRIC',
      allowedConsumers: ['HUMAN', 'AI'],
    });
    expect(intentRequest({ grainType: 'entity', grainKey: 'a, b', meaning: '' })).toEqual({
      grainType: 'entity',
      grainKeyColumns: ['a', 'b'],
      meaning: '',
    });
    const refuse = (input: Parameters<typeof intentRequest>[0]) => {
      try {
        intentRequest(input);
      } catch (error) {
        return error as CliError;
      }
      throw new Error('not refused');
    };
    expect(refuse({ intent: 'bogus' }).suggestion).toBe(
      'Use one of: METRIC, DECISION, OPERATIONAL, EXPLORATORY.',
    );
    expect(refuse({ allowedConsumers: 'HUMAN,ROBOT' }).message).toContain('HUMAN, AI, AUTOMATION, EXTERNAL');
    expect(refuse({ grainKey: 'a' }).message).toBe('--grain-type and --grain-key go together.');
    // §2.6's example of a structured grain type is ONE_PER_ENTITY: the hints teach that value.
    expect(refuse({ grainKey: 'a' }).suggestion).toBe(
      'Give both, e.g. --grain-type ONE_PER_ENTITY --grain-key customer_id,region',
    );
    expect(refuse({ grainType: ' ', grainKey: 'a' }).suggestion).toBe(
      'e.g. --grain-type ONE_PER_ENTITY --grain-key customer_id',
    );
    expect(refuse({}).exitCode).toBe(2);
  });

  it('setIntent PATCHes and returns the live contract', async () => {
    const contract = {
      id: 'sc_1',
      status: 'CERTIFIED',
      certifiedAt: null,
      grain: '',
      grainType: null,
      grainKeyColumns: [],
      intent: 'METRIC',
      allowedConsumers: [],
      meaning: '',
    };
    api.use(
      http.get(at('/api/tables/t_1/semantic-contract'), () =>
        HttpResponse.json({ contract: { ...contract, intent: 'DECISION' } }),
      ),
      http.patch(at('/api/tables/t_1/semantic-contract'), () => HttpResponse.json({ contract })),
    );
    expect(await setIntent(newClient(), 't_1', { intent: 'METRIC' })).toEqual({ kind: 'set', contract });
  });

  it('setIntent sends the revision it compared with as If-Match, and reports changed: false as unchanged', async () => {
    const contract = {
      id: 'sc_1',
      status: 'CERTIFIED',
      certifiedAt: null,
      grain: '',
      grainType: null,
      grainKeyColumns: [],
      intent: 'METRIC',
      allowedConsumers: [],
      meaning: '',
      revision: 7,
    };
    let ifMatch: string | null = null;
    api.use(
      http.get(at('/api/tables/t_1/semantic-contract'), () =>
        HttpResponse.json({ contract: { ...contract, intent: 'DECISION' } }),
      ),
      http.patch(at('/api/tables/t_1/semantic-contract'), ({ request }) => {
        ifMatch = request.headers.get('if-match');
        return HttpResponse.json({ contract: { ...contract, revision: 8 }, changed: false });
      }),
    );
    const outcome = await setIntent(newClient(), 't_1', { intent: 'METRIC' });
    expect(ifMatch).toBe('7');
    expect(outcome).toEqual({ kind: 'unchanged', contract: { ...contract, revision: 8 } });
  });

  it('setIntent sends nothing when the contract already holds the values; --dry-run shows the diff', async () => {
    const contract = {
      id: 'sc_1',
      status: 'CERTIFIED',
      certifiedAt: null,
      grain: 'one row per order',
      grainType: null,
      grainKeyColumns: [],
      intent: 'METRIC',
      allowedConsumers: ['HUMAN'],
      meaning: '',
    };
    api.use(http.get(at('/api/tables/t_1/semantic-contract'), () => HttpResponse.json({ contract })));
    const same = await setIntent(newClient(), 't_1', { intent: 'METRIC', allowedConsumers: ['HUMAN'] });
    expect(same).toEqual({ kind: 'unchanged', contract });
    // The allowed consumer classes are a set (spec §2.6): the same classes in another order are no change.
    const held = { ...contract, allowedConsumers: ['HUMAN', 'AI'] };
    api.use(http.get(at('/api/tables/t_1/semantic-contract'), () => HttpResponse.json({ contract: held })));
    const reordered = await setIntent(newClient(), 't_1', { allowedConsumers: ['AI', 'HUMAN'] });
    expect(reordered).toEqual({ kind: 'unchanged', contract: held });
    const preview = await setIntent(newClient(), 't_1', { intent: 'DECISION' }, { dryRun: true });
    expect(preview.kind).toBe('preview');
    if (preview.kind === 'preview') {
      expect(preview.diff).toContain('-intent: "METRIC"');
      expect(preview.diff).toContain('+intent: "DECISION"');
    }
    expect(api.seen.map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);
  });

  it('setIntent sends the values even when they are held, for a caller the service says may not set them', async () => {
    const contract = {
      id: 'sc_1',
      status: 'CERTIFIED',
      certifiedAt: null,
      grain: '',
      grainType: null,
      grainKeyColumns: [],
      intent: 'METRIC',
      allowedConsumers: [],
      meaning: '',
    };
    api.use(
      http.get(at('/api/tables/t_1/semantic-contract'), () =>
        HttpResponse.json({ contract, maySetIntent: false }),
      ),
      http.patch(at('/api/tables/t_1/semantic-contract'), () =>
        HttpResponse.json(
          {
            error: {
              code: 'forbidden',
              message: "A STEWARD or above may set the intent of a table you don't own",
            },
          },
          { status: 403 },
        ),
      ),
    );
    await expect(setIntent(newClient(), 't_1', { intent: 'METRIC' })).rejects.toMatchObject({ status: 403 });
    expect(api.seen.map((r) => r.method)).toEqual(['GET', 'PATCH']);
  });
});

describe('promotion and bundles', () => {
  const body = {
    format: 'gds-bundle',
    formatVersion: 1,
    table: { name: 'orders', mode: 'MODE_A', environmentLabel: 'dev', source: 'analytics_dev.orders' },
    artifact: { filename: 'orders.yml', content: 'table: orders\n', mimeType: 'yaml' },
    createdAt: '2026-01-01T00:00:00.000Z',
  } as const;
  const sealed = { ...body, sha256: bundleDigest(body) } as unknown as Bundle;
  const result = {
    tableId: 't_2',
    environmentLabel: 'staging',
    connectorId: 'con_s',
    governanceId: 't_2',
    trackingUrl: 'http://x/t_2',
    job: { id: 'job_2', type: 'gate-baseline-auto', status: 'QUEUED' },
  };
  const connectors = [
    { id: 'con_d', name: 'dev', type: 'postgres', status: 'ACTIVE', environmentLabel: 'dev' },
    { id: 'con_old', name: 'old', type: 'postgres', status: 'INACTIVE', environmentLabel: 'staging' },
    { id: 'con_s', name: 'stg', type: 'postgres', status: 'ACTIVE', environmentLabel: 'staging' },
  ];

  it('parseBundle accepts an intact bundle and refuses a changed one (exit 2)', () => {
    expect(parseBundle(JSON.stringify(sealed, null, 2), 'b.json')).toEqual(sealed);
    const tampered = JSON.stringify({ ...sealed, artifact: { ...body.artifact, content: 'table: evil\n' } });
    for (const [text, code] of [
      [tampered, 'bundle_tampered'],
      ['{"format":"gds-bundle"}', 'bundle_tampered'],
      ['not json', 'invalid_bundle'],
      ['[1]', 'invalid_bundle'],
    ] as const) {
      let error: CliError | undefined;
      try {
        parseBundle(text, 'b.json');
      } catch (e) {
        error = e as CliError;
      }
      expect(error?.exitCode).toBe(2);
      expect(error?.code).toBe(code);
    }
  });

  it('importBundle registers on the first active connector of the target environment', async () => {
    let posted: Record<string, unknown> = {};
    api.use(
      http.get(at('/api/connectors'), () => HttpResponse.json({ connectors })),
      http.post(at('/api/bundles'), async ({ request }) => {
        posted = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json(result, { status: 202 });
      }),
    );
    expect(await importBundle(newClient(), sealed, 'staging')).toEqual({ kind: 'promoted', result });
    expect(posted).toEqual({ ...sealed, connectorId: 'con_s' });
  });

  it('importBundle without a connector in the environment says so (exit 5) and posts nothing', async () => {
    api.use(http.get(at('/api/connectors'), () => HttpResponse.json({ connectors })));
    const error = await refusal(importBundle(newClient(), sealed, 'production'));
    expect(error.exitCode).toBe(5);
  });

  it('relayPromotion reads with the source credentials and registers with the destination ones', async () => {
    api.use(
      http.get(at('/api/tables/t_1/bundle'), () => HttpResponse.json(sealed)),
      http.get(at('/api/connectors', DEST), () => HttpResponse.json({ connectors })),
      http.post(at('/api/bundles', DEST), () => HttpResponse.json(result, { status: 202 })),
    );
    const source = newClient(BASE, 'cli_sourceToken0000000001');
    const destination = newClient(DEST, 'cli_destToken00000000001');
    expect(await relayPromotion(source, destination, 't_1', 'staging')).toEqual({ kind: 'promoted', result });
    expect(api.seen.map((r) => [r.url.origin, r.headers.get('authorization')])).toEqual([
      ['https://api.test', 'Bearer cli_sourceToken0000000001'],
      [DEST, 'Bearer cli_destToken00000000001'],
      [DEST, 'Bearer cli_destToken00000000001'],
    ]);
  });

  it('promoteTable posts {to}', async () => {
    let posted: unknown;
    api.use(
      http.post(at('/api/tables/t_1/promotions'), async ({ request }) => {
        posted = await request.json();
        return HttpResponse.json(result, { status: 202 });
      }),
    );
    expect(await promoteTable(newClient(), 't_1', 'staging')).toEqual({ kind: 'promoted', result });
    expect(posted).toEqual({ to: 'staging' });
  });

  it('promoteTable onto a table already there: exit 6 naming --replace <id>; --replace and --dry-run are sent', async () => {
    const posted: unknown[] = [];
    const ifMatch: Array<string | null> = [];
    api.use(
      // --replace reads the replaced table's definition version first, and sends it as If-Match.
      http.get(at('/api/tables/t_9/definition'), () =>
        HttpResponse.json({
          tableId: 't_9',
          governanceId: 't_9',
          name: 'orders_staging',
          environmentLabel: 'staging',
          connectorId: 'con_s',
          state: 'QUARANTINED',
          definitionVersion: 4,
          definition: null,
        }),
      ),
      http.post(at('/api/tables/t_1/promotions'), async ({ request }) => {
        const body = (await request.json()) as Record<string, unknown>;
        posted.push(body);
        ifMatch.push(request.headers.get('if-match'));
        if (body.dryRun === true) return HttpResponse.json({ changed: true, diff: '+x\n' });
        if (body.replaceId === 't_9') return HttpResponse.json({ ...result, changed: false });
        return HttpResponse.json(
          {
            error: {
              code: 'promotion_target_exists',
              message: "A governance artifact named 'orders_staging' already exists in staging (t_9)",
              details: { governanceId: 't_9' },
            },
          },
          { status: 409 },
        );
      }),
    );
    const error = await refusal(promoteTable(newClient(), 't_1', 'staging'));
    expect(error).toMatchObject({ exitCode: 6, code: 'promotion_target_exists' });
    expect(error.suggestion).toContain('--replace t_9');
    expect(await promoteTable(newClient(), 't_1', 'staging', { dryRun: true })).toEqual({
      kind: 'preview',
      changed: true,
      diff: '+x\n',
    });
    expect(await promoteTable(newClient(), 't_1', 'staging', { replaceId: 't_9' })).toMatchObject({
      kind: 'unchanged',
    });
    expect(posted).toEqual([
      { to: 'staging' },
      { to: 'staging', dryRun: true },
      { to: 'staging', replaceId: 't_9' },
    ]);
    expect(ifMatch).toEqual([null, null, '4']);
  });

  it('checkBundleTable refuses a bundle of another table than the one named (exit 2 naming both)', () => {
    const withId = { ...sealed, table: { ...sealed.table, id: 't_1' } } as Bundle;
    expect(() => checkBundleTable(withId, 't_1', 'b.json')).not.toThrow();
    expect(() => checkBundleTable(sealed, 'orders', 'b.json')).not.toThrow();
    // The line gds prints after `--bundle-out orders` names the table: a bundle with an id takes its name too.
    expect(() => checkBundleTable(withId, 'orders', 'b.json')).not.toThrow();
    expect(() => checkBundleTable(withId, 'ORDERS', 'b.json')).not.toThrow();
    for (const [bundle, named] of [
      [withId, 't_2'],
      [sealed, 't_2'],
    ] as const) {
      let error: CliError | undefined;
      try {
        checkBundleTable(bundle, named, 'b.json');
      } catch (e) {
        error = e as CliError;
      }
      expect(error).toMatchObject({ exitCode: 2, code: 'bundle_table_mismatch' });
      expect(error?.message).toContain('t_2');
      expect(error?.message).toContain(bundle === withId ? 't_1' : 'orders');
    }
  });
});
