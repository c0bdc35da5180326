// Gate endpoints of a table: gate1.yml (get, apply, versions), Gate 1 dry runs and Gate 2/3 jobs
// (gate-runs), submissions (the steward handoff) and suggestions. A person's session or CLI token.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type {
  Gate1ApplyRequest,
  Gate1ApplyResult,
  Gate1ProofBody,
  Gate1Suggestions,
  Gate1Version,
  Gate1VersionList,
  GateRunRequest,
  GateSubmitRequest,
} from '../../contract/types.js';
import * as yaml from 'yaml';
import { sameGateRules } from '../../core/gate-diff.js';
import { validateGate1 } from '../../core/gate1/index.js';
import type { SessionCaller } from '../auth/caller.js';
import { requireSession } from '../auth/caller.js';
import { checkGate1Bounds } from '../artifact-bounds.js';
import { recordAudit } from '../audit.js';
import type { AppContext } from '../context.js';
import { guardBeforeBody } from '../context.js';
import { parseBody } from '../contract.js';
import type { Queryable } from '../db/handle.js';
import { certifiedViewName } from '../certification/view-name.js';
import { badRequest, HttpError, notFound } from '../errors.js';
import { checkIds } from '../input-rule.js';
import type { Query } from '../query.js';
import { booleanParam } from '../query.js';
import { applyTrigger, governedTransaction } from '../governance/engine.js';
import { notifySteward } from '../governance/notifications.js';
import type { Keyed } from '../idempotency.js';
import { answerOf, applyOnce, idempotencyKeyOf, requestHash, whileInFlight } from '../idempotency.js';
import type { Job } from '../governance/jobs.js';
import { enqueueJob } from '../governance/jobs.js';
import { gateTableFor } from '../gates/access.js';
import { tableInScope } from '../certification/access.js';
import { checkOwner, projectParam } from '../governance/definitions.js';
import { checkVersion, expectedVersion } from '../governance/precondition.js';
import { registerGateJobHandlers } from '../gates/detached.js';
import type { Gate1Proof } from '../gates/gate1-runner.js';
import { runGate1 } from '../gates/gate1-runner.js';
import { storeGate1Rules } from '../gates/gate1-apply.js';
import { currentGate1, gate1Version, listGate1Versions } from '../gates/gate1-store.js';
import { jobBody } from '../gates/job-body.js';
import { isProofFresh, latestSubmitProof, persistSubmitProof, storedProofBody } from '../gates/proofs.js';
import { parseSample } from '../gates/sample.js';
import { suggestGate1 } from '../gates/suggest.js';
import type { GateTable } from '../gates/table.js';
import { loadGateTable } from '../gates/table.js';
import { loadTable } from '../governance/tables.js';

type TableRequest = FastifyRequest<{ Params: { tableId: string } }>;
type VersionRequest = FastifyRequest<{ Params: { tableId: string; version: string } }>;

