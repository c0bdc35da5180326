// `gds gate get|apply|diff|run|submit|result|status|cancel|suggest`: gate1.yml on the service and gate runs.
// Everything that can be refused locally is refused before a request: an invalid gate1.yml, Gate 3
// without a baseline, a sample on Gate 2/3.
import { CliError, ExitCode } from '../cli/errors.js';
import type { ApiClient } from '../client/index.js';
import type { GateNumber, GateRunResponse } from '../client/areas/gates.js';
import type {
  Gate1ApplyResult,
  Gate1ProofBody,
  Gate1Suggestions,
  Gate1Version,
  GateJobBody,
  GateRunRequest,
} from '../contract/types.js';
import type { DiffSide, GateDiff } from '../core/gate-diff.js';

export type GatesClient = Pick<ApiClient, 'gates' | 'gateJobs'>;
type Call = { signal?: AbortSignal };

export const SAMPLE_SHAPE = /^(?:(?:head|tail|random):[1-9]\d*|chunks:[1-9]\d*@[1-9]\d*)$/;

/** `--sample` as the flag parser checks it; throws an Error saying what is accepted. */
export function parseSampleSpec(text: string): string {
  const spec = text.trim();
  if (!SAMPLE_SHAPE.test(spec)) {
    throw new Error(
      `${JSON.stringify(text)} is not a sample: use head:N, tail:N, random:N or chunks:K@N (e.g. chunks:4@100)`,
    );
  }
  return spec;
}

/** `v3` or `3` as the version number the service stores; throws an Error for anything else. */
export function parseGateVersion(text: string): string {
  const match = /^v?([1-9]\d*)$/.exec(text.trim());
  if (!match?.[1]) throw new Error(`${JSON.stringify(text)} is not a version: use vN or N, e.g. v3`);
  return `v${match[1]}`;
}

export async function getGate(client: GatesClient, tableId: string, call: Call = {}): Promise<Gate1Version> {
  return client.gates.get(tableId, call);
}

/** Validates `content` locally (exit 2 with every diagnostic, nothing sent), then stores it. */
export async function applyGate(
  client: GatesClient,
  tableId: string,
  input: { name: string; text: string },
  call: Call = {},
): Promise<Gate1ApplyResult> {
  const { validateGate1, countDiagnostics } = await import('../core/gate1/index.js');
  const { diagnostics } = validateGate1(input.text, { fileName: input.name });
  const { errors } = countDiagnostics(diagnostics);
  if (errors > 0) {
    // The diagnostics are printed from details (one line each in human mode, whole under --json).
    throw new CliError(
      `${input.name} is not a valid gate1.yml (${errors} error${errors === 1 ? '' : 's'}); nothing was sent.`,
      {
        exitCode: ExitCode.Usage,
        code: 'invalid_gate1',
        suggestion: `Fix the file (gds gate validate -f ${input.name} shows the same), then apply it again.`,
        details: { diagnostics },
      },
    );
  }
  return client.gates.apply(tableId, input.text, call);
}

export type DiffTarget =
  { kind: 'current'; after: DiffSide } | { kind: 'versions'; from: string; to: string };

/** The server half of `gate diff`: a local file against the current version, or two stored versions. */
export async function diffWithServer(
  client: GatesClient,
  tableId: string,
  target: DiffTarget,
  options: { semantic: boolean } & Call,
): Promise<GateDiff> {
  const call = options.signal === undefined ? {} : { signal: options.signal };
  const side = (v: Gate1Version): DiffSide => ({ name: `${tableId}@v${v.version}`, text: v.content });
  let before: DiffSide;
  let after: DiffSide;
  if (target.kind === 'current') {
    before = side(await client.gates.get(tableId, call));
    after = target.after;
  } else {
    [before, after] = await Promise.all([
      client.gates.version(tableId, target.from, call).then(side),
      client.gates.version(tableId, target.to, call).then(side),
    ]);
  }
  const { diffGateTexts } = await import('../core/gate-diff.js');
  return diffGateTexts(before, after, { semantic: options.semantic });
}

export const gate3NeedsBaseline = '--baseline <reportId> is required for Gate 3';

/** The run request, refused locally (exit 2) when the flags do not fit the gate. */
export function gateRunRequest(input: {
  gate: GateNumber;
  baseline?: string | undefined;
  sample?: string | undefined;
}): GateRunRequest {
  const usage = (message: string, code: string, suggestion: string) =>
    new CliError(message, { exitCode: ExitCode.Usage, code, suggestion });
  if (input.gate === 3 && input.baseline === undefined) {
    throw usage(
      gate3NeedsBaseline,
      'baseline_required',
      'Pass the id of a finished auto-baseline job (gds status <tableId> lists the jobs): gds gate run <tableId> --gate 3 --baseline <reportId>',
    );
  }
  if (input.gate !== 3 && input.baseline !== undefined) {
    throw usage(
      `--baseline applies to Gate 3 only.`,
      'baseline_gate3_only',
      'Drop --baseline, or add --gate 3.',
    );
  }
  if (input.gate !== 1 && input.sample !== undefined) {
    throw usage(`--sample applies to Gate 1 only.`, 'sample_gate1_only', 'Drop --sample for Gate 2 and 3.');
  }
  return {
    gate: input.gate,
    ...(input.baseline === undefined ? {} : { baseline: input.baseline }),
    ...(input.sample === undefined ? {} : { sample: input.sample }),
  };
}

export async function runGate(
  client: GatesClient,
  tableId: string,
  request: GateRunRequest,
  call: Call = {},
): Promise<GateRunResponse> {
  return client.gates.run(tableId, request, call);
}

export async function submitGate(
  client: GatesClient,
  tableId: string,
  call: Call = {},
): Promise<Gate1ProofBody> {
  return client.gates.submit(tableId, call);
}

export async function gateJobStatus(
  client: GatesClient,
  jobId: string,
  gate: GateNumber,
  call: Call = {},
): Promise<GateJobBody> {
  return client.gateJobs.get(jobId, { gate }, call);
}

/** The report of a terminal job (409 `job_not_terminal` before it ends). */
export async function gateJobResult(
  client: GatesClient,
  jobId: string,
  call: Call = {},
): Promise<GateJobBody> {
  return client.gates.result(jobId, undefined, call);
}

export async function cancelGateJob(
  client: GatesClient,
  jobId: string,
  gate: GateNumber,
  call: Call = {},
): Promise<GateJobBody> {
  return client.gates.cancel(jobId, gate, call);
}

export async function suggestGate(
  client: GatesClient,
  tableId: string,
  call: Call = {},
): Promise<Gate1Suggestions> {
  return client.gates.suggest(tableId, call);
}
