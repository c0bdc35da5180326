// The dashboard's pages. Every value reaches the markup through the `html` tag, which escapes it.
import type { TableRow } from '../governance/tables.js';
import type { Doors } from '../doors.js';
import type { Html } from './html.js';
import { html, page } from './html.js';
import type { HomePage, SignalsPage, TablePage, Viewer } from './view.js';
import { SIGNALS_PAGE_SIZE, TABLES_PAGE_SIZE, viewerMayRevoke } from './view.js';
import type { IntegrationTokenRow } from '../auth/revocation.js';
import type { Role } from '../../core/scopes.js';
import { roleAtLeast } from '../../core/scopes.js';
import type { QueueEntry } from '../governance/notifications.js';
import { LIFECYCLE_STATES } from '../../core/lifecycle/index.js';
import { describeSignalDetails } from '../../core/signal-details.js';

export const SIGN_IN_PATH = '/dashboard/sign-in';
export const SIGN_OUT_PATH = '/dashboard/sign-out';
export const TOKENS_PATH = '/dashboard/tokens';
export const REVOKE_TOKEN_PATH = '/dashboard/tokens/revoke';

const CUSTODY: Record<TableRow['mode'], string> = {
  MODE_A: 'Mode A (registered warehouse object)',
  MODE_B: 'Mode B (custody table)',
};

function header(viewer: Viewer): Html {
  return html`<header>
    <p><a href="/dashboard">${viewer.workspaceName}</a> · <a href="${TOKENS_PATH}">Integration tokens</a></p>
    <form method="post" action="${SIGN_OUT_PATH}">
      <span>${viewer.displayName} (${viewer.email}, ${viewer.role})</span> <button>Sign out</button>
    </form>
  </header>`;
}

