// Audit log (§4.4) and members (§4.5): paging by cursor, filters, 400 on bad parameters, session
// callers, and workspace isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/contract/types.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let crm: string;
let writer: string;
let globexSession: string;

beforeAll(async () => {
  server = await startTestServer();
  crm = server.table('crm_contacts').id;
  writer = (
    await server.issueToken('ADMIN', {
      name: 'writer',
      env: '*',
      scopes: [{ tableId: crm, permissions: ['write'] }],
    })
  ).tokens.accessToken;
  for (let i = 0; i < 23; i += 1) {
    const created = await server.request('POST', `/api/tables/${crm}/records`, {
      token: writer,
      body: { email: `bulk${i}@example.com`, full_name: `Row ${i}` },
    });
    expect(created.status).toBe(201);
  }
  globexSession = server.ready.otherWorkspace.users[0]?.accessToken ?? '';
});

afterAll(async () => {
  await server?.close();
});

const audit = (query: string, token = server.user('MEMBER').accessToken) =>
  server.request('GET', `/api/workspace/audit-log${query}`, { token });

describe('audit log', () => {
  it('is newest first, 50 entries by default, and any active member may read it', async () => {
    const response = await audit('');
    expect(response.status).toBe(200);
    const entries = response.body.entries as AuditEntry[];
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.length).toBeLessThanOrEqual(50);
    const times = entries.map((e) => Date.parse(e.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(entries[0]?.action).toBe('RECORD_CREATED');
  });

  it('gives every entry the fields of §2.4, each a string; a record write carries the gate mode of its table', async () => {
    const response = await audit('?eventType=RECORD_CREATED&limit=1');
    const [entry] = response.body.entries as AuditEntry[];
    const fields = 'id userId tableId action resource environmentLabel gateModeAtEvaluation createdAt';
    for (const field of fields.split(' ') as Array<keyof AuditEntry>)
      expect(typeof entry?.[field], field).toBe('string');
    expect(entry).toMatchObject({
      tableId: crm,
      action: 'RECORD_CREATED',
      resource: 'record',
      environmentLabel: server.table('crm_contacts').environmentLabel,
      gateModeAtEvaluation: server.table('crm_contacts').gateMode,
    });
    expect(new Date(entry?.createdAt ?? '').toISOString()).toBe(entry?.createdAt);
  });

  it('walks every entry exactly once by cursor, with eventType as an exact filter', async () => {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?eventType=RECORD_CREATED&limit=7${cursor ? `&cursor=${cursor}` : ''}`;
      const response = await audit(query);
      expect(response.status).toBe(200);
      ids.push(...response.body.entries.map((e: AuditEntry) => e.id));
      for (const entry of response.body.entries) expect(entry.action).toBe('RECORD_CREATED');
      cursor = response.body.nextCursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(ids).toHaveLength(23);
    expect(new Set(ids).size).toBe(23);
    expect(pages).toBe(4);
    expect((await audit('?eventType=RECORD_CREATE')).body.entries).toEqual([]);
  });

  it('filters by since', async () => {
    server.clock.advance(10 * 60_000);
    try {
      const since = new Date(server.clock.now() - 1000).toISOString();
      await server.request('POST', `/api/tables/${crm}/records`, {
        token: writer,
        body: { email: 'late@example.com', full_name: 'Late' },
      });
      const response = await audit(`?since=${encodeURIComponent(since)}`);
      expect(response.body.entries).toHaveLength(1);
      expect(response.body.entries[0]).toMatchObject({ action: 'RECORD_CREATED', tableId: crm });
      expect(response.body.nextCursor).toBe('');
    } finally {
      server.clock.reset();
    }
  });

  it("reads a since without an offset as UTC, whatever the server's time zone", async () => {
    // An ISO-8601 time without an offset was read in the server's own zone: UTC+14 here moved it 14 hours back.
    const zone = process.env.TZ;
    process.env.TZ = 'Pacific/Kiritimati';
    server.clock.advance(20 * 60_000);
    try {
      const since = new Date(server.clock.now() - 1000).toISOString().replace(/Z$/, '');
      await server.request('POST', `/api/tables/${crm}/records`, {
        token: writer,
        body: { email: 'later@example.com', full_name: 'Later' },
      });
      const response = await audit(`?since=${encodeURIComponent(since)}`);
      expect(response.status).toBe(200);
      expect(response.body.entries.map((e: AuditEntry) => e.action)).toEqual(['RECORD_CREATED']);
    } finally {
      server.clock.reset();
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it.each([
    ['?limit=0'],
    ['?limit=201'],
    ['?limit=many'],
    ['?since=yesterday'],
    ['?since=2026-13-45T00:00:00Z'],
    // A day its month lacks: JavaScript's Date reads it as a day of the next month.
    ['?since=2026-02-29T00:00:00Z'],
    ['?since=2026-04-31'],
    ['?cursor=not-a-cursor'],
    ['?eventType='],
    ['?order=asc'],
  ])('answers 400 for %s', async (query) => {
    const response = await audit(query);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_query');
  });

  it('accepts a MANAGEMENT token with workspace:read:audit and refuses one without (403)', async () => {
    const withScope = await server.issueToken('OWNER', {
      name: 'a',
      env: '*',
      scopes: ['workspace:read:audit'],
    });
    expect((await audit('?limit=1', withScope.tokens.accessToken)).status).toBe(200);
    const without = await server.issueToken('OWNER', {
      name: 'm',
      env: '*',
      scopes: ['workspace:read:members'],
    });
    const refused = await audit('?limit=1', without.tokens.accessToken);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: 'missing_scope',
      details: { requiredScope: 'workspace:read:audit' },
    });
  });

  it("shows only the caller's workspace", async () => {
    const ours = new Set(server.ready.tables.map((t) => t.id));
    const theirs = await audit('?limit=200', globexSession);
    expect(theirs.status).toBe(200);
    expect(theirs.body.entries.length).toBeGreaterThan(0);
    for (const entry of theirs.body.entries as AuditEntry[])
      expect(ours.has(entry.tableId ?? '')).toBe(false);
  });
});

describe('members', () => {
  const expected = () =>
    ['OWNER', 'ADMIN', 'STEWARD', 'MEMBER'].map((role) => ({
      userId: server.user(role as 'OWNER').userId,
      email: server.user(role as 'OWNER').email,
      role,
      envScope: expect.any(Array),
    }));

  it('lists active members without the platform operator, to any member session', async () => {
    const response = await server.request('GET', '/api/workspace/members', {
      token: server.user('MEMBER').cliToken,
    });
    expect(response.status).toBe(200);
    expect(response.body.members).toEqual(expected());
    expect(JSON.stringify(response.body)).not.toContain('operator@example.com');
  });

  it('gives a MANAGEMENT token with workspace:read:members the same shape', async () => {
    const token = (
      await server.issueToken('ADMIN', { name: 'm', env: '*', scopes: ['workspace:read:members'] })
    ).tokens.accessToken;
    const response = await server.request('GET', '/api/workspace/members', { token });
    expect(response.body.members).toEqual(expected());
  });

  it('leaves out a member who is no longer active (§4.5: all active members)', async () => {
    const member = server.user('MEMBER');
    await server.sql('UPDATE gds.memberships SET active = false WHERE user_id = $1', [member.userId]);
    try {
      const response = await server.request('GET', '/api/workspace/members', {
        token: server.user('OWNER').accessToken,
      });
      expect(response.status).toBe(200);
      expect(response.body.members).toEqual(expected().filter((m) => m.role !== 'MEMBER'));
    } finally {
      await server.sql('UPDATE gds.memberships SET active = true WHERE user_id = $1', [member.userId]);
    }
  });

  it("shows only the caller's workspace", async () => {
    const response = await server.request('GET', '/api/workspace/members', { token: globexSession });
    expect(response.body.members.map((m: { email: string }) => m.email)).toEqual(['owner@globex.example']);
  });
});
