// The glue between a command and the service: resolve the credentials (src/auth), build the typed client
// (src/client), run the command's one service call, close the client, and turn what the client threw
// (ApiError, NetworkError) into the CliError a person can act on, with the exit code of its status.
//
//   const members = await withSession(
//     { flags: this.flags, version: this.config.version, warn: (m) => this.out.warn(m) },
//     ({ client }) => listMembers(client),
//   );
//
// Commands extending ApiCommand (api-command.ts) call `this.withClient(...)`, which is this with the
// command's own flags. Server strings are not cleaned here: Output strips them when they are printed.
import { type GdsConfig, loadConfig, type Profile } from '../auth/config.js';
import {
  type CredentialFlags,
  type CredentialSource,
  credentialStatus,
  resolveCredentials,
  type ResolvedCredentials,
} from '../auth/credentials.js';
import type { ApiClient, ApiError, CursorLoopError, NetworkError } from '../client/index.js';
import type { ShortLivedTokenRequest } from '../client/areas/tokens.js';
import { untrustedCertificate } from '../client/errors.js';
import { shellWord } from '../core/shell-word.js';
import { echoedHost, echoedUrl } from '../core/echo.js';
import { isLoopbackUrl } from '../core/url-policy.js';
import { unverifiedClaims } from '../core/jwt-claims.js';
import { CliError, ExitCode, exitCodeForStatus } from '../core/errors.js';
import { Lines } from '../core/terminal-text.js';
import { createApiClient } from '../client/index.js';
import { proxyVariable } from '../client/transport.js';
import type { AuthProvider } from '../client/transport.js';
import { authProviderFor, clockSkewMs, onLocalClock } from '../auth/refresh.js';

export interface SessionInput {
  flags: CredentialFlags & { 'max-retry-after'?: number | undefined };
  /** The CLI's version, sent in `User-Agent: gds/<version>`. */
  version: string;
  env?: NodeJS.ProcessEnv;
  warn?: (message: string) => void;
  /** false: the call sends no token (the refresh endpoint), so only the API base URL is resolved. */
  authenticated?: boolean;
  /**
   * The command takes a MANAGEMENT or DATA-API token (recertify, definitions push). When the credential is a
   * person's (a `cli_` token or a sign-in), the 60-minute token the command needs is drawn on it first
   * (`POST /api/integration/short-lived-tokens`): the request is what this returns, asked with the person's
   * own client. Nothing is stored; another kind of token is used as it is.
   */
  draw?: (personal: ApiClient) => Promise<ShortLivedTokenRequest>;
}

export interface Session {
  client: ApiClient;
  baseUrl: string;
  /** Where the base URL came from, for the message when the service cannot be reached. */
  baseSource: CredentialSource;
  /** Absent when the session sends no token. */
  credentials?: ResolvedCredentials;
}

/** Opens a session, runs `work` with it, closes the client, and maps client errors to CliErrors. */
export async function withSession<T>(
  input: SessionInput,
  work: (session: Session) => Promise<T>,
): Promise<T> {
  const session = await openSession(input);
  try {
    return await work(session);
  } catch (error) {
    throw sessionFailure(error, session, await profilesFor(error, input.env ?? process.env));
  } finally {
    await session.client.close();
  }
}

/** The stored profiles, read only when a refusal asks for another kind of token (one of them may hold it). */
async function profilesFor(error: unknown, env: NodeJS.ProcessEnv): Promise<GdsConfig | undefined> {
  if (!isNamed<ApiError>(error, 'ApiError') || error.code !== 'wrong_audience') return undefined;
  return loadConfig({ env }).catch(() => undefined);
}

