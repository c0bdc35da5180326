// Flags shared by the governance commands: where an artifact goes (push, definitions push) and how often
// long work is polled (push --wait, status --watch). Only --interval reads a variable (GDS_INTERVAL).
import { Flags } from '@oclif/core';
import { DIALECTS } from '../core/artifacts/dialect.js';
import { textTooLong } from '../core/text-bounds.js';

const connectorDescription =
  'Connector the table lives behind, by id or name (gds connectors list); Gate 1 predicates and live preview run through it.';

/** `push [--connector]`: without it, the service takes the one connector whose schema holds the source. */
export const connectorFlag = Flags.string({
  description: `${connectorDescription} Default: the connector whose warehouse schema holds the source.`,
});

/** `definitions push`: §4.7 requires connectorId. */
export const requiredConnectorFlag = Flags.string({
  description: connectorDescription,
  required: true,
});

export const sourceFlag = Flags.custom<string>({
  description:
    'Warehouse object schema.table the artifact governs; required unless the file declares it (no fallback to the file name).',
  parse: async (input) => {
    if (!/^[^.\s]+\.[^.\s]+$/.test(input))
      throw new Error(`${input} is not schema.table, e.g. analytics.orders`);
    return input;
  },
})();

export const replaceFlag = Flags.string({
  description: 'Governance id of the artifact this file replaces (required when the name is taken).',
});

/** Seconds between two polls, decimals allowed; parsed to milliseconds. */
export const intervalFlag = Flags.custom<number>({
  description:
    'Longest wait between two polls, in seconds (default 3): the second poll comes after 0.25 s, each wait after it twice as long, up to this.',
  env: 'GDS_INTERVAL',
  default: 3000,
  defaultHelp: async () => '3',
  parse: async (input) => {
    const seconds = Number(input);
    if (!Number.isFinite(seconds) || seconds < 0.05 || seconds > 3600) {
      throw new Error(`${input} is not a number of seconds between 0.05 and 3600`);
    }
    return Math.round(seconds * 1000);
  },
})();

/** `push`, `definitions push`: the SQL dialect of a view (the dialect list lives beside the readers). */
export const dialectFlag = Flags.option({
  options: DIALECTS,
  description:
    'SQL dialect of a .sql view: postgres (read by PostgreSQL’s own grammar), redshift, snowflake, bigquery or databricks. A "-- dialect: <name>" line in the file says the same. Default: the type of the --connector when it is one of these, else postgres.',
})();

/** `push`, `definitions push`: one model (or source table) of a dbt properties file. */
export const modelFlag = Flags.string({
  description:
    'In a dbt properties file (models:/sources: lists), the model to push, or <source>.<table> for a source table; its columns, description and meta are pushed.',
});

/** `--filename` of push and definitions push: stdin has no name to tell its type by. */
export const filenameFlag = Flags.string({
  description:
    'With - (the artifact read from stdin): the file name it goes by, e.g. orders.sql; its extension gives the type, and the service records the name.',
});

/** `--env` of a command taking a table: among several tables of the name given, the one in this environment. */
export const tableEnvFlag = Flags.string({
  description: 'When the table name given is used in several environments, the environment of the one meant.',
});

/**
 * The `parse` of a flag of text the service keeps (a note, a reason, a name) within `max` characters
 * (src/core/text-bounds.ts): longer is exit 2 naming the limit, nothing sent, as the service would refuse it
 * (400 text_too_long).
 */
export function boundedText(name: string, max: number): (input: string) => Promise<string> {
  return async (input) => {
    const refusal = textTooLong(`--${name}`, input, max);
    if (refusal !== undefined) throw new Error(refusal.message);
    return input;
  };
}
