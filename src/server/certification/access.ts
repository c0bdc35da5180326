// Who may act on the certification side. CLI paths take a person (session JWT or static CLI token);
// certify (§4.6) also takes a MANAGEMENT token, and refuses static CLI tokens (interactive sign-in only).
import type { Role } from '../../core/scopes.js';
import {
  ANY_ENVIRONMENT,
  envScopeAllows,
  environmentAllows,
  isRole,
  roleAtLeast,
} from '../../core/scopes.js';
import type { Caller, SessionCaller } from '../auth/caller.js';
import { requireManagement, requireSession } from '../auth/caller.js';
import type { Queryable } from '../db/handle.js';
import { forbidden, unauthorized } from '../errors.js';
import type { LoadOptions, TableRow } from '../governance/tables.js';
import { loadTable } from '../governance/tables.js';

export interface TableSubject {
  id: string;
  ownerId: string;
  environmentLabel: string;
}

/** 403 unless the person's role is at least `minimum` (for `what`, used in the message). */
export function requireRole(caller: SessionCaller, minimum: Role, what: string): void {
  if (!roleAtLeast(caller.role, minimum)) {
    throw forbidden('role_too_low', `Only ${minimum} or above can ${what}; your role is ${caller.role}.`, {
      requiredRole: minimum,
      role: caller.role,
    });
  }
}

/** A guard (see guardBeforeBody): a person (401 otherwise) of at least `minimum` (403 otherwise). */
export function personOfRole(minimum: Role, what: string): (caller: Caller) => SessionCaller {
  return (caller) => {
    const person = requirePerson(caller);
    requireRole(person, minimum, what);
    return person;
  };
}

/**
 * §5.6: a caller scoped to some environments acts on, and reads, only tables in those (403 otherwise). The one
 * environment check of every table endpoint a person or a MANAGEMENT token calls, reads included.
 */
export function requireEnvironment(caller: Caller, environmentLabel: string, tableId?: string): void {
  if (!inEnvironmentScope(caller, environmentLabel)) {
    throw forbidden(
      'environment_forbidden',
      `You may act only in ${scopeText(caller)}; ${tableId === undefined ? 'this table' : `table ${tableId}`} is in ${environmentLabel}. Ask a workspace admin to widen your environment scope.`,
      { environmentLabel, ...(tableId === undefined ? {} : { tableId }) },
    );
  }
}

/** requireEnvironment for the environment a promotion or bundle lands in, which no table is in yet. */
export function requireTargetEnvironment(caller: Caller, environmentLabel: string): void {
  if (!inEnvironmentScope(caller, environmentLabel)) {
    throw forbidden(
      'environment_forbidden',
      `You may act only in ${scopeText(caller)}; ${environmentLabel}, the environment you promote to, is outside your scope. Promote to one of those, or ask a workspace admin to add ${environmentLabel} to your environment scope.`,
      { environmentLabel, target: true },
    );
  }
}

function scopeText(caller: Caller): string {
  return caller.kind === 'session' ? caller.envScope.join(', ') || 'no environment' : caller.env;
}

/** The environments a caller may see, for a list's WHERE clause: null when every one (inEnvironmentScope's rule). */
export function visibleEnvironments(caller: Caller): string[] | null {
  if (caller.kind === 'session') return caller.envScope.includes(ANY_ENVIRONMENT) ? null : caller.envScope;
  return caller.env === ANY_ENVIRONMENT ? null : [caller.env];
}

/** Every environment the workspace has: its connectors' and tables' labels, sorted. */
export async function workspaceEnvironments(q: Queryable, workspaceId: string): Promise<string[]> {
  const rows = await q.query<{ label: string }>(
    `SELECT environment_label AS label FROM gds.connectors WHERE workspace_id = $1
     UNION SELECT environment_label FROM gds.tables WHERE workspace_id = $1`,
    [workspaceId],
  );
  return rows.map((r) => r.label).sort();
}

/**
 * The integration-token environments a person sees and acts on (null: every one): those of their scope,
 * and `*` only with every environment of the workspace (`workspaceEnvs`), as minting one needs (§5.6).
 */
export function visibleTokenEnvironments(caller: SessionCaller, workspaceEnvs: string[]): string[] | null {
  const scope = visibleEnvironments(caller);
  if (scope === null || workspaceEnvs.every((e) => scope.includes(e))) return null;
  return scope;
}

/** Whether the caller may act in (and read) `environmentLabel`; every environment check reads this rule. */
export function inEnvironmentScope(caller: Caller, environmentLabel: string): boolean {
  return caller.kind === 'session'
    ? envScopeAllows(caller.envScope, environmentLabel)
    : environmentAllows(caller.env, environmentLabel);
}

/** An active table of the caller's workspace (404 otherwise) in an environment the caller may act in (403). */
export async function loadTableInScope(
  q: Queryable,
  caller: Caller,
  tableId: string,
  options: LoadOptions = {},
): Promise<TableRow> {
  const table = await loadTable(q, caller.workspaceId, tableId, options);
  requireEnvironment(caller, table.environmentLabel, table.id);
  return table;
}

/** guardBeforeBody's check of a route of one table: 404 when there is none, 403 outside the caller's environments. */
export async function tableInScope(ctx: { db: Queryable }, caller: Caller, tableId: string): Promise<void> {
  await loadTableInScope(ctx.db, caller, tableId);
}

/** A person on a CLI path: session JWT or static CLI token, never an integration token (401). */
export function requirePerson(caller: Caller): SessionCaller {
  return requireSession(caller);
}

/**
 * Certify's caller check before the table is known: a browser session of STEWARD or above, or a
 * MANAGEMENT token with `workspace:write:certify`. A static CLI token is 401 (run `gds auth login`).
 */
export function requireCertifier(caller: Caller): Caller {
  if (caller.kind === 'session') {
    if (caller.via === 'cli_token') {
      throw unauthorized(
        'interactive_login_required',
        'Certification needs an interactive sign-in, not a static CLI token: run `gds auth login` and try again.',
      );
    }
    requireRole(caller, 'STEWARD', 'certify a table');
    return caller;
  }
  return requireManagement(caller, 'workspace:write:certify', false);
}

/**
 * A MANAGEMENT token has write permission on a table when its issuer could grant table write today
 * (§2.2: the table owner or a workspace admin), so a token never reaches further than the person who
 * holds it. (Its environment is checked apart, by `requireEnvironment`.)
 */
export async function requireTokenTableWrite(
  q: Queryable,
  caller: Caller,
  table: TableSubject,
): Promise<void> {
  if (caller.kind === 'session') return;
  const [member] = await q.query<{ role: string }>(
    'SELECT role FROM gds.memberships WHERE workspace_id = $1 AND user_id = $2 AND active',
    [caller.workspaceId, caller.userId],
  );
  const isAdmin = member !== undefined && isRole(member.role) && roleAtLeast(member.role, 'ADMIN');
  if (!isAdmin && table.ownerId !== caller.userId) {
    throw forbidden(
      'table_write_forbidden',
      `This token has no write permission on table ${table.id}: its issuer must own the table or be a workspace admin.`,
      { tableId: table.id },
    );
  }
}
