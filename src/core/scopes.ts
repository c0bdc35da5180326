// Roles, token audiences, scope strings and the mint-time rules of spec §2.2 and §5. Pure: no I/O.

export const ROLES = ['OWNER', 'ADMIN', 'STEWARD', 'MEMBER'] as const;
export type Role = (typeof ROLES)[number];

export type Audience = 'DATA-API' | 'MANAGEMENT';
/** The audience of a person's sign-in token, as opposed to an integration token. */
export const SESSION_AUDIENCE = 'session';

/** `env: "*"` mints an environment-agnostic token; any other value names one environment. */
export const ANY_ENVIRONMENT = '*';

export const WORKSPACE_SCOPES = [
  'workspace:read:audit',
  'workspace:read:members',
  'workspace:write:certify',
  'workspace:write:definition',
  'workspace:write:recertify',
] as const;
export type WorkspaceScope = (typeof WORKSPACE_SCOPES)[number];

export type TablePermission = 'read' | 'write';

const RANK: Record<Role, number> = { OWNER: 4, ADMIN: 3, STEWARD: 2, MEMBER: 1 };

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

export function roleAtLeast(role: Role, minimum: Role): boolean {
  return RANK[role] >= RANK[minimum];
}

/** A workspace admin in the spec's sense: ADMIN or OWNER. */
export function isWorkspaceAdmin(role: Role): boolean {
  return roleAtLeast(role, 'ADMIN');
}

export function isWorkspaceScope(value: unknown): value is WorkspaceScope {
  return typeof value === 'string' && (WORKSPACE_SCOPES as readonly string[]).includes(value);
}

export function tableScope(slug: string, permission: TablePermission): string {
  return `tables:${slug}:${permission}`;
}

/** Lowest role allowed to mint a workspace scope: read scopes need ADMIN, write scopes STEWARD. */
export function minimumRoleToMint(scope: WorkspaceScope): Role {
  return scope.startsWith('workspace:read:') ? 'ADMIN' : 'STEWARD';
}

export function environmentAllows(tokenEnv: string, targetEnv: string | null): boolean {
  return tokenEnv === ANY_ENVIRONMENT || tokenEnv === targetEnv;
}

/** Whether a member's environment scope takes in `environmentLabel`: `*` in it is every environment. */
export function envScopeAllows(envScope: readonly string[], environmentLabel: string): boolean {
  return envScope.includes(ANY_ENVIRONMENT) || envScope.includes(environmentLabel);
}

export interface TableGrantRequest {
  tableId: string;
  permissions: TablePermission[];
}

/** What the minting code knows about a table named in a grant. */
export interface MintableTable {
  id: string;
  slug: string;
  ownerId: string;
}

export interface MintCaller {
  userId: string;
  role: Role;
}

export type MintRefusal = {
  ok: false;
  status: 400 | 403 | 404;
  code: string;
  message: string;
  details?: unknown;
};
export type MintPlan = { ok: true; audience: Audience; scopes: string[] } | MintRefusal;

/**
 * Decides the audience and scope strings of a requested token, or why it is refused. `scopes` is
 * the request body's list: all table grants (DATA-API) or all workspace scope strings
 * (MANAGEMENT). `tables` resolves the grants' table ids within the caller's workspace.
 */
export function planMint(
  caller: MintCaller,
  scopes: ReadonlyArray<TableGrantRequest | string>,
  tables: ReadonlyMap<string, MintableTable>,
): MintPlan {
  const grants = scopes.filter((s): s is TableGrantRequest => typeof s === 'object');
  const names = scopes.filter((s): s is string => typeof s === 'string');
  if (grants.length > 0 && names.includes('workspace:write:certify')) {
    return refuse(
      400,
      'certify_scope_refused',
      'A DATA-API token cannot carry workspace:write:certify. Request a separate MANAGEMENT token whose scopes are workspace scope strings only.',
    );
  }
  if (grants.length > 0 && names.length > 0) {
    return refuse(
      400,
      'mixed_audiences',
      'One token carries one audience: send either table grants ({tableId, permissions}) for a DATA-API token or workspace scope strings for a MANAGEMENT token, not both.',
    );
  }
  return grants.length > 0 ? planDataApi(caller, grants, tables) : planManagement(caller, names);
}

function planDataApi(
  caller: MintCaller,
  grants: TableGrantRequest[],
  tables: ReadonlyMap<string, MintableTable>,
): MintPlan {
  const scopes = new Set<string>();
  for (const grant of grants) {
    const table = tables.get(grant.tableId);
    if (!table) {
      return refuse(404, 'table_not_found', `Table ${grant.tableId} does not exist in this workspace.`, {
        tableId: grant.tableId,
      });
    }
    if (table.ownerId !== caller.userId && !isWorkspaceAdmin(caller.role)) {
      return refuse(
        403,
        'not_table_owner',
        `Only the owner of table ${grant.tableId} or a workspace admin (ADMIN, OWNER) can grant access to it; your role is ${caller.role}.`,
        { tableId: grant.tableId, role: caller.role },
      );
    }
    for (const permission of grant.permissions) scopes.add(tableScope(table.slug, permission));
  }
  return { ok: true, audience: 'DATA-API', scopes: [...scopes] };
}

function planManagement(caller: MintCaller, names: string[]): MintPlan {
  for (const name of names) {
    if (!isWorkspaceScope(name)) {
      return refuse(400, 'unknown_scope', `Unknown scope ${name}.`, { scope: name, known: WORKSPACE_SCOPES });
    }
    const minimum = minimumRoleToMint(name);
    if (!roleAtLeast(caller.role, minimum)) {
      return refuse(
        403,
        'role_cannot_mint_scope',
        `Minting ${name} needs role ${minimum} or above; your role is ${caller.role}.`,
        { scope: name, requiredRole: minimum, role: caller.role },
      );
    }
  }
  return { ok: true, audience: 'MANAGEMENT', scopes: [...new Set(names)] };
}

function refuse(
  status: MintRefusal['status'],
  code: string,
  message: string,
  details?: unknown,
): MintRefusal {
  return details === undefined
    ? { ok: false, status, code, message }
    : { ok: false, status, code, message, details };
}