export function gateRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerGateJobHandlers();

  app.get('/api/tables/:tableId/gate1', async (request: TableRequest) => {
    const { table } = await gateTableFor(ctx, request);
    const current = await currentGate1(ctx.db, table.id);
    if (!current) {
      throw notFound(
        'gate1_not_found',
        `No gate1.yml has been applied to table ${table.id} yet; draft one with gds gate suggest ${table.id} and apply it with gds gate apply ${table.id} -f gate1.yml.`,
        { tableId: table.id },
      );
    }
    const body: Gate1Version = { tableId: table.id, ...current };
    return body;
  });

  app.put(
    '/api/tables/:tableId/gate1',
    guardBeforeBody(requireSession, tableInScope),
    async (request: TableRequest) => {
      const { caller, table } = await gateTableFor(ctx, request);
      const { content } = parseBody<Gate1ApplyRequest>('Gate1ApplyRequest', request.body);
      return applyGate1(
        ctx,
        caller,
        table,
        content,
        () => expectedVersion(request),
        projectParam(request.query),
      );
    },
  );

  app.get('/api/tables/:tableId/gate1/versions', async (request: TableRequest) => {
    const { table } = await gateTableFor(ctx, request);
    const body: Gate1VersionList = { tableId: table.id, versions: await listGate1Versions(ctx.db, table.id) };
    return body;
  });

  app.get('/api/tables/:tableId/gate1/versions/:version', async (request: VersionRequest) => {
    const { table } = await gateTableFor(ctx, request);
    const match = /^v?(\d{1,9})$/.exec(request.params.version);
    if (!match) {
      throw badRequest(
        'invalid_version',
        `"${request.params.version}" is not a version; write a number such as 3 or v3.`,
        {
          version: request.params.version,
        },
      );
    }
    const found = await gate1Version(ctx.db, table.id, Number(match[1]));
    if (!found) {
      const latest = table.versions.gate1;
      const has = latest === 0 ? 'none yet' : latest === 1 ? '1 (v1)' : `${latest} (v1 to v${latest})`;
      throw notFound(
        'gate1_version_not_found',
        `Table ${table.id} has no gate1.yml version ${match[1]}; it has ${has}.`,
        { tableId: table.id, version: Number(match[1]), latest: table.versions.gate1 },
      );
    }
    const body: Gate1Version = { tableId: table.id, ...found };
    return body;
  });

  app.post(
    '/api/tables/:tableId/gate1/suggestions',
    guardBeforeBody(requireSession, tableInScope),
    async (request: TableRequest) => {
      const { table } = await gateTableFor(ctx, request);
      const body: Gate1Suggestions = await suggestGate1(ctx.db, table);
      return body;
    },
  );

  app.post(
    '/api/tables/:tableId/gate-runs',
    guardBeforeBody(requireSession, tableInScope),
    async (request: TableRequest, reply) => {
      const { caller, table } = await gateTableFor(ctx, request);
      const body = parseBody<GateRunRequest>('GateRunRequest', request.body ?? {});
      const gate = body.gate ?? 1;
      if (gate !== 1 && body.sample !== undefined) {
        throw badRequest('sample_gate1_only', `--sample applies to Gate 1 only; drop it for Gate ${gate}.`, {
          gate,
        });
      }
      if (gate !== 3 && body.baseline !== undefined) {
        throw badRequest(
          'baseline_gate3_only',
          `--baseline applies to Gate 3 only; drop it for Gate ${gate}.`,
          { gate },
        );
      }
      const sample = body.sample === undefined ? undefined : parseSample(body.sample);
      if (gate === 1) {
        await governedTransaction(ctx.db, ctx.clock, (tx) =>
          applyTrigger(tx, {
            table,
            trigger: 'gate_run',
            context: { mode: table.mode, tableName: table.name },
            actor: caller,
            clock: ctx.clock,
            details: { sample: body.sample ?? null },
          }),
        );
        const proof = await runGate1(ctx.db, table, { clock: ctx.clock, ...(sample ? { sample } : {}) });
        return reply.code(200).send(proofBody(proof, { id: null, kind: 'run' }));
      }
      const job = await governedTransaction(ctx.db, ctx.clock, (tx) =>
        enqueueGateJob(ctx, tx, caller, table, gate, body.baseline),
      );
      return reply.code(202).send({ job: jobBody(job) });
    },
  );

  app.post(
    '/api/tables/:tableId/gate-submissions',
    guardBeforeBody(requireSession, tableInScope),
    async (request: TableRequest, reply) => {
      const { caller, table } = await gateTableFor(ctx, request);
      const { ifNotCertified = false } = parseBody<GateSubmitRequest>(
        'GateSubmitRequest',
        request.body ?? {},
      );
      // `gds apply --submit` submits only its project's tables: checked before the scan, and again under the lock.
      const project = projectParam(request.query);
      // Ours, not the spec's (whose submission is always a full scan): `gds apply --submit` of a table it
      // planned as a stale submission submits it only while it still is one.
      const ifStale = booleanParam((request.query ?? {}) as Query, 'ifStale', false);
      checkOwner(table, project);
      // Idempotency-Key: a submission sent again with its key is answered as the first time, before the scan
      // (the steward is notified once); claimed again in the writing transaction, so two at once file one.
      const key = idempotencyKeyOf(request.headers['idempotency-key']);
      const keyed: Keyed | null =
        key === undefined
          ? null
          : {
              table: 'gds.gate_submission_keys',
              workspaceId: caller.workspaceId,
              key,
              hash: requestHash([caller.userId, table.id, project ?? null, ifStale, ifNotCertified]),
              what: 'submission',
            };
      const answered = keyed === null ? null : await answerOf<SubmitAnswer>(ctx.db, keyed);
      if (answered !== null)
        return reply.code(answered.status).header('idempotent-replayed', 'true').send(answered.body);
      // --if-not-certified: a CERTIFIED table is left as it is, checked before the scan (so it costs
      // nothing) and again in the writing transaction (so a certification meanwhile is not undone).
      if (ifNotCertified) await refuseCertified(ctx.db, table);
      // ifStale: a table waiting for review on a fresh proof is left as it is, checked likewise (a
      // submission committed during the scan is not followed by a second one, nor its steward notified twice).
      const before = ifStale ? await freshSubmission(ctx.db, table) : null;
      if (before !== null) return reply.code(200).send(before);
      const scanAndSubmit = async () => {
        const proof = await runGate1(ctx.db, table, { clock: ctx.clock });
        return governedTransaction(ctx.db, ctx.clock, async (tx) => {
          const submit = () => submitScanned(tx, proof);
          return keyed === null
            ? { response: await submit(), replayed: false }
            : applyOnce(tx, keyed, ctx.clock(), submit);
        });
      };
      // With a key, one scan at a time: a retry arriving while the first attempt still scans (its connection
      // cut by a proxy's timeout) waits for that answer instead of scanning the table again beside it.
      const outcome =
        keyed === null
          ? { done: await scanAndSubmit() }
          : await whileInFlight<SubmitAnswer, Awaited<ReturnType<typeof scanAndSubmit>>>(
              ctx.db,
              'gds.gate_submission_scans',
              keyed,
              ctx.clock,
              scanAndSubmit,
            );
      const { response: answer, replayed } =
        'replay' in outcome ? { response: outcome.replay, replayed: true } : outcome.done;
      if (replayed) void reply.header('idempotent-replayed', 'true');
      return reply.code(answer.status).send(answer.body);

      async function submitScanned(tx: Queryable, proof: Gate1Proof): Promise<SubmitAnswer> {
        // The table's row lock, as the gate1 PUT takes it: a certify committing meanwhile is read here
        // (and refused under --if-not-certified) instead of being overwritten by this transition.
        const current = await loadGateTable(tx, caller.workspaceId, table.id, { lock: true });
        checkOwner(current, project);
        if (ifNotCertified) await refuseCertified(tx, current);
        const fresh = ifStale ? await freshSubmission(tx, current) : null;
        if (fresh !== null) return { status: 200, body: fresh };
        if (!isProofFresh(proof, current)) {
          throw new HttpError(
            409,
            'table_changed',
            `Table ${table.id}'s definition, gate1.yml, data or contract changed during the scan; nothing was submitted. Submit again.`,
            { tableId: table.id, scanned: proof.tableVersion, current: current.versions },
          );
        }
        const { effects, next } = await applyTrigger(tx, {
          table: current,
          trigger: 'gate_submitted',
          context: { mode: current.mode, tableName: current.name },
          actor: caller,
          clock: ctx.clock,
          details: {
            passed: proof.passed,
            failedPredicates: proof.failedPredicates,
            tableVersion: proof.tableVersion,
          },
        });
        let proofId: string | null = null;
        let notificationId: string | undefined;
        for (const effect of effects) {
          if (effect.type === 'persist_proof')
            proofId = (await persistSubmitProof(tx, proof, caller.userId)).id;
          else if (effect.type === 'notify_steward')
            notificationId = await notifyOfSubmission(ctx, tx, caller, current, proof, proofId);
        }
        // Leaving CERTIFIED drops the certified view (engine.ts): the answer says so.
        const viewWithdrawn = current.state === 'CERTIFIED' && next !== 'CERTIFIED';
        const body: Gate1ProofBody = {
          ...proofBody(proof, { id: proofId, kind: 'submit' }),
          state: next,
          ...(notificationId ? { notificationId } : {}),
          viewWithdrawn,
          ...(viewWithdrawn ? { withdrawnView: await certifiedViewName(tx, current) } : {}),
        };
        return { status: 201, body };
      }
    },
  );
}

