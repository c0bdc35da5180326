// The dashboard's pages. Every value reaches the markup through the `html` tag, which escapes it.
import type { TableRow } from '../governance/tables.js';
import type { Html } from './html.js';
import { html, page } from './html.js';
import type { TablePage, Viewer } from './view.js';

export const SIGN_IN_PATH = '/dashboard/sign-in';
export const SIGN_OUT_PATH = '/dashboard/sign-out';

const CUSTODY: Record<TableRow['mode'], string> = {
  MODE_A: 'Mode A (registered warehouse object)',
  MODE_B: 'Mode B (custody table)',
};

function header(viewer: Viewer): Html {
  return html`<header>
    <p><a href="/dashboard">${viewer.workspaceName}</a></p>
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

export function signInPage(next: string, problem?: string, email = ''): string {
  return page(
    'Sign in to the gds dashboard',
    html`${problem === undefined ? '' : html`<p role="alert">${problem}</p>`}
      <p>Sign in with the e-mail of a member of your workspace.</p>
      <form method="post" action="${SIGN_IN_PATH}">
        <input type="hidden" name="next" value="${next}" /><label for="email">E-mail</label
        ><input id="email" name="email" type="email" required autocomplete="username" value="${email}" />
        <p><button>Sign in</button></p>
      </form>`,
  );
}

export function tablesPage(viewer: Viewer, tables: TableRow[]): string {
  return page(
    'Tables',
    rows(
      tables,
      ['Table', 'Id', 'State', 'Gate mode', 'Custody mode', 'Environment'],
      (t) => [
        html`<a href="/dashboard/tables/${encodeURIComponent(t.id)}">${t.name}</a>`,
        html`<code>${t.id}</code>`,
        t.state,
        t.gateMode,
        CUSTODY[t.mode],
        t.environmentLabel,
      ],
      'This workspace has no tables yet. Register one with gds push.',
    ),
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
    <dd>definition ${table.definitionVersion}, gate1 ${table.gate1Version}, data ${table.dataVersion}</dd>
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
      ['Request', 'Cause', 'Filed', 'By'],
      (r) => [html`<code>${r.id}</code>`, r.cause, r.createdAt, orNone(r.createdBy)],
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