export async function openSession(input: SessionInput): Promise<Session> {
  const env = input.env ?? process.env;
  const options = input.warn === undefined ? {} : { warn: input.warn };
  const retry =
    input.flags['max-retry-after'] === undefined
      ? {}
      : { retry: { maxRetryAfterSeconds: input.flags['max-retry-after'] } };
  if (input.authenticated === false) {
    const { baseUrl, baseSource } = await resolveBaseOnly(input.flags, env, options);
    return { client: createApiClient({ baseUrl, version: input.version, ...retry }), baseUrl, baseSource };
  }
  const credentials = await resolveCredentials(input.flags, env, options);
  warnEnvOverProfile(input.flags, credentials, input.warn);
  const client = createApiClient({
    baseUrl: credentials.baseUrl,
    auth: authProviderFor(credentials, { env, ...options }),
    version: input.version,
    ...retry,
  });
  const session = { client, baseUrl: credentials.baseUrl, baseSource: credentials.baseSource, credentials };
  if (input.draw === undefined || !isPersonal(credentials)) return session;
  let auth: AuthProvider;
  try {
    auth = await drawnToken(client, await input.draw(client));
  } catch (error) {
    await client.close();
    throw sessionFailure(error, session, await profilesFor(error, env));
  }
  const drawnClient = createApiClient({
    baseUrl: credentials.baseUrl,
    auth,
    version: input.version,
    ...retry,
  });
  return {
    ...session,
    client: {
      ...drawnClient,
      // The person's client stays open while the drawn token may need drawing again.
      close: async () => {
        await drawnClient.close();
        await client.close();
      },
    },
  };
}

/** Drawn again this long before it runs out, so no request goes out with a token that expires on its way. */
const REDRAW_BEFORE_MS = 2 * 60_000;

/**
 * The 60-minute token `request` asks for, drawn on the person's client, and drawn again when it is about to
 * run out or the service says it did: a command that works longer than an hour (a recertify of many parts,
 * an apply of thousands of models) goes on, where the token it drew once ran out half-way.
 */
async function drawnToken(personal: ApiClient, request: ShortLivedTokenRequest): Promise<AuthProvider> {
  const draw = async () => {
    const token = await personal.tokens.drawShortLived(request);
    // Its expiry on this machine's clock: one that runs ahead of the service's would draw for every request.
    const expiresAt = onLocalClock(token.expiresAt, clockSkewMs(token.accessToken));
    return { token: token.accessToken, renewAt: Date.parse(expiresAt) - REDRAW_BEFORE_MS };
  };
  let current = await draw();
  let drawing: Promise<{ token: string; renewAt: number }> | undefined;
  const redraw = () => {
    drawing ??= draw().finally(() => {
      drawing = undefined;
    });
    return drawing.then((next) => {
      current = next;
      return next.token;
    });
  };
  return {
    // An expiry that cannot be read (NaN) is not acted on early: the service's 401 says it.
    getToken: async () => (Date.now() >= current.renewAt ? redraw() : current.token),
    onUnauthorized: redraw,
  };
}

/** A person's credential: a static CLI token, a browser sign-in's profile, or a session JWT given as it is. */
function isPersonal(credentials: ResolvedCredentials): boolean {
  if (credentials.token.startsWith('cli_') || credentials.tokenKind === 'session') return true;
  return unverifiedClaims(credentials.token).aud === 'session';
}

/**
 * The precedence is flags, then SERVICE_TOKEN/SERVICE_API_URL, then the profile: --profile only
 * chooses which profile is last in line, so the environment still wins. Said, since it surprises.
 */
export function warnEnvOverProfile(
  flags: CredentialFlags,
  credentials: Pick<ResolvedCredentials, 'tokenSource' | 'baseSource'>,
  warn: ((message: string) => void) | undefined,
): void {
  if (flags.profile === undefined || warn === undefined) return;
  const overriding = [
    credentials.tokenSource === 'env' ? 'SERVICE_TOKEN' : undefined,
    credentials.baseSource === 'env' ? 'SERVICE_API_URL' : undefined,
  ].filter((v) => v !== undefined);
  if (overriding.length === 0) return;
  warn(
    `${overriding.join(' and ')} override${overriding.length === 1 ? 's' : ''} --profile ${flags.profile}; ` +
      `unset ${overriding.length === 1 ? 'it' : 'them'} to use the profile.`,
  );
}