/** A submission's answer: 201 and the proof, or 200 and the fresh proof it left as it was (`ifStale`). */
interface SubmitAnswer {
  status: number;
  body: Gate1ProofBody;
}

/**
 * The answer of a submission `ifStale` of a table waiting for review on a fresh proof: that proof, and
 * `skipped: 'fresh'` (nothing scanned, written or notified); null when the table is not such a one.
 */
async function freshSubmission(q: Queryable, table: GateTable): Promise<Gate1ProofBody | null> {
  if (table.state !== 'PENDING_REVIEW') return null;
  const proof = await latestSubmitProof(q, table.id);
  if (proof === null || !isProofFresh(proof, table)) return null;
  return { ...storedProofBody(proof), state: table.state, skipped: 'fresh' };
}

/** 409 `table_certified` (details: state, certifiedView) when the table is CERTIFIED. */
async function refuseCertified(q: Queryable, table: GateTable): Promise<void> {
  if (table.state !== 'CERTIFIED') return;
  const certifiedView = await certifiedViewName(q, table);
  throw new HttpError(
    409,
    'table_certified',
    `Table ${table.name} (${table.id}) is CERTIFIED; nothing was submitted, and its certified view ${certifiedView} stays published.`,
    { tableId: table.id, state: table.state, certifiedView },
  );
}

