// How gate proofs and gate jobs are shown: a table of checks with pass/fail for a Gate 1 proof, a few
// labelled lines for a job. Under --json the object itself is the one NDJSON line.
import type { Gate1ProofBody, GateJobBody, Schema } from '../contract/types.js';
import type { Column } from './output-table.js';
import type { Output } from './output.js';
import { serviceMessageLines, stripControlCharacters } from '../core/terminal-text.js';

type Check = Gate1ProofBody['results'][number];

const checkColumns: ReadonlyArray<Column<Check>> = [
  { header: 'Check', kind: 'name', value: (c) => c.name },
  { header: 'Kind', kind: 'version', value: (c) => c.kind },
  { header: 'Severity', kind: 'state', value: (c) => c.severity },
  { header: 'Result', kind: 'state', value: resultLabel },
  { header: 'Failing rows', kind: 'version', value: (c) => c.failingRows },
  { header: 'Detail', value: (c) => c.detail },
];

/** One check of a finished job's report (Gate 1 results, Gate 2/3 checks): only what it has is shown. */
interface JobCheck {
  name?: unknown;
  kind?: unknown;
  severity?: unknown;
  passed?: unknown;
  skipped?: unknown;
  failingRows?: unknown;
  detail?: unknown;
}

const jobCheckColumns: ReadonlyArray<Column<JobCheck>> = [
  { header: 'Check', kind: 'name', value: (c) => c.name },
  { header: 'Severity', kind: 'state', value: (c) => c.severity },
  { header: 'Result', kind: 'state', value: resultLabel },
  { header: 'Detail', value: (c) => c.detail },
];

/** A check that did not pass is a FAIL, unless its severity only warns: then it reads WARN. */
function resultLabel(check: { skipped?: unknown; passed?: unknown; severity?: unknown }): string {
  if (check.skipped === true) return 'skipped';
  if (check.passed === true) return 'pass';
  return check.severity === 'WARN' ? 'WARN' : 'FAIL';
}

/** The proof of a Gate 1 run; `table` is how the person named the table (its id when not given). */
export async function printProof(out: Output, proof: Gate1ProofBody, table = proof.tableId): Promise<void> {
  if (out.json) {
    out.record(proof);
    return;
  }
  await out.table(proof.results, checkColumns);
  const sample = proof.sample === null ? 'full scan' : `sample ${proof.sample.spec}`;
  const verdict = proof.passed
    ? out.style('green', 'PASSED')
    : out.style('red', `FAILED (${proof.failedPredicates.join(', ')})`);
  out.printField('Gate 1 ', verdict, ` on ${table}: ${proof.rowsChecked} rows checked, ${sample}.`);
  if (proof.id !== null)
    out.printField(`Proof ${proof.id}${proof.state === undefined ? '' : `; table now ${proof.state}`}.`);
}

export async function printJob(out: Output, job: GateJobBody): Promise<void> {
  if (out.json) {
    out.record(job);
    return;
  }
  out.printField(`Job ${job.id} (${job.type}, Gate ${job.gate}) on ${job.tableId ?? '-'}: ${job.status}`);
  out.printField(`Created ${out.when(job.createdAt)} by ${job.createdByEmail ?? job.createdBy}`);
  if (job.startedAt !== null) out.printField(`Started ${out.when(job.startedAt)}`);
  if (job.finishedAt !== null) out.printField(`Finished ${out.when(job.finishedAt)}`);
  if (job.error?.message !== undefined) {
    // One line, but for an SQL error's caret block (`LINE 1: …` and its `^`), indented under it.
    const [headline = '', ...block] = serviceMessageLines(job.error.message).lines;
    out.printField(out.style('red', `Error: ${headline}`));
    out.printLines(block.map((line) => [line]));
  }
  if (job.result === undefined) return;
  const report = (job.result ?? {}) as { checks?: unknown; results?: unknown; passed?: unknown };
  const checks = Array.isArray(report.checks) ? report.checks : report.results;
  if (!Array.isArray(checks)) {
    out.print(`Result: ${JSON.stringify(job.result, null, 2)}`);
    return;
  }
  out.print('');
  await out.table(checks as JobCheck[], jobCheckColumns, { empty: 'The report lists no checks.' });
  if (typeof report.passed === 'boolean') {
    out.printField(
      `Gate ${job.gate} `,
      report.passed ? out.style('green', 'PASSED') : out.style('red', 'FAILED'),
      ` on ${job.tableId ?? '-'}.`,
    );
  }
}

/** A job, or the persisted Gate 1 proof a `prf_…` id names. */
export async function printGateRecord(out: Output, record: GateJobBody | Gate1ProofBody): Promise<void> {
  if ('passed' in record) await printProof(out, record);
  else await printJob(out, record);
}

type GateJobRow = Schema<'GateJobList'>['jobs'][number];

export const gateJobColumns: ReadonlyArray<Column<GateJobRow>> = [
  { header: 'Id', kind: 'id', value: (j) => j.id },
  { header: 'Gate', kind: 'version', value: (j) => j.gate },
  { header: 'Type', value: (j) => j.type },
  { header: 'Status', kind: 'state', value: (j) => j.status },
  { header: 'Started', kind: 'time', value: (j) => j.startedAt ?? '-' },
  { header: 'Ended', kind: 'time', value: (j) => j.endedAt ?? '-' },
  { header: 'Proof', kind: 'id', value: (j) => j.proof ?? '-' },
];

/**
 * A document from the service (gate1.yml) written byte for byte, so it pipes clean into another command;
 * when stdout is a terminal it is stripped of control characters like every other server string.
 */
export async function writeDocument(out: Output, text: string): Promise<void> {
  if (out.stdout.isTTY !== true) {
    out.stdout.write(text);
    return;
  }
  out.stdout.write(stripControlCharacters(text));
}
