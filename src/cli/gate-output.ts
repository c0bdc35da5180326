// How gate proofs and gate jobs are shown: a table of checks with pass/fail for a Gate 1 proof, a few
// labelled lines for a job. Under --json the object itself is the one NDJSON line.
import type { Gate1ProofBody, GateJobBody, Schema } from '../contract/types.js';
import type { Column, Output } from './output.js';

type Check = Gate1ProofBody['results'][number];

const checkColumns: ReadonlyArray<Column<Check>> = [
  { header: 'Check', value: (c) => c.name },
  { header: 'Kind', value: (c) => c.kind },
  { header: 'Severity', value: (c) => c.severity },
  { header: 'Result', value: (c) => (c.skipped === true ? 'skipped' : c.passed ? 'pass' : 'FAIL') },
  { header: 'Failing rows', value: (c) => c.failingRows },
  { header: 'Detail', value: (c) => c.detail },
];

export async function printProof(out: Output, proof: Gate1ProofBody): Promise<void> {
  if (out.json) {
    out.record(proof);
    return;
  }
  await out.table(proof.results, checkColumns);
  const sample = proof.sample === null ? 'full scan' : `sample ${proof.sample.spec}`;
  const verdict = proof.passed
    ? out.style('green', 'PASSED')
    : out.style('red', `FAILED (${proof.failedPredicates.join(', ')})`);
  out.print('Gate 1 ', verdict, ` on ${proof.tableId}: ${proof.rowsChecked} rows checked, ${sample}.`);
  if (proof.id !== null)
    out.print(`Proof ${proof.id}${proof.state === undefined ? '' : `; table now ${proof.state}`}.`);
}

export function printJob(out: Output, job: GateJobBody): void {
  if (out.json) {
    out.record(job);
    return;
  }
  out.print(`Job ${job.id} (${job.type}, Gate ${job.gate}) on ${job.tableId ?? '-'}: ${job.status}`);
  out.print(`Created ${job.createdAt} by ${job.createdBy}`);
  if (job.startedAt !== null) out.print(`Started ${job.startedAt}`);
  if (job.finishedAt !== null) out.print(`Finished ${job.finishedAt}`);
  if (job.error?.message !== undefined) out.print(out.style('red', `Error: ${job.error.message}`));
  if (job.result !== undefined) out.print(`Result: ${JSON.stringify(job.result, null, 2)}`);
}

/** A job, or the persisted Gate 1 proof a `prf_…` id names. */
export async function printGateRecord(out: Output, record: GateJobBody | Gate1ProofBody): Promise<void> {
  if ('passed' in record) await printProof(out, record);
  else printJob(out, record);
}

type GateJobRow = Schema<'GateJobList'>['jobs'][number];

export const gateJobColumns: ReadonlyArray<Column<GateJobRow>> = [
  { header: 'Id', value: (j) => j.id },
  { header: 'Gate', value: (j) => j.gate },
  { header: 'Type', value: (j) => j.type },
  { header: 'Status', value: (j) => j.status },
  { header: 'Started', value: (j) => j.startedAt ?? '-' },
  { header: 'Ended', value: (j) => j.endedAt ?? '-' },
  { header: 'Proof', value: (j) => j.proof ?? '-' },
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
  const { stripControlCharacters } = await import('../core/terminal-text.js');
  out.stdout.write(stripControlCharacters(text));
}