function proofBody(proof: Gate1Proof, stored: { id: string | null; kind: 'run' | 'submit' }): Gate1ProofBody {
  return { ...stored, ...proof };
}

async function notifyOfSubmission(
  ctx: AppContext,
  tx: Queryable,
  caller: SessionCaller,
  table: GateTable,
  proof: Gate1Proof,
  proofId: string | null,
): Promise<string> {
  const outcome = proof.passed ? 'Gate 1 passed' : `Gate 1 failed (${proof.failedPredicates.join(', ')})`;
  const notificationId = await notifySteward(tx, {
    table,
    kind: 'gate_submitted',
    message: `Table ${table.name} was submitted for review: ${outcome}.`,
    details: { proofId, submittedBy: caller.userId },
    clock: ctx.clock,
  });
  await recordAudit(tx, ctx.clock, {
    workspaceId: table.workspaceId,
    userId: caller.userId,
    tableId: table.id,
    action: 'STEWARD_NOTIFIED',
    resource: 'gate_proof',
    environmentLabel: table.environmentLabel,
    gateMode: table.gateMode,
    details: { notificationId, proofId },
  });
  return notificationId;
}

async function enqueueGateJob(
  ctx: AppContext,
  tx: Queryable,
  caller: SessionCaller,
  table: GateTable,
  gate: 2 | 3,
  baseline: string | undefined,
): Promise<Job> {
  // Under the table's lock, read again: a delete committed since the route read it leaves no job queued for a
  // table that is gone (404, as the route answers a deleted table), and one after it cancels this job.
  await loadTable(tx, table.workspaceId, table.id, { lock: true });
  const { effects } = await applyTrigger(tx, {
    table,
    trigger: 'gate_run_detached',
    context: {
      mode: table.mode,
      tableName: table.name,
      gate,
      ...(baseline ? { baselineReportId: baseline } : {}),
    },
    actor: caller,
    clock: ctx.clock,
    details: { gate, ...(baseline ? { baselineReportId: baseline } : {}) },
  });
  if (gate === 3 && baseline) await assertBaselineReady(tx, table, baseline);
  let job: Job | null = null;
  for (const effect of effects) {
    if (effect.type !== 'enqueue_detached_job') continue;
    job = await enqueueJob(tx, {
      workspaceId: table.workspaceId,
      tableId: table.id,
      type: gate === 2 ? 'gate2' : 'gate3',
      createdBy: caller.userId,
      clock: ctx.clock,
      params: gate === 3 && baseline ? { baselineReportId: baseline } : {},
    });
  }
  if (!job) throw new Error('gate_run_detached enqueued no job');
  return job;
}

