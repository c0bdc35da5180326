// The dashboard behind each table's tracking URL: `/dashboard` (the workspace's tables) and
// `/dashboard/tables/{id}` (one table), server-rendered, for a person only. A person signs in on
// `/dashboard/sign-in` with a member's e-mail (the reference server has no passwords, as on `/device`),
// which sets an HttpOnly SameSite=Strict cookie holding a server-side session id; a person's session
// token or static CLI token sent as `Authorization: Bearer` works too. Another workspace's table is 404.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requireSession } from '../auth/caller.js';
import { recordAudit } from '../audit.js';
import type { AppContext } from '../context.js';
import { doorsOf } from '../doors.js';
import { formScopeErrorHandler, HttpError, unauthorized } from '../errors.js';
import { isSameOriginPost, refusedPostMessage } from '../host-check.js';
import { memberByEmail } from '../oauth/device-codes.js';
import { SECURITY_HEADERS } from './html.js';
import {
  notFoundPage,
  refusedPage,
  REVOKE_TOKEN_PATH,
  TOKENS_PATH,
  tokensPage,
  SIGN_IN_PATH,
  SIGN_OUT_PATH,
  signInPage,
  signalsPage,
  tablePage,
  tablesPage,
} from './pages.js';
import { cookieValue, csrfToken, DashboardSessions, SESSION_COOKIE, sessionCookie } from './sessions.js';
import type { Viewer } from './view.js';
import { loadHome, loadSignalsPage, loadTablePage, loadTokens, loadViewer, viewerCaller } from './view.js';
import { revokeIntegrationToken } from '../auth/revocation.js';
import { signInSecretRefusal } from '../sign-in-secret.js';

type Form = Record<string, string | undefined>;

/** Where a sign-in may send the person back to: a dashboard page of this server, nothing else. */
const DASHBOARD_PAGE = /^\/dashboard(?:\/[\w-]+)*$/;

export function safeNext(next: string | undefined): string {
  return next !== undefined && DASHBOARD_PAGE.test(next) && !next.startsWith(SIGN_IN_PATH)
    ? next
    : '/dashboard';
}

function wantsHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html');
}

function sendPage(reply: FastifyReply, status: number, body: string) {
  return reply.code(status).type('text/html; charset=utf-8').send(body);
}

/** The CSRF token of the request's sign-in cookie; null without one (a bearer caller posts no form). */
function csrfOf(request: FastifyRequest): string | null {
  const id = cookieValue(request.headers.cookie, SESSION_COOKIE);
  return id === undefined ? null : csrfToken(id);
}

function seeOther(reply: FastifyReply, location: string) {
  return reply.code(303).header('location', location).send();
}

