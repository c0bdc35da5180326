import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import type { HttpMethod } from '../client/index.js';
import { parseField, parseHeader } from '../services/api-call.js';

const methods: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export default class Api extends ApiCommand<typeof Api> {
  static override summary = 'Make an authenticated call to any path of the service and print the answer.';
  static override description =
    'For anything without its own command, like `gh api`. The call goes to the API base of your credentials ' +
    'with your token, so PATH must start with / (no URLs to other hosts). -f key=value fields become a JSON ' +
    'body for POST, PUT and PATCH, or the query for GET and DELETE; with fields and no -X the method is POST. ' +
    '-F types true, false, null and numbers. --input sends a JSON file (or - for stdin) as the body, and the ' +
    'fields then go into the query. The body of the answer is printed on stdout: indented on a terminal, one ' +
    'compact line otherwise and under --json. A non-2xx answer prints its error body on stderr and exits with ' +
    'the code of its status (3 for 401, 4 for 403, 5 for 404, 6 for 409, 7 for 400/422, 8 for 429, 9 for 5xx).';
  static override examples = [
    '<%= config.bin %> api /api/workspace/members',
    '<%= config.bin %> api /api/workspace/audit-log -X GET -f eventType=TABLE_CERTIFIED -F limit=5',
    '<%= config.bin %> api /api/tables/t_42/records -f name=Ada -f email=ada@example.com',
    'jq -n \'{records:[{data:{name:"Ada"}}]}\' | <%= config.bin %> api /api/tables/t_42/bulk-update --input -',
  ];
  static override args = {
    path: Args.string({
      description: 'Path of the service, from /api on (a query string is allowed).',
      required: true,
    }),
  };
  static override flags = {
    method: Flags.custom<HttpMethod>({
      char: 'X',
      description: 'HTTP method: GET, POST, PUT, PATCH or DELETE.',
      parse: async (input) => {
        const method = input.toUpperCase() as HttpMethod;
        if (!methods.includes(method)) throw new Error(`Expected one of ${methods.join(', ')}, got ${input}`);
        return method;
      },
    })(),
    field: Flags.custom<readonly [string, string | number | boolean | null]>({
      char: 'f',
      description: 'A string field key=value (repeatable).',
      multiple: true,
      parse: async (input) => parseField(input, false),
    })(),
    'typed-field': Flags.custom<readonly [string, string | number | boolean | null]>({
      char: 'F',
      description: 'A typed field key=value: true, false, null and numbers keep their type (repeatable).',
      multiple: true,
      parse: async (input) => parseField(input, true),
    })(),
    input: Flags.string({
      description: 'A file holding the JSON body, or - for stdin.',
    }),
    header: Flags.custom<readonly [string, string]>({
      char: 'H',
      description: "An extra request header 'Name: value' (repeatable).",
      multiple: true,
      parse: async (input) => parseHeader(input),
    })(),
  };

  async run(): Promise<void> {
    const { callApi } = await import('../services/api-call.js');
    const { input, method, header } = this.flags;
    const body = input === undefined ? undefined : await this.readJsonBody(input);
    const fields = [...pairs(this.flags.field), ...pairs(this.flags['typed-field'])];
    const headers = pairs(header);
    const result = await this.withClient((client, session) =>
      callApi(client, session.baseUrl, { path: this.args.path, method, fields, body, headers }),
    );
    if (result.exitCode !== 0) {
      this.printErrorBody(result.body);
      this.exit(result.exitCode);
    }
    if (result.body === undefined) return;
    if (!this.out.json && this.out.stdout.isTTY === true)
      this.out.print(JSON.stringify(result.body, null, 2));
    else this.out.record(result.body as object);
  }

  private async readJsonBody(source: string): Promise<unknown> {
    const { readTextInput } = await import('../cli/input.js');
    const { CliError, ExitCode } = await import('../cli/errors.js');
    const { name, text } = await readTextInput(source, { flag: '--input' });
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new CliError(`${name} is not JSON: ${(error as Error).message}`, {
        exitCode: ExitCode.Usage,
        code: 'invalid_input',
        suggestion: 'The service takes JSON bodies; check the file, or use -f key=value fields.',
      });
    }
  }

  private printErrorBody(body: unknown): void {
    if (this.out.json) this.out.errorRecord(body as object);
    else this.out.info(JSON.stringify(body, null, 2));
  }
}

/** A repeatable key/value flag: a list from the command line, one pair when read from its GDS_ variable. */
function pairs<V>(
  value: ReadonlyArray<readonly [string, V]> | undefined,
): ReadonlyArray<readonly [string, V]> {
  if (value === undefined) return [];
  const one = typeof value[0] === 'string';
  return one ? [value as unknown as readonly [string, V]] : value;
}