async function resolveBaseOnly(
  flags: CredentialFlags,
  env: NodeJS.ProcessEnv,
  options: { warn?: (message: string) => void },
): Promise<{ baseUrl: string; baseSource: CredentialSource }> {
  const status = await credentialStatus(flags, env, options);
  if (status.baseUrl === null || status.baseSource === null) {
    throw new CliError('No API base URL: no --base flag, no SERVICE_API_URL, and no profile with one.', {
      exitCode: ExitCode.Unauthenticated,
      code: 'no_base_url',
      suggestion:
        'Pass --base https://gds.example.com, set SERVICE_API_URL, or store a profile with gds auth set.',
    });
  }
  return { baseUrl: status.baseUrl, baseSource: status.baseSource };
}

/** What a client failure means for the person running the command; anything else is returned as is. */
export function sessionFailure(
  error: unknown,
  session: Pick<Session, 'baseUrl' | 'baseSource' | 'credentials'>,
  config?: GdsConfig,
) {
  if (isNamed<ApiError>(error, 'ApiError')) return apiFailure(error, session, config);
  if (isNamed<NetworkError>(error, 'NetworkError')) return networkFailure(error, session);
  if (isNamed<CursorLoopError>(error, 'CursorLoopError')) return cursorLoopFailure(error, session);
  return error;
}

function apiFailure(
  error: ApiError,
  session: Pick<Session, 'baseUrl' | 'credentials'>,
  config: GdsConfig | undefined,
): CliError {
  const path = pathAfterBase(error.url, session.baseUrl);
  // Below 400 the answer itself was unreadable (a 2xx body that is not JSON): the service misbehaved.
  const exitCode = error.status < 400 ? ExitCode.Unavailable : exitCodeForStatus(error.status);
  const details = compact({
    status: error.status,
    request: `${error.method} ${path}`,
    requestId: error.requestId,
    retryAfterSeconds: error.retryAfterSeconds,
    server: error.details,
  });
  // §7.3: a refused or expired token is reported as "Unauthorized". The request goes in details, not in the
  // message: the message is the service's specific cause.
  const lead = error.status === 401 ? 'Unauthorized: ' : '';
  return new CliError(`${lead}${error.message}`, {
    exitCode,
    code: error.code,
    suggestion: suggestionFor(error, path, session.credentials, config),
    details,
  });
}

function suggestionFor(
  error: ApiError,
  path: string,
  credentials: ResolvedCredentials | undefined,
  config: GdsConfig | undefined,
): string | Lines | undefined {
  switch (error.status) {
    case 401:
      if (credentials === undefined) return undefined;
      if (error.code === 'wrong_audience') {
        const right = config === undefined ? undefined : profileHolding(error.message, config, credentials);
        if (right !== undefined) {
          const over =
            credentials.tokenSource === 'flag'
              ? ' (without --token)'
              : credentials.tokenSource === 'env'
                ? ' (without SERVICE_TOKEN)'
                : '';
          return `Run again with --profile ${shellWord(right)}${over}: that profile holds the kind of token this call takes.`;
        }
        return 'This call takes another kind of token (the message says which): a MANAGEMENT token (gds tokens issue --scope …), a DATA-API token (gds tokens issue --table …), or your own sign-in (gds auth set, gds auth login).';
      }
      // An access token given as it is (SERVICE_TOKEN, --token) lasts 60 minutes, and gds cannot renew it: a CI
      // job longer than that needs the token in a profile, which renews it with its refresh token.
      if (error.code === 'token_expired' && credentials.tokenKind === 'static')
        return new Lines([
          `The access token from ${describeSource(credentials.tokenSource, 'SERVICE_TOKEN')} has expired: it lasts 60 minutes, and gds renews only a token kept in a profile.`,
          'For work longer than that, store the integration token in a profile that renews itself, and use it',
          `instead${credentials.tokenSource === 'env' ? ' of SERVICE_TOKEN' : credentials.tokenSource === 'flag' ? ' of --token' : ''}:`,
          '  printf %s "$REFRESH_TOKEN" | gds tokens refresh --save-profile ci   then: gds … --profile ci',
        ]);
      return new Lines([
        `The token from ${describeSource(credentials.tokenSource, 'SERVICE_TOKEN')} was refused. Use one the service accepts:`,
        '  gds auth set --token <t> --base <url>      store a CLI token in a profile',
        '  gds auth login                             sign in with the browser',
        '  SERVICE_TOKEN=<t>                          in CI, nothing stored',
      ]);
    case 403: {
      const scope = requiredScope(error.details);
      // A table's scope (tables:<slug>:<permission>) is a DATA-API token's, granted by --table, not --scope. The
      // scope is the service's: quoted in the command to paste, as any value of its.
      const table = scope === undefined ? null : /^tables:(.+):(read|write)$/.exec(scope);
      if (table) {
        return `This call needs the scope ${scope}: issue a DATA-API token that holds it (gds tokens issue --table ${shellWord(`${table[1]}:${table[2] === 'write' ? 'read,write' : 'read'}`)} --env <env> --name <n> --save-profile <profile>), then pass --profile <profile>.`;
      }
      if (scope !== undefined) {
        return `This call needs the scope ${scope}: issue a MANAGEMENT token that holds it (gds tokens issue --scope ${shellWord(scope)} --env '*' --name <n>), or use a person's sign-in.`;
      }
      return 'Your role or token does not allow this. Ask a workspace admin for the role, or use a token with the permission.';
    }
    case 404:
    case 409:
    case 412: {
      const specific = specificSuggestion(error, path);
      return specific === undefined ? genericSuggestion(error, path) : (specific ?? undefined);
    }
    case 400:
    case 422: {
      const table = tableOf(path);
      if (error.code === 'invalid_gate1' && table !== undefined) {
        return `gds gate validate ${shellWord(table)} -f <file> shows the same errors before anything is sent.`;
      }
      return undefined;
    }
    case 429:
      return error.retryAfterSeconds === undefined
        ? 'Rate limited after the retries gds makes. Wait a minute and try again.'
        : `Rate limited. Try again in ${error.retryAfterSeconds} s (Retry-After); gds waits by itself up to --max-retry-after seconds.`;
    default:
      if (error.status >= 500) {
        return `The service failed${error.requestId === undefined ? '' : ` (request id ${error.requestId})`}. Try again later; quote the request id when reporting it.`;
      }
      return undefined;
  }
}