export function dashboardRoutes(app: FastifyInstance, ctx: AppContext): void {
  const sessions = new DashboardSessions(ctx.db, ctx.clock);
  const secure = (request: FastifyRequest) => request.protocol === 'https';

  /** The signed-in person, from a bearer token (401 when it is not a person's) or the session cookie. */
  async function viewerOf(request: FastifyRequest): Promise<Viewer | null> {
    if (request.headers.authorization !== undefined) {
      const caller = requireSession(await ctx.auth.identify(request.headers.authorization));
      return loadViewer(ctx.db, caller.userId, caller.workspaceId);
    }
    const id = cookieValue(request.headers.cookie, SESSION_COOKIE);
    const session = id === undefined ? null : await sessions.find(id);
    return session && loadViewer(ctx.db, session.userId, session.workspaceId);
  }

  /** The viewer, or (null) a redirect to the sign-in page for a browser; a 401 for any other client. */
  async function requireViewer(request: FastifyRequest, reply: FastifyReply): Promise<Viewer | null> {
    const viewer = await viewerOf(request);
    if (viewer) return viewer;
    if (!wantsHtml(request)) {
      throw unauthorized(
        'sign_in_required',
        `Sign in on ${ctx.baseUrl()}${SIGN_IN_PATH}, or send a person's session token as "Authorization: Bearer <token>".`,
      );
    }
    const next = request.url.split('?')[0] ?? '/dashboard';
    await reply
      .code(302)
      .header('location', `${SIGN_IN_PATH}?next=${encodeURIComponent(next)}`)
      .send();
    return null;
  }

  void app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    scope.addHook('onRequest', async (_request, reply) => {
      reply.headers(SECURITY_HEADERS);
    });
    scope.setErrorHandler(
      formScopeErrorHandler((reply, _request, message) =>
        sendPage(reply, 400, signInPage('/dashboard', message)),
      ),
    );

    scope.get<{ Querystring: Form }>('/dashboard', async (request, reply) => {
      const viewer = await requireViewer(request, reply);
      if (!viewer) return reply;
      const one = (value: unknown) => (typeof value === 'string' ? value : undefined);
      const { state, env, cursor } = request.query;
      const home = await loadHome(ctx.db, viewer, { state: one(state), env: one(env), cursor: one(cursor) });
      return sendPage(reply, 200, tablesPage(viewer, home, doorsOf(ctx)));
    });

    scope.get(TOKENS_PATH, async (request, reply) => {
      const viewer = await requireViewer(request, reply);
      if (!viewer) return reply;
      return sendPage(reply, 200, tokensPage(viewer, await loadTokens(ctx, viewer), csrfOf(request)));
    });

    scope.post<{ Body: Form }>(REVOKE_TOKEN_PATH, async (request, reply) => {
      const id = cookieValue(request.headers.cookie, SESSION_COOKIE);
      const session = id === undefined ? null : await sessions.find(id);
      const viewer = session && (await loadViewer(ctx.db, session.userId, session.workspaceId));
      const form = request.body ?? {};
      // Same origin, and the form's token of this very sign-in: another site can send neither.
      if (!viewer || !isSameOriginPost(request, ctx.names()) || form.csrf !== csrfOf(request)) {
        return sendPage(reply, 403, refusedPage('Revoke tokens from this server’s own tokens page.'));
      }
      try {
        const revoked = await revokeIntegrationToken(ctx, viewerCaller(viewer), form.token ?? '');
        return seeOther(reply, `${TOKENS_PATH}?revoked=${encodeURIComponent(revoked.id)}`);
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        const tokens = await loadTokens(ctx, viewer);
        return sendPage(reply, error.status, tokensPage(viewer, tokens, csrfOf(request), error.message));
      }
    });

    scope.get<{ Params: { tableId: string } }>('/dashboard/tables/:tableId', async (request, reply) => {
      const viewer = await requireViewer(request, reply);
      if (!viewer) return reply;
      const view = await loadTablePage(ctx.db, viewer, request.params.tableId);
      if (!view) {
        return sendPage(
          reply,
          404,
          notFoundPage(`Your workspace has no table ${request.params.tableId}.`, viewer),
        );
      }
      return sendPage(reply, 200, tablePage(viewer, view));
    });

    scope.get<{ Params: { requestId: string }; Querystring: Form }>(
      '/dashboard/recertification-requests/:requestId',
      async (request, reply) => {
        const viewer = await requireViewer(request, reply);
        if (!viewer) return reply;
        const { cursor } = request.query;
        const view = await loadSignalsPage(ctx.db, viewer, request.params.requestId, cursor);
        if (!view) {
          return sendPage(
            reply,
            404,
            notFoundPage(
              `Your workspace has no recertification request ${request.params.requestId}.`,
              viewer,
            ),
          );
        }
        return sendPage(reply, 200, signalsPage(viewer, view));
      },
    );

    const askSecret = ctx.signInSecret !== null;
    scope.get<{ Querystring: Form }>(SIGN_IN_PATH, async (request, reply) =>
      sendPage(reply, 200, signInPage(safeNext(request.query.next), undefined, '', askSecret)),
    );

    scope.post<{ Body: Form }>(SIGN_IN_PATH, async (request, reply) => {
      if (!isSameOriginPost(request, ctx.names(), { browserOnly: true })) {
        const why = 'Sign in from this server’s own sign-in page.';
        return sendPage(reply, 403, refusedPage(refusedPostMessage(request, ctx.names(), why)));
      }
      const form = request.body ?? {};
      const next = safeNext(form.next);
      const email = (form.email ?? '').trim();
      if (email === '') return sendPage(reply, 400, signInPage(next, 'Enter your e-mail.', '', askSecret));
      const refused = await signInSecretRefusal(ctx, request, form.secret);
      if (refused)
        return sendPage(
          reply.headers(refused.headers),
          refused.status,
          signInPage(next, refused.message, email, true),
        );
      const member = await memberByEmail(ctx.db, email);
      if (!member) {
        return sendPage(
          reply,
          400,
          signInPage(next, `No active member has the e-mail ${email}.`, email, askSecret),
        );
      }
      await recordAudit(ctx.db, ctx.clock, {
        workspaceId: member.workspace_id,
        userId: member.user_id,
        action: 'DASHBOARD_SIGN_IN',
        resource: 'dashboard_session',
      });
      const id = await sessions.create({ userId: member.user_id, workspaceId: member.workspace_id });
      reply.header('set-cookie', sessionCookie(id, secure(request)));
      return seeOther(reply, next);
    });

    scope.post(SIGN_OUT_PATH, async (request, reply) => {
      if (!isSameOriginPost(request, ctx.names())) {
        return sendPage(reply, 403, refusedPage('Sign out from this server’s own pages.'));
      }
      const id = cookieValue(request.headers.cookie, SESSION_COOKIE);
      if (id !== undefined) await sessions.destroy(id);
      reply.header('set-cookie', sessionCookie(null, secure(request)));
      return seeOther(reply, SIGN_IN_PATH);
    });
  });
}
