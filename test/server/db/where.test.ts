// The WHERE builder of the lists whose optional filters are written only when given (db/where.ts): the token
// lists, the table list and the audit log. A filter not given leaves no condition and no parameter, so each
// parameter's number is its place among those given.
import { describe, expect, it } from 'vitest';
import { WhereClause } from '../../../src/server/db/where.js';

describe('WhereClause', () => {
  it('is empty, with no parameter, when nothing is added or given', () => {
    const where = new WhereClause<string>()
      .given(undefined, (p) => `a = ${p}`)
      .given(null, (p) => `b = ${p}`);
    expect(where.sql).toBe('');
    expect(where.params).toEqual([]);
  });

  it('joins the conditions by AND, numbering the parameters in the order they are added', () => {
    const where = new WhereClause<string | string[]>();
    where.and(`workspace_id = ${where.param('ws_a')}`).and('active');
    where.given('CERTIFIED', (p) => `state = ${p}::text`).given(['dev', 'prod'], (p) => `env = ANY(${p})`);
    expect(where.sql).toBe('workspace_id = $1 AND active AND state = $2::text AND env = ANY($3)');
    expect(where.params).toEqual(['ws_a', 'CERTIFIED', ['dev', 'prod']]);
  });

  it('numbers a given filter after a filter not given as if that one were never there', () => {
    const where = new WhereClause<string>();
    where.and(`workspace_id = ${where.param('ws_a')}`);
    where.given(undefined, (p) => `user_id = ${p}`).given('itk_1', (p) => `id = ${p}`);
    expect(where.sql).toBe('workspace_id = $1 AND id = $2');
    expect(where.params).toEqual(['ws_a', 'itk_1']);
  });

  it('takes an empty string, an empty list and zero as given (only undefined and null are not)', () => {
    const where = new WhereClause<string | string[] | number>()
      .given('', (p) => `a = ${p}`)
      .given([], (p) => `b = ANY(${p})`)
      .given(0, (p) => `c = ${p}`);
    expect(where.sql).toBe('a = $1 AND b = ANY($2) AND c = $3');
    expect(where.params).toEqual(['', [], 0]);
  });

  it('numbers a parameter read outside the conditions (a LIMIT, a FROM) among them', () => {
    const where = new WhereClause<string | number>();
    const names = where.param('wanted');
    where.given('x', (p) => `a = ${p}`);
    expect(names).toBe('$1');
    expect(`${where.sql} LIMIT ${where.param(51)}`).toBe('a = $2 LIMIT $3');
    expect(where.params).toEqual(['wanted', 'x', 51]);
  });

  it('answers its parameters as a copy: changing it changes no later query', () => {
    const where = new WhereClause<string>().given('x', (p) => `a = ${p}`);
    where.params.push('stray');
    expect(where.params).toEqual(['x']);
  });
});