/** Where to look for the ids a 404 names, by the service's error code. */
const LIST_COMMAND: Record<string, string> = {
  table_not_found: 'gds list',
  replace_target_not_found: 'gds list',
  connector_not_found: 'gds connectors list',
  recertification_request_not_found: 'gds recertification list',
};

/** The next step for a 404 or 409 whose code the service made specific; undefined when the service's
 *  message already names it or nothing more specific than the generic advice applies. */
function specificSuggestion(error: ApiError, path: string): string | undefined | null {
  if (/^http_\d+$|^(not_found|conflict)$/.test(error.code)) return undefined;
  // The service's message already says what to run.
  if (/`gds |\bgds [a-z]+ /.test(error.message)) return null;
  const list = LIST_COMMAND[error.code];
  if (list !== undefined) return `${list} shows the ids you can use.`;
  if (error.code === 'token_not_found') {
    // The tf_… client token a list shows is masked: it names no token.
    return 'Revoke it by the id (itk_…, clt_…) or NAME that gds tokens list shows; the client token listed there is masked.';
  }
  const table = tableOf(path);
  if (error.status === 409 && table !== undefined)
    return `gds status ${shellWord(table)} shows where the table is now.`;
  return null;
}

/** The table id of a `/api/tables/{tableId}/…` path. */
function tableOf(path: string): string | undefined {
  const id = /^\/api\/tables\/([^/?]+)/.exec(path)?.[1];
  return id === undefined ? undefined : decodeURIComponent(id);
}

function genericSuggestion(error: ApiError, path: string): string | undefined {
  if (error.status === 404) {
    return `Nothing at ${error.method} ${path}: check the id or path (ids are listed by the matching list command).`;
  }
  return 'The state changed on the service. Look at the current state, then try again.';
}

function networkFailure(error: NetworkError, session: Pick<Session, 'baseUrl' | 'baseSource'>): CliError {
  return new CliError(`Could not reach the service at ${echoedUrl(session.baseUrl)}: ${error.message}`, {
    exitCode: ExitCode.Unavailable,
    code: error.failure === 'timeout' ? 'timeout' : 'unreachable',
    suggestion: untrustedCertificate(error.code)
      ? "If the service's certificate comes from your organisation's own authority, give gds that " +
        "authority's certificate: NODE_EXTRA_CA_CERTS=/path/to/ca.pem (a PEM file)."
      : `The API base URL came from ${describeSource(session.baseSource, 'SERVICE_API_URL')}. ` +
        'Check that the service runs there, or point gds elsewhere with --base <url> or SERVICE_API_URL.' +
        proxyNote(session.baseUrl),
    details: compact({ url: session.baseUrl, cause: error.code }),
  });
}

/**
 * When a proxy variable covers the base URL, the refusal or timeout may be the proxy's: said, by the
 * variable's name (its value may hold a password). A loopback base never goes through one.
 */
function proxyNote(baseUrl: string, env: NodeJS.ProcessEnv = process.env): string {
  const url = URL.parse(baseUrl);
  if (url === null || isLoopbackUrl(url)) return '';
  const set = proxyVariable(env, url.protocol);
  if (set === undefined) return '';
  const [host, name] = [echoedHost(url.host), echoedHost(url.hostname)];
  return ` gds goes through the proxy in ${set} (unless NO_PROXY lists ${name}): check that the proxy runs and lets ${host} through, or leave it out with NO_PROXY=${name}.`;
}

/** The service repeated a list's cursor: what came before was whole, the rest cannot be had by paging. */
function cursorLoopFailure(error: CursorLoopError, session: Pick<Session, 'baseUrl'>): CliError {
  return new CliError(error.message, {
    exitCode: ExitCode.Failure,
    code: 'pagination_loop',
    suggestion:
      'The pages printed before this are complete; the service pages this list in a loop. Report the ' +
      `repeated cursor to the operator of ${session.baseUrl}.`,
    details: { list: error.list, cursor: error.cursor },
  });
}

/** What a wrong_audience refusal asks for ("… take a DATA-API token; this is …"), as a test of a profile. */
const AUDIENCES: readonly [RegExp, (profile: Profile) => boolean][] = [
  [/DATA-API token/, (p) => p.kind === 'integration' && p.audience === 'DATA-API'],
  [/MANAGEMENT token/, (p) => p.kind === 'integration' && p.audience === 'MANAGEMENT'],
  [/personal sign-in/, (p) => p.kind === 'session' || p.kind === 'static'],
];

/** A stored profile, other than the one refused, of the same service whose token is of the kind asked for. */
export function profileHolding(
  message: string,
  config: GdsConfig,
  credentials: Pick<ResolvedCredentials, 'baseUrl' | 'profileName'>,
): string | undefined {
  const asked = message.split(';')[0] ?? '';
  const fits = AUDIENCES.find(([wording]) => wording.test(asked))?.[1];
  if (fits === undefined) return undefined;
  const sameBase = (base: string) => base.replace(/\/+$/, '') === credentials.baseUrl.replace(/\/+$/, '');
  const names = Object.entries(config.profiles)
    .filter(([name, p]) => name !== credentials.profileName && sameBase(p.base) && fits(p))
    .map(([name]) => name);
  return names.includes(config.activeProfile ?? '') ? (config.activeProfile ?? undefined) : names.sort()[0];
}

function describeSource(source: CredentialSource, variable: string): string {
  if (source === 'flag') return 'the command line';
  if (source === 'env') return variable;
  return `profile ${source.slice('profile:'.length)}`;
}

function requiredScope(details: unknown): string | undefined {
  const scope = (details as { requiredScope?: unknown } | null | undefined)?.requiredScope;
  return typeof scope === 'string' ? scope : undefined;
}

/** The request path as the user gave it: the URL without the API base (which may carry a stage path). */
function pathAfterBase(url: string, baseUrl: string): string {
  if (url.startsWith(`${baseUrl}/`)) return url.slice(baseUrl.length);
  // A path as it is: what a service reports of one step of a batch names the batch's path.
  const parsed = URL.parse(url);
  return parsed === null ? url : parsed.pathname + parsed.search;
}

function compact(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
}

// The client loads lazily, so its classes are recognised by name rather than by instanceof.
function isNamed<T extends Error>(error: unknown, name: string): error is T {
  return error instanceof Error && error.name === name;
}