function rows<T>(items: T[], heads: string[], cells: (item: T) => unknown[], empty: string): Html {
  if (items.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<table>
    <thead>
      <tr>
        ${heads.map((h) => html`<th>${h}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${items.map(
        (item) =>
          html`<tr>
            ${cells(item).map((c) => html`<td>${c}</td>`)}
          </tr>`,
      )}
    </tbody>
  </table>`;
}

const orNone = (value: string | null | undefined) => (value ? value : '—');

/** `askSecret`: the server is reachable beyond its machine and asks for its sign-in secret (never filled in). */
export function signInPage(next: string, problem?: string, email = '', askSecret = false): string {
  const what = askSecret
    ? 'the e-mail of a member of your workspace and the sign-in secret this server printed when it started'
    : 'the e-mail of a member of your workspace';
  return page(
    'Sign in to the gds dashboard',
    html`${problem === undefined ? '' : html`<p role="alert">${problem}</p>`}
      <p>Sign in with ${what}.</p>
      <form method="post" action="${SIGN_IN_PATH}">
        <input type="hidden" name="next" value="${next}" /><label for="email">E-mail</label
        ><input id="email" name="email" type="email" required autocomplete="username" value="${email}" />
        ${
          askSecret
            ? html`<label for="secret">Sign-in secret</label
                ><input id="secret" name="secret" type="password" required autocomplete="off" />`
            : ''
        }
        <p><button>Sign in</button></p>
      </form>`,
  );
}

const tableLink = (id: string, name: string) =>
  html`<a href="/dashboard/tables/${encodeURIComponent(id)}">${name}</a>`;

function proofResult(entry: QueueEntry): string {
  if (!entry.proof) return 'no proof stored';
  const result = entry.proof.passed ? 'passed' : `failed (${entry.proof.failedPredicates.join(', ')})`;
  if (entry.proof.fresh) return result;
  const moved = entry.proof.changedSince.map((c) => `${c.what} v${c.from} → v${c.to}`).join(', ');
  return `${result}, stale: ${moved} since; submit it again to certify`;
}

function reviewQueue(queue: HomePage['queue']): Html {
  if (queue === null) return html``;
  return html`<section id="review-queue">
    <h2>Waiting for review</h2>
    ${rows(
      queue.entries,
      ['Table', 'Proof', 'Submitted by', 'Submitted'],
      (n) => [tableLink(n.tableId, n.tableName), proofResult(n), orNone(n.submittedBy.email), n.createdAt],
      'Nothing is waiting for review.',
    )}
    ${queue.more ? html`<p>More are waiting: <code>gds review</code> lists them all.</p>` : ''}
  </section>`;
}

/** A link to the tables list with these filters (and cursor). */
function listHref(filter: { state?: string | undefined; env?: string | undefined; cursor?: string }): string {
  const query = new URLSearchParams();
  if (filter.state) query.set('state', filter.state);
  if (filter.env) query.set('env', filter.env);
  if (filter.cursor) query.set('cursor', filter.cursor);
  const text = query.toString();
  return text === '' ? '/dashboard' : `/dashboard?${text}`;
}

function option(value: string, label: string, selected: string | undefined): Html {
  return value === (selected ?? '')
    ? html`<option value="${value}" selected>${label}</option>`
    : html`<option value="${value}">${label}</option>`;
}

function tableFilter(home: HomePage): Html {
  return html`<form method="get" action="/dashboard" id="table-filter">
    <label for="state">State</label>
    <select id="state" name="state">
      ${option('', 'Every state', home.filter.state)}
      ${LIFECYCLE_STATES.map((state) => option(state, state, home.filter.state))}
    </select>
    <label for="env">Environment</label>
    <select id="env" name="env">
      ${option('', 'Every environment', home.filter.env)}
      ${home.environments.map((env) => option(env, env, home.filter.env))}
    </select>
    <p><button>Show</button></p>
  </form>`;
}

/** Each door's base URL (spec: the dashboard shows them), for machines: REST, GraphQL and MCP. */
function doorsSection(doors: Doors): Html {
  return html`<section id="doors">
    <h2>Base URLs</h2>
    ${rows(
      [
        ['REST', doors.rest],
        ['GraphQL', doors.graphql],
        ['MCP', doors.mcp],
      ],
      ['Door', 'Base URL'],
      ([door, url]) => [door, html`<code>${url}</code>`],
      '',
    )}
  </section>`;
}

export function tablesPage(viewer: Viewer, home: HomePage, doors: Doors): string {
  const { filter } = home;
  const paging = html`<nav id="table-pages">
    ${filter.cursor ? html`<a href="${listHref({ ...filter, cursor: '' })}">First page</a>` : ''}
    ${
      home.nextCursor === null
        ? ''
        : html`<a rel="next" href="${listHref({ ...filter, cursor: home.nextCursor })}"
            >Next ${TABLES_PAGE_SIZE} tables</a
          >`
    }
  </nav>`;
  return page(
    'Tables',
    html`${home.problem === undefined ? '' : html`<p role="alert">${home.problem}</p>`}
      ${reviewQueue(home.queue)} ${doorsSection(doors)}
      <section id="tables">
        <h2>Tables</h2>
        ${tableFilter(home)}
        ${rows(
          home.tables,
          ['Table', 'Id', 'State', 'Gate mode', 'Custody mode', 'Environment'],
          (t) => [
            tableLink(t.id, t.name),
            html`<code>${t.id}</code>`,
            t.state,
            t.gateMode,
            CUSTODY[t.mode],
            t.environmentLabel,
          ],
          filter.state || filter.env || filter.cursor
            ? 'No tables on this page.'
            : 'This workspace has no tables yet. Register one with gds push.',
        )}
        ${paging}
      </section>`,
    header(viewer),
  );
}

export const signalsHref = (requestId: string, cursor?: string) =>
  `/dashboard/recertification-requests/${encodeURIComponent(requestId)}${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`;

function signalItems(signals: SignalsPage['signals']): Html {
  return html`<ol class="signals">
    ${signals.map(
      (s) => html`<li>${s.createdAt} by ${orNone(s.createdBy)}: ${describeSignalDetails(s.details)}</li>`,
    )}
  </ol>`;
}

/**
 * The signals merged into a request, oldest first: when, who, and its details; the latest 20, with a link
 * to every one when there are more.
 */
function signalList(request: TablePage['openRequests'][number]): Html {
  return html`${
    request.earlierSignals
      ? html`<p class="earlier-signals">
          The latest ${request.signals.length} of ${request.count}:
          <a href="${signalsHref(request.id)}">every signal</a>
        </p>`
      : ''
  }${signalItems(request.signals)}`;
}

/** Every signal of a request, a page at a time (oldest first). */
export function signalsPage(viewer: Viewer, view: SignalsPage): string {
  const { request } = view;
  return page(
    `Signals of ${request.id}`,
    html`<p>
        Recertification request <code>${request.id}</code> (${request.cause}) of
        <a href="/dashboard/tables/${request.tableId}">${request.tableName}</a>: ${request.count} signals,
        oldest first.
      </p>
      <section id="signals">${signalItems(view.signals)}</section>
      <nav id="signal-pages">
        ${view.cursor ? html`<a href="${signalsHref(request.id)}">First page</a>` : ''}
        ${
          view.nextCursor === null
            ? ''
            : html`<a rel="next" href="${signalsHref(request.id, view.nextCursor)}"
                >Next ${SIGNALS_PAGE_SIZE} signals</a
              >`
        }
      </nav>`,
    header(viewer),
  );
}

export function tablePage(viewer: Viewer, view: TablePage): string {
  const { table, certification, contract } = view;
  const summary = html`<dl>
    <dt>Id</dt>
    <dd><code id="table-id">${table.id}</code></dd>
    <dt>Governance id</dt>
    <dd><code>${table.governanceId}</code></dd>
    <dt>State</dt>
    <dd class="state" id="table-state">${table.state}</dd>
    <dt>Gate mode</dt>
    <dd>${table.gateMode}</dd>
    <dt>Custody mode</dt>
    <dd>${CUSTODY[table.mode]}</dd>
    <dt>Environment</dt>
    <dd>${table.environmentLabel}</dd>
    <dt>Source</dt>
    <dd>${orNone(table.source)}</dd>
    <dt>Versions</dt>
    <dd>
      definition ${table.definitionVersion}, gate1 ${table.gate1Version}, data ${table.dataVersion}, contract
      ${table.contractVersion}
    </dd>
    <dt>Certified</dt>
    <dd>
      ${certification ? `version ${certification.version} at ${certification.certifiedAt} by ${orNone(certification.certifiedBy)}` : 'never'}
    </dd>
  </dl>`;
  const semantic = contract
    ? html`<dl>
        <dt>Decision class</dt>
        <dd>${orNone(contract.intent)}</dd>
        <dt>Consumers</dt>
        <dd>${contract.allowedConsumers.length > 0 ? contract.allowedConsumers.join(', ') : '—'}</dd>
        <dt>Grain</dt>
        <dd>
          ${orNone(contract.grain)}${contract.grainKeyColumns.length > 0 ? ` (${contract.grainKeyColumns.join(', ')})` : ''}
        </dd>
        <dt>Meaning</dt>
        <dd>${orNone(contract.meaning)}</dd>
        <dt>Updated</dt>
        <dd>${contract.updatedAt}</dd>
      </dl>`
    : html`<p class="empty">No semantic contract yet: it is written at certification (gds contract set).</p>`;
  const body = html`${summary}
    <h2>Semantic contract</h2>
    ${semantic}
    <h2>Certification versions</h2>
    ${rows(
      view.versions,
      ['Version', 'Kind', 'Environment', 'Certified', 'By', 'Grain', 'Reason'],
      (v) => [
        v.version,
        v.restoredFrom === null ? v.kind : `${v.kind} of version ${v.restoredFrom}`,
        v.environmentLabel,
        v.certifiedAt,
        v.certifiedBy,
        orNone(v.grain),
        orNone(v.reason),
      ],
      'Never certified.',
    )}
    <h2>Open recertification requests</h2>
    ${rows(
      view.openRequests,
      ['Request', 'Cause', 'Filed', 'By', 'Signals'],
      (r) => [html`<code>${r.id}</code>`, r.cause, r.createdAt, orNone(r.createdBy), signalList(r)],
      'None open.',
    )}
    <h2>Recent gate jobs</h2>
    ${rows(
      view.jobs,
      ['Job', 'Gate', 'Status', 'Outcome', 'Created', 'Finished'],
      (j) => [
        html`<code>${j.id}</code>`,
        `Gate ${j.gate} (${j.type})`,
        j.status,
        j.error ?? (j.passed === null ? '—' : j.passed ? 'passed' : 'failed'),
        j.createdAt,
        orNone(j.finishedAt),
      ],
      'No gate job yet.',
    )}
    <h2>Gate 1 proofs</h2>
    ${rows(
      view.proofs,
      ['Proof', 'Kind', 'Result', 'Failed predicates', 'Taken at versions', 'By', 'At'],
      (p) => [
        html`<code>${p.id}</code>`,
        p.kind,
        p.passed ? 'passed' : 'failed',
        orNone(p.failedPredicates.join(', ')),
        p.versions,
        p.createdBy,
        p.createdAt,
      ],
      'No proof yet: gds gate submit stores one.',
    )}
    <h2>Audit, newest first</h2>
    ${rows(
      view.audit,
      ['When', 'Action', 'User', 'Environment', 'Gate mode'],
      (a) => [a.createdAt, a.action, orNone(a.user), orNone(a.environmentLabel), orNone(a.gateMode)],
      'No audit entry.',
    )}`;
  return page(table.name, body, header(viewer));
}

export function tokensPage(
  viewer: Viewer,
  tokens: IntegrationTokenRow[],
  csrf: string | null,
  problem?: string,
): string {
  const revoke = (token: IntegrationTokenRow): Html | string => {
    if (token.revokedAt !== null) return `revoked ${token.revokedAt}`;
    if (csrf === null || !viewerMayRevoke(viewer, token)) return '';
    return html`<form method="post" action="${REVOKE_TOKEN_PATH}">
      <input type="hidden" name="csrf" value="${csrf}" /><input
        type="hidden"
        name="token"
        value="${token.id}"
      />
      <button>Revoke</button>
    </form>`;
  };
  return page(
    'Integration tokens',
    html`${problem === undefined ? '' : html`<p role="alert">${problem}</p>`}
      <p>
        ${
          roleAtLeast(viewer.role as Role, 'ADMIN')
            ? 'The integration tokens of your workspace.'
            : 'The integration tokens you issued.'
        }
        Issue one with <code>gds tokens issue</code>; a revoked token is refused on its next call.
      </p>
      ${rows(
        tokens,
        ['Name', 'Client token', 'Audience', 'Environment', 'Scopes', 'Issued by', 'Last used', ''],
        (t) => [
          t.name,
          html`<code>${t.clientToken}</code>`,
          t.audience,
          t.environment === '*' ? 'every environment' : t.environment,
          t.scopes.join(', '),
          orNone(t.issuedBy),
          t.lastUsedAt ?? 'never',
          revoke(t),
        ],
        'No integration tokens.',
      )}`,
    header(viewer),
  );
}

export function notFoundPage(what: string, viewer?: Viewer): string {
  return page(
    'Not found',
    html`<p>${what}</p>
      <p><a href="/dashboard">All tables of your workspace</a></p>`,
    viewer ? header(viewer) : html``,
  );
}

export function refusedPage(message: string): string {
  return page(
    'Refused',
    html`<p role="alert">${message}</p>
      <p><a href="${SIGN_IN_PATH}">Sign in</a></p>`,
  );
}
