// The base of the `gds records` commands: the table argument (an id, or the name of a table the DATA-API
// token grants) resolved once, then the command's one service call with the client.
import type { Command } from '@oclif/core';
import { Args, Flags } from '@oclif/core';
import type { ApiClient } from '../client/index.js';
import type { RecordValues, TableGrant } from '../contract/types.js';
import { ApiCommand } from './api-command.js';
import { CliError, ExitCode, restated } from '../core/errors.js';
import { resolveRecordsTable, parseRecordValues } from '../services/records.js';
import { drawForTable } from '../services/tokens.js';
import { readBoundedText } from '../io/input.js';
import { shellWord } from '../core/shell-word.js';

export const tableArg = Args.string({
  description: 'The table: its id, or the name of a table your DATA-API token grants.',
  required: true,
});

export const recordIdArg = Args.string({
  description: 'The record id, as records list shows it.',
  required: true,
});

/** `--data JSON` / `-f FILE|-`: the column values of one record. */
export const recordInputFlags = {
  data: Flags.string({
    char: 'd',
    description: 'The record as a JSON object of column values.',
    exclusive: ['file'],
  }),
  file: Flags.string({
    char: 'f',
    description:
      'Read the JSON object from this file (- for stdin; stdin is read when piped and neither is given).',
    exclusive: ['data'],
  }),
};

/** The body of a request may be 25 MB (the service's limit): one record never needs more. */
const MAX_RECORD_BYTES = 25 * 1024 * 1024;

export abstract class RecordsCommand<T extends typeof Command> extends ApiCommand<T> {
  /** What the command does to rows: a person's CLI token draws a DATA-API token with these permissions. */
  protected readonly tablePermissions: TableGrant['permissions'] = ['read'];

  /**
   * Runs `work` with the client and the table id of the `table` argument. Holding a person's CLI token (or
   * sign-in), gds first draws a 60-minute DATA-API token for that one table on it.
   */
  protected async withTable<R>(
    ref: string,
    work: (client: ApiClient, tableId: string) => Promise<R>,
  ): Promise<R> {
    let drawnFor: string | undefined;
    const draw = async (personal: ApiClient) => {
      const drawn = await drawForTable(personal, ref, this.tablePermissions);
      drawnFor = drawn.tableId;
      return drawn.request;
    };
    return this.withClient(
      async (client, session) =>
        work(client, drawnFor ?? (await resolveRecordsTable(client, ref, session.credentials?.token))),
      { draw },
    );
  }

  /**
   * withTable for one record: a record the table lacks (404, exit 5) is said with the table as the person
   * named it, and where its record ids are listed.
   */
  protected async withRecord<R>(
    ref: string,
    recordId: string,
    work: (client: ApiClient, tableId: string) => Promise<R>,
  ): Promise<R> {
    let label = ref;
    try {
      return await this.withTable(ref, (client, tableId) => {
        label = this.tableLabel(ref, tableId);
        return work(client, tableId);
      });
    } catch (error) {
      if (!(error instanceof CliError) || error.code !== 'record_not_found') throw error;
      throw restated(error, {
        message: `Record ${recordId} does not exist in table ${label}.`,
        suggestion: `gds records list ${shellWord(label)} shows the ids of its records.`,
      });
    }
  }

  /** The record of `--data`, `-f` or piped stdin; a usage error (nothing sent) when none is given. */
  protected async recordInput(flags: {
    data?: string | undefined;
    file?: string | undefined;
  }): Promise<RecordValues> {
    if (flags.data !== undefined) return parseRecordValues(flags.data, '--data');
    const source = flags.file ?? (process.stdin.isTTY === true ? undefined : '-');
    if (source === undefined) {
      throw new CliError('No record given.', {
        exitCode: ExitCode.Usage,
        code: 'no_input',
        suggestion: `Pass --data '{"column":"value"}', -f record.json, or pipe the JSON object in.`,
      });
    }
    const input = await readBoundedText(source, {
      flag: '-f',
      maxBytes: MAX_RECORD_BYTES,
      what: 'the record',
    });
    return parseRecordValues(input.text, input.name);
  }
}
