// A connector's name wherever its id goes (`--connector warehouse-dev` as well as `--connector con_…`): the
// connectors are read once per client with one `GET /api/connectors`; the id matches first, then the name
// (case-insensitive). Neither is exit 5 with the nearest name or id and the list of connectors.
import { CliError, ExitCode } from '../core/errors.js';
import type { ApiClient } from '../client/index.js';
import { ApiError } from '../client/errors.js';
import type { Connector } from '../client/areas/connectors.js';
import { closest } from '../core/did-you-mean.js';
import { echoed } from '../core/echo.js';
import { lines } from '../core/terminal-text.js';

export type ConnectorRefClient = Pick<ApiClient, 'connectors'>;

const listed = new WeakMap<object, Promise<Connector[]>>();

/** The workspace's connectors, read once per client (a failed read is not remembered). */
export function connectorsOf(client: ConnectorRefClient, signal?: AbortSignal): Promise<Connector[]> {
  let connectors = listed.get(client);
  if (connectors === undefined) {
    connectors = client.connectors.list(signal === undefined ? {} : { signal });
    connectors.catch(() => listed.delete(client));
    listed.set(client, connectors);
  }
  return connectors;
}

/** The connectors as the errors list them, one a line: id, name, environment. */
export function connectorLines(connectors: readonly Connector[]): string[] {
  return connectors.map((c) => `  ${c.id}  ${c.name}  ${c.environmentLabel}`);
}

/** The connector `ref` names, by id or else by name; exit 5 with "did you mean" when none does. */
export function findConnector(
  connectors: readonly Connector[],
  ref: string,
  flag = '--connector',
): Connector {
  const byId = connectors.find((c) => c.id === ref);
  if (byId !== undefined) return byId;
  const byName = connectors.filter((c) => c.name.toLowerCase() === ref.toLowerCase());
  const [only] = byName;
  if (only !== undefined && byName.length === 1) return only;
  if (byName.length > 1)
    throw new CliError(
      lines`${byName.length} connectors are named ${echoed(ref)}:\n${connectorLines(byName)}`,
      {
        exitCode: ExitCode.Usage,
        code: 'ambiguous_connector_name',
        suggestion: `Pass the id of the one you mean as ${flag}.`,
        details: { name: ref, connectors: byName.map((c) => c.id) },
      },
    );
  const near = closest(ref, [...connectors.map((c) => c.name), ...connectors.map((c) => c.id)]);
  const list = connectors.length === 0 ? [' Your workspace has none.'] : ['', ...connectorLines(connectors)];
  throw new CliError('Connector not found', {
    exitCode: ExitCode.NotFound,
    code: 'connector_not_found',
    suggestion: lines`${near === undefined ? `No connector ${echoed(ref)} in your workspace.` : `Did you mean ${near}?`} ${flag} takes a connector's id or name:${list}`,
    details: { connector: ref, ...(near === undefined ? {} : { didYouMean: near }) },
  });
}

/**
 * The id to send for `--connector REF`. A token that may not list connectors (a MANAGEMENT token) sends
 * REF as it is, and the service judges it.
 */
export async function resolveConnectorId(
  client: ConnectorRefClient,
  ref: string,
  options: { flag?: string; signal?: AbortSignal } = {},
): Promise<string> {
  let connectors: Connector[];
  try {
    connectors = await connectorsOf(client, options.signal);
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return ref;
    throw error;
  }
  return findConnector(connectors, ref, options.flag).id;
}
