// The client's request paths are typed against the contract (src/contract/types.gen.ts, generated from
// openapi.yaml): a path it does not have fails `npm run typecheck` instead of answering 404 at run time. tsc
// checks the expected errors below (test/ is in tsconfig.json) and fails when a marked line is no error.
import { describe, expect, it } from 'vitest';
import { pathOf, uncheckedPath } from '../../src/client/transport.js';
import type { ApiPath, RequestOptions } from '../../src/client/transport.js';

describe('request paths typed against the contract', () => {
  it('takes a path of the contract, its parameters filled (URL-encoded) by pathOf', () => {
    const members: ApiPath = '/api/workspace/members';
    const status: ApiPath = pathOf('/api/tables/{tableId}/status', { tableId: 'a b/c' });
    const version = pathOf('/api/tables/{tableId}/gate1/versions/{version}', { tableId: 't', version: 'v3' });
    expect([members, status, version]).toEqual([
      '/api/workspace/members',
      '/api/tables/a%20b%2Fc/status',
      '/api/tables/t/gate1/versions/v3',
    ]);
  });

  it('refuses a misspelt path, template or parameter at compile time', () => {
    // @ts-expect-error -- not a path of openapi.yaml
    const misspelt: ApiPath = '/api/workspace/memebrs';
    // @ts-expect-error -- not a path of openapi.yaml
    const request: RequestOptions = { method: 'GET', path: '/api/whoami' };
    // @ts-expect-error -- pathOf takes only a template of openapi.yaml
    const template = () => pathOf('/api/tabels/{tableId}', { tableId: 't' });
    // @ts-expect-error -- the template's parameter is tableId
    const parameter = () => pathOf('/api/tables/{tableId}', { id: 't' });
    const tableId = 't';
    // @ts-expect-error -- a template literal is refused: this one would pass as /api/tables/{tableId} filled
    const literal: ApiPath = `/api/tables/${tableId}/gatee1`;
    expect([misspelt, request.path, typeof template, typeof parameter, literal]).toEqual([
      '/api/workspace/memebrs',
      '/api/whoami',
      'function',
      'function',
      '/api/tables/t/gatee1',
    ]);
  });

  it('takes any path only through uncheckedPath (gds api <path>)', () => {
    const typed: RequestOptions = { method: 'GET', path: uncheckedPath('/api/anything/at/all') };
    expect(typed.path).toBe('/api/anything/at/all');
  });
});