/** A Gate 3 baseline is a SUCCEEDED auto-baseline job of this table: 404 when unknown, 409 until it succeeds. */
async function assertBaselineReady(tx: Queryable, table: GateTable, baseline: string): Promise<void> {
  checkIds({ baseline });
  const [row] = await tx.query<{ status: string }>(
    `SELECT status FROM gds.jobs WHERE id = $1 AND table_id = $2 AND type = 'gate-baseline-auto'`,
    [baseline, table.id],
  );
  if (!row) {
    throw notFound(
      'baseline_not_found',
      `No baseline report ${baseline} exists for table ${table.id}; use the id of its gate-baseline-auto job (gds gate jobs ${table.id} lists them).`,
      { tableId: table.id, baseline },
    );
  }
  if (row.status !== 'SUCCEEDED') {
    throw new HttpError(
      409,
      'baseline_not_ready',
      `The baseline report ${baseline} is ${row.status}, not SUCCEEDED; wait for it (gds gate status ${baseline} --gate 1) or use another.`,
      { baseline, status: row.status },
    );
  }
}

/**
 * Validates and stores `content` as the table's gate1.yml (PUT .../gate1, and each item of POST
 * /api/artifacts/batch): nothing when it holds the same rules; 412 when `expectedOf()` is given and is not the
 * current version; 409 `owned_elsewhere` when `project` is given and the table is not that project's. The caller
 * and the table's environment are checked before (gateTableFor, gateTableOf).
 */
export async function applyGate1(
  ctx: AppContext,
  caller: SessionCaller,
  table: GateTable,
  content: string,
  expectedOf: () => number | undefined,
  project?: string,
): Promise<Gate1ApplyResult> {
  checkGate1Bounds(content);
  const { diagnostics } = validateGate1(content, {
    fileName: 'gate1.yml',
    columns: table.columns.map((c) => c.name),
  });
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) {
    throw badRequest(
      'invalid_gate1',
      `gate1.yml has ${errors.length} error${errors.length === 1 ? '' : 's'}; nothing was stored. Fix them (each is in details.diagnostics) and apply again.`,
      { diagnostics },
    );
  }
  const expected = expectedOf();
  return governedTransaction(ctx.db, ctx.clock, async (tx) => {
    // The table's row lock: parallel applies of one table compare and write one after another.
    const locked = await loadGateTable(tx, caller.workspaceId, table.id, { lock: true });
    checkOwner(locked, project);
    const current = await currentGate1(tx, locked.id);
    if (current !== null && sameGateRules(yaml, current.content, content)) {
      const unchanged: Gate1ApplyResult = {
        tableId: locked.id,
        version: current.version,
        createdBy: current.createdBy,
        createdAt: current.createdAt,
        warnings: [],
        recertificationRequestId: null,
        changed: false,
      };
      return unchanged;
    }
    checkVersion(
      `gate1.yml of ${locked.id}`,
      current?.version ?? 0,
      expected,
      `Compare with gds gate diff ${locked.id} -f <file> and apply again.`,
    );
    const { version, createdAt, recertificationRequestId } = await storeGate1Rules(tx, {
      table: locked,
      content,
      caller,
      clock: ctx.clock,
    });
    const body: Gate1ApplyResult = {
      tableId: locked.id,
      version,
      createdBy: caller.userId,
      createdAt,
      warnings: diagnostics.filter(
        (d) => d.severity === 'warning',
      ) as unknown as Gate1ApplyResult['warnings'],
      recertificationRequestId,
      changed: true,
    };
    return body;
  });
}
