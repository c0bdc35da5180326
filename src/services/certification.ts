// `gds certify` and `gds reject`: a steward's decision on a PENDING_REVIEW table (§4.6).
// Certification wants interactive authentication (§5.9): a static token is refused here, before any
// request, with the way to sign in.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { ResolvedCredentials } from '../auth/credentials.js';
import { CliError, ExitCode } from '../core/errors.js';
import type { ApiClient } from '../client/index.js';
import type { TableStateChange } from '../client/areas/contracts.js';
import type { CertifyRequest, CertifyResponse } from '../contract/types.js';

export type ContractsClient = Pick<ApiClient, 'contracts'>;
type Call = { signal?: AbortSignal };

const sourceNames: Record<string, string> = { flag: '--token', env: 'SERVICE_TOKEN' };

/** Throws (exit 3) unless the token comes from a browser sign-in. */
export function requireInteractiveSession(
  credentials: Pick<ResolvedCredentials, 'tokenKind' | 'tokenSource'>,
): void {
  if (credentials.tokenKind === 'session') return;
  const integration = credentials.tokenKind === 'integration';
  const from =
    sourceNames[credentials.tokenSource] ??
    `profile ${credentials.tokenSource.slice('profile:'.length)} (stored with ${integration ? 'gds tokens issue --save-profile' : 'gds auth set'})`;
  throw new CliError(
    `Certification needs interactive authentication; the token from ${from} is ${integration ? 'an integration' : 'a static'} token. Nothing was sent.`,
    {
      exitCode: ExitCode.Unauthenticated,
      code: 'interactive_auth_required',
      suggestion:
        'Run `gds auth login` to sign in with the browser, then certify again (without --token or SERVICE_TOKEN, or with --profile naming the signed-in profile).',
    },
  );
}

export interface Evidence {
  evidenceFileName: string;
  evidenceHash: string;
  evidenceSize: number;
}

/** The file name, size and sha256 of an evidence file, read locally; only these are sent. */
export async function evidenceOf(path: string): Promise<Evidence> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw Object.assign(new Error('not a file'), { code: 'EISDIR' });
    size = info.size;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(
      code === 'ENOENT' ? `No such evidence file: ${path}` : `Cannot read the evidence file ${path}.`,
      {
        exitCode: ExitCode.Usage,
        code: 'evidence_unreadable',
        suggestion: 'Give --evidence-file the path of a readable file.',
      },
    );
  }
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return { evidenceFileName: basename(path), evidenceHash: hash.digest('hex'), evidenceSize: size };
}

export async function certifyTable(
  client: ContractsClient,
  tableId: string,
  input: {
    note?: string | undefined;
    evidence?: Evidence | undefined;
    /** The submission shown to the certifier (its proof's id): one filed since is refused, not certified. */
    reviewedProofId?: string | undefined;
  },
  call: Call = {},
): Promise<CertifyResponse> {
  const request: CertifyRequest = {
    ...(input.note === undefined ? {} : { note: input.note }),
    ...input.evidence,
    ...(input.reviewedProofId === undefined ? {} : { reviewedProofId: input.reviewedProofId }),
  };
  return client.contracts.certify(tableId, request, call);
}

export async function rejectTable(
  client: ContractsClient,
  tableId: string,
  reason: string,
  call: Call = {},
): Promise<TableStateChange> {
  if (reason.trim() === '') {
    throw new CliError('--reason must say why the table is rejected.', {
      exitCode: ExitCode.Usage,
      code: 'reason_required',
      suggestion: 'gds reject <tableId> --reason "null rate of email above 5%"',
    });
  }
  return client.contracts.reject(tableId, reason, call);
}
