// src/core/scopes.ts: the mint-time rules as a pure function.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Role } from '../../src/core/scopes.js';
import { environmentAllows, planMint, ROLES, roleAtLeast, WORKSPACE_SCOPES } from '../../src/core/scopes.js';

const tables = new Map([
  ['t1', { id: 't1', slug: 'orders', ownerId: 'u-owner-of-t1' }],
  ['t2', { id: 't2', slug: 'customers', ownerId: 'someone-else' }],
]);
const caller = (role: Role, userId = 'u') => ({ role, userId });

describe('planMint', () => {
  it('turns table grants into DATA-API scope strings by slug', () => {
    expect(planMint(caller('ADMIN'), [{ tableId: 't1', permissions: ['read', 'write'] }], tables)).toEqual({
      ok: true,
      audience: 'DATA-API',
      scopes: ['tables:orders:read', 'tables:orders:write'],
    });
  });

  it('lets the table owner grant whatever their role, and nobody below ADMIN grant tables they do not own', () => {
    expect(
      planMint(caller('MEMBER', 'u-owner-of-t1'), [{ tableId: 't1', permissions: ['write'] }], tables).ok,
    ).toBe(true);
    const refused = planMint(caller('STEWARD'), [{ tableId: 't2', permissions: ['read'] }], tables);
    expect(refused).toMatchObject({ ok: false, status: 403, code: 'not_table_owner' });
  });

  it('answers 404 for a table it does not know', () => {
    expect(planMint(caller('OWNER'), [{ tableId: 'nope', permissions: ['read'] }], tables)).toMatchObject({
      ok: false,
      status: 404,
    });
  });

  it('follows the role rule for every workspace scope and role', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ROLES), fc.constantFrom(...WORKSPACE_SCOPES), (role, scope) => {
        const plan = planMint(caller(role), [scope], tables);
        const minimum: Role = scope.startsWith('workspace:read:') ? 'ADMIN' : 'STEWARD';
        expect(plan.ok).toBe(roleAtLeast(role, minimum));
        if (plan.ok) expect(plan).toEqual({ ok: true, audience: 'MANAGEMENT', scopes: [scope] });
        else expect(plan).toMatchObject({ status: 403, code: 'role_cannot_mint_scope' });
      }),
    );
  });

  it('refuses the certify scope next to table grants, and any mix of the two audiences', () => {
    const grant = { tableId: 't1', permissions: ['read' as const] };
    expect(planMint(caller('OWNER'), [grant, 'workspace:write:certify'], tables)).toMatchObject({
      status: 400,
      code: 'certify_scope_refused',
    });
    expect(planMint(caller('OWNER'), [grant, 'workspace:read:audit'], tables)).toMatchObject({
      status: 400,
      code: 'mixed_audiences',
    });
  });
});

describe('environmentAllows', () => {
  it('lets "*" act anywhere and a label only in its environment', () => {
    expect(environmentAllows('*', 'production')).toBe(true);
    expect(environmentAllows('dev', 'dev')).toBe(true);
    expect(environmentAllows('dev', 'production')).toBe(false);
  });
});
