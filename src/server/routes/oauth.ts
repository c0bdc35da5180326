// The authorization-server endpoints: discovery (RFC 8414), device authorization and the token
// endpoint (RFC 8628, RFC 6749 §6 refresh), and the verification page. Requests are form-encoded,
// errors are RFC 6749 bodies, token responses are never cached.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { formScopeErrorHandler } from '../errors.js';
import { RateLimiter, rateLimited } from '../rate-limit.js';
import type { Decision } from '../oauth/device-codes.js';
import { createDeviceCode, decideDeviceCode, redeemDeviceCode } from '../oauth/device-codes.js';
import { OAuthError } from '../oauth/errors.js';
import { issueSessionTokens, rotateRefreshToken } from '../oauth/session-tokens.js';
import type { DeviceFlowOptions } from '../oauth/settings.js';
import {
  CLI_CLIENT_ID,
  DEVICE_CODE_GRANT,
  deviceFlowSettings,
  grantedScope,
  paths,
  REFRESH_TOKEN_GRANT,
} from '../oauth/settings.js';
import { isSameOriginPost, refusedPostMessage } from '../host-check.js';
import { outcomePage, VERIFICATION_PAGE_HEADERS, verificationForm } from '../oauth/verification-page.js';
import { signInSecretRefusal } from '../sign-in-secret.js';

type Form = Record<string, string | undefined>;

export function oauthRoutes(app: FastifyInstance, ctx: AppContext, options: DeviceFlowOptions = {}): void {
  const settings = deviceFlowSettings(options);
  const startsPerAddress = new RateLimiter(
    'device-code',
    settings.codesPerAddressPerMinute,
    ctx.db,
    ctx.clock,
  );
  void app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    // A body Fastify cannot read is still answered in the endpoint's own form: an RFC 6749 error, or the
    // verification page.
    scope.setErrorHandler(
      formScopeErrorHandler((reply, request, message) =>
        isVerificationPage(request)
          ? reply.code(400).type('text/html; charset=utf-8').send(verificationForm('', message))
          : sendOAuthError(reply, new OAuthError('invalid_request', message)),
      ),
    );

    // The verification page gets the dashboard's headers (CSP, no framing, nosniff, no-store), under
    // whatever spelling of its path the router matched (`/%64evice` is /device too).
    scope.addHook('onRequest', async (request, reply) => {
      if (isVerificationPage(request)) reply.headers(VERIFICATION_PAGE_HEADERS);
    });

    scope.post<{ Body: Form }>(paths.deviceAuthorization, async (request, reply) => {
      // Counted before anything else: a flood from one address costs one statement a request, then none.
      const window = await startsPerAddress.take(request.ip);
      if (!window.allowed) throw rateLimited(window, ctx.clock(), 'device sign-ins from one address');
      const form = request.body ?? {};
      const failure = clientProblem(form.client_id);
      if (failure) return sendOAuthError(reply, failure);
      const scopeGranted = grantedScope(form.scope);
      if (scopeGranted === null) {
        return sendOAuthError(
          reply,
          new OAuthError('invalid_scope', `Only these scopes exist: openid offline_access.`),
        );
      }
      noStore(reply);
      return createDeviceCode(ctx, settings, CLI_CLIENT_ID, scopeGranted);
    });

    scope.post<{ Body: Form }>(paths.token, async (request, reply) => {
      const form = request.body ?? {};
      const result = await tokenGrant(ctx, form);
      if (result instanceof OAuthError) return sendOAuthError(reply, result);
      noStore(reply);
      return result;
    });

    const askSecret = ctx.signInSecret !== null;
    const formPage = (reply: FastifyReply, status: number, userCode: string, problem?: string) =>
      reply
        .code(status)
        .type('text/html; charset=utf-8')
        .send(verificationForm(userCode, problem, askSecret));

    scope.get<{ Querystring: Form }>(paths.verification, async (request, reply) =>
      formPage(reply, 200, request.query.user_code ?? ''),
    );

    scope.post<{ Body: Form }>(paths.verification, async (request, reply) => {
      if (!isSameOriginPost(request, ctx.names())) {
        const why = 'Approve sign-ins from this server’s own /device page only.';
        return formPage(reply, 403, '', refusedPostMessage(request, ctx.names(), why));
      }
      const form = request.body ?? {};
      const decision = form.action;
      if ((decision !== 'approve' && decision !== 'deny') || !form.user_code || !form.email) {
        return formPage(
          reply,
          400,
          form.user_code ?? '',
          `Enter the code and your e-mail${askSecret ? ' and the sign-in secret' : ''}, then approve or deny.`,
        );
      }
      const refused = await signInSecretRefusal(ctx, request, form.secret);
      if (refused)
        return formPage(reply.headers(refused.headers), refused.status, form.user_code, refused.message);
      const result = await decideDeviceCode(ctx, form.user_code, form.email, decision as Decision);
      return result.ok
        ? reply.code(200).type('text/html; charset=utf-8').send(outcomePage(result.message))
        : formPage(reply, 400, form.user_code, result.message);
    });
  });
}

async function tokenGrant(ctx: AppContext, form: Form) {
  const failure = clientProblem(form.client_id);
  if (failure) return failure;
  if (form.grant_type === DEVICE_CODE_GRANT) {
    const deviceCode = form.device_code;
    if (!deviceCode) return new OAuthError('invalid_request', 'device_code is missing.');
    return ctx.db.transaction(async (tx) => {
      const approved = await redeemDeviceCode(tx, ctx, deviceCode, CLI_CLIENT_ID);
      return approved instanceof OAuthError ? approved : issueSessionTokens(tx, ctx, approved);
    });
  }
  if (form.grant_type === REFRESH_TOKEN_GRANT) {
    const refreshToken = form.refresh_token;
    if (!refreshToken) return new OAuthError('invalid_request', 'refresh_token is missing.');
    return ctx.db.transaction((tx) => rotateRefreshToken(tx, ctx, refreshToken, CLI_CLIENT_ID));
  }
  if (!form.grant_type) return new OAuthError('invalid_request', 'grant_type is missing.');
  return new OAuthError(
    'unsupported_grant_type',
    `This server grants ${DEVICE_CODE_GRANT} and ${REFRESH_TOKEN_GRANT} only.`,
  );
}

function clientProblem(clientId: string | undefined): OAuthError | undefined {
  if (clientId === CLI_CLIENT_ID) return undefined;
  return new OAuthError('invalid_client', clientId ? `Unknown client ${clientId}.` : 'client_id is missing.');
}

/** Whether the request reached the verification page's route (matched after percent-decoding the path). */
function isVerificationPage(request: FastifyRequest): boolean {
  return request.routeOptions.url === paths.verification;
}

function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

function sendOAuthError(reply: FastifyReply, error: OAuthError) {
  noStore(reply);
  return reply.code(400).send(error.body());
}
