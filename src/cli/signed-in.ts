// Who a token signs in as (GET /api/me), for `auth set` (which checks a token before saving it) and
// `auth login` (which ends by saying who signed in).
import type { Schema } from '../contract/types.js';
import type { SessionInput } from './session.js';
import { CliError, ExitCode } from '../core/errors.js';
import { withSession } from './session.js';

export type Me = Schema<'Me'>;

/** `tf_` client tokens label and revoke; the REST API refuses them with 401 (spec: Tokens, Authentication). */
export function refuseClientToken(token: string): void {
  if (!token.startsWith('tf_')) return;
  throw new CliError(
    'This is a client token (tf_…): the REST API refuses client tokens with 401, so gds cannot use it.',
    {
      exitCode: ExitCode.Usage,
      code: 'client_token',
      suggestion:
        'Store an access token instead: your own CLI token (cli_…), or the access token of an integration ' +
        'token (gds tokens issue prints it; gds tokens refresh renews it).',
    },
  );
}

/** GET /api/me with the session's credentials; failures map like any call (401: exit 3 with what to do). */
export async function signedInAs(input: SessionInput): Promise<Me> {
  return withSession(
    input,
    async ({ client }) => (await client.request<Me>({ method: 'GET', path: '/api/me' })).data,
  );
}

export function signedInLine(me: Me, base: string): string {
  return `Signed in as ${me.user.email} (${me.role}) to ${base}.`;
}

/** The environment without SERVICE_TOKEN and SERVICE_API_URL: a named profile's own credentials. */
export function profileOnlyEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const { SERVICE_TOKEN: _token, SERVICE_API_URL: _base, ...rest } = env;
  return rest;
}
