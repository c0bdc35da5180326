import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import type { HttpMethod } from '../client/index.js';
import { parseField, parseHeader, callApi, nextPageQuery, pageItems } from '../services/api-call.js';
import { CliError, ExitCode } from '../core/errors.js';
import { jsonSegments } from '../cli/json-colour.js';
import { stripControlCharacters } from '../core/terminal-text.js';
import { readTextInput } from '../io/input.js';
import { cachedCall, parseCacheDuration } from '../services/api-cache.js';
import { echoed, echoedPath } from '../core/echo.js';

const methods: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export default class Api extends ApiCommand<typeof Api> {
  static override pager = true;
  static override summary = 'Make an authenticated call to any path of the service and print the answer.';
  static override description =
    'For anything without its own command, like `gh api`. The call goes to the API base of your credentials ' +
    'with your token, so PATH is a path of the service (a missing leading / is added; no URLs to other ' +
    'hosts). -f key=value fields become a JSON ' +
    'body for POST, PUT and PATCH, or the query for GET and DELETE; with fields and no -X the method is POST. ' +
    '-F/--field types true, false, null and numbers; -f/--raw-field sends strings as written. --input sends a JSON file (or - for stdin) as the body, and the ' +
    'fields then go into the query. The body of the answer is printed on stdout: indented and coloured on a ' +
    'terminal (as gh api), one compact line otherwise and under --json. A non-2xx answer prints its error body on stderr and exits with ' +
    'the code of its status (3 for 401, 4 for 403, 5 for 404, 6 for 409/412, 7 for 400/422, 8 for 429, 9 for 5xx). ' +
    'The records routes (/api/tables/ID/records, bulk-update, import) take a DATA-API token, as the spec has it: ' +
    'a profile or SERVICE_TOKEN holding one (gds tokens issue); a sign-in or CLI token gets 401 there.';
  static override examples = [
    '<%= config.bin %> api /api/workspace/members',
    '<%= config.bin %> api /api/workspace/audit-log -X GET -f eventType=TABLE_CERTIFIED -F limit=5',
    '<%= config.bin %> api /api/tables/t_42/records -f name=Ada -f email=ada@example.com',
    'jq -n \'{records:[{data:{name:"Ada"}}]}\' | <%= config.bin %> api /api/tables/t_42/bulk-update --input -',
    '<%= config.bin %> api api/workspace/audit-log -X GET -F limit=200 --paginate -q .action',
    "<%= config.bin %> api /api/tables/t_42/records -F name=Ada -F 'tags[]=vip' -i",
    '<%= config.bin %> api /api/tables/t_42/records -F notes=@notes.txt --silent',
  ];
  static override baseFlags = {
    ...ApiCommand.baseFlags,
    jq: Flags.string({
      char: 'q',
      description: ApiCommand.baseFlags.jq.description ?? '',
      helpGroup: 'GLOBAL',
    }),
  };
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
        if (!methods.includes(method))
          throw new Error(`Expected one of ${methods.join(', ')}, got ${echoed(input)}`);
        return method;
      },
    })(),
    // As gh api: -F/--field is the typed field, -f/--raw-field the string one. --typed-field (gds's earlier
    // name for -F) stays as an alias; --field was the string field until it became gh's.
    field: Flags.custom<readonly [string, string | number | boolean | null]>({
      char: 'F',
      aliases: ['typed-field'],
      description:
        'A typed field key=value: true, false, null and numbers keep their type; @file (or @-) reads the value ' +
        'from a file (or stdin). key[sub]=v and key[]=v build nested objects and arrays (repeatable).',
      multiple: true,
      parse: async (input) => parseField(input, true),
    })(),
    'raw-field': Flags.custom<readonly [string, string | number | boolean | null]>({
      char: 'f',
      description: 'A string field key=value, sent as written (repeatable).',
      multiple: true,
      parse: async (input) => parseField(input, false),
    })(),
    input: Flags.string({
      description: 'A file holding the JSON body, or - for stdin.',
    }),
    paginate: Flags.boolean({
      description:
        "Follow every page of a GET (the answer's nextCursor, or nextPage): one NDJSON line per item of every page.",
    }),
    include: Flags.boolean({
      char: 'i',
      description:
        'Print the HTTP status line and the response headers before the body (under --json, a {"response":{status,headers}} line on stderr).',
    }),
    silent: Flags.boolean({ description: 'Print nothing of a successful answer (the exit code says it).' }),
    cache: Flags.string({
      description:
        "Keep a GET's successful answer this long (3600s, 60m, 1h) and print it again without asking the " +
        'service, as gh api --cache; kept under $XDG_CACHE_HOME/gds/api, readable by you alone.',
    }),
    header: Flags.custom<readonly [string, string]>({
      char: 'H',
      description: "An extra request header 'Name: value' (repeatable).",
      multiple: true,
      parse: async (input) => parseHeader(input),
    })(),
  };

  async run(): Promise<void> {
    const { input, method, header, paginate, include, silent } = this.flags;
    this.refuseStdinTwice();
    const body = input === undefined ? undefined : await this.readJsonBody(input);
    const fields = [...(this.flags['raw-field'] ?? []), ...(await this.withFiles(this.flags.field ?? []))];
    const headers = header ?? [];
    const sent = method ?? (fields.length > 0 || body !== undefined ? 'POST' : 'GET');
    if (paginate && sent !== 'GET') {
      throw new CliError('--paginate reads pages of a GET; this call is not a GET.', {
        exitCode: ExitCode.Usage,
        code: 'paginate_not_get',
        suggestion: 'Give the fields with -X GET so they go into the query.',
      });
    }
    const cacheFor = this.flags.cache;
    const cacheMs = cacheFor === undefined ? undefined : parseCacheDuration(cacheFor);
    await this.withClient(async (client, session) => {
      let query: Record<string, string> | undefined;
      // A server that answers the same next page again would be followed forever (second probe).
      const followed = new Set<string>();
      for (;;) {
        const request = {
          path: this.args.path,
          method,
          fields,
          body,
          headers,
          ...(query === undefined ? {} : { query }),
        };
        const send = () => callApi(client, session.baseUrl, request);
        const result =
          cacheMs === undefined
            ? await send()
            : await cachedCall(
                { baseUrl: session.baseUrl, credentials: session.credentials, request },
                cacheMs,
                sent,
                send,
              );
        if (include) await this.printHead(result.status, result.headers);
        if (result.exitCode !== 0) {
          await this.printErrorBody(result.body);
          this.exit(result.exitCode);
        }
        if (silent || result.body === undefined) {
          if (!paginate) return;
        } else if (paginate) {
          for (const item of pageItems(result.body)) this.out.record(item as object);
        } else if (!this.out.json && this.out.stdout.isTTY === true) {
          this.out.print(...jsonSegments(result.body));
        } else this.out.record(result.body as object);
        query = paginate ? nextPageQuery(result.body) : undefined;
        if (query === undefined) return;
        const next = JSON.stringify(query);
        if (followed.has(next)) {
          throw new CliError(`The service returned the next page ${next} twice; stopping.`, {
            exitCode: ExitCode.Failure,
            code: 'pagination_loop',
            suggestion:
              'The pages printed so far are complete; report the repeated cursor to the service operator.',
          });
        }
        followed.add(next);
      }
    });
  }

  /** -i: the status line and the headers, as gh prints them, before the body; a header value is the
   *  service's text, stripped of control characters (HTTP lets C1 ones through as obs-text). */
  private async printHead(status: number, headers: ReadonlyArray<readonly [string, string]>): Promise<void> {
    const { STATUS_CODES } = process.getBuiltinModule('node:http');
    if (this.out.json) {
      // Every line of stderr is JSON under --json: the head is one, its headers each as received (in order).
      this.out.errorRecord({ response: { status, statusText: STATUS_CODES[status] ?? '', headers } });
      return;
    }
    const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`.trimEnd()];
    for (const [name, value] of headers) lines.push(stripControlCharacters(`${name}: ${value}`));
    this.out.stdout.write(`${lines.join('\n')}\n\n`);
  }

  /** Stdin is read once: a second reader (--input -, -F key=@-) would get nothing, silently, as gh refuses. */
  private refuseStdinTwice(): void {
    const readers = [
      ...(this.flags.input === '-' ? ['--input -'] : []),
      ...(this.flags.field ?? [])
        .filter(([, value]) => value === '@-')
        .map(([key]) => `-F ${echoed(key)}=@-`),
    ];
    if (readers.length < 2) return;
    const named = `${readers.slice(0, -1).join(', ')} and ${readers.at(-1) ?? ''}`;
    throw new CliError(
      `${named} ${readers.length === 2 ? 'both' : 'all'} read stdin, which can be read once.`,
      {
        exitCode: ExitCode.Usage,
        code: 'stdin_read_twice',
        suggestion:
          'Let one of them read stdin, and give the others from files (-F key=@file, --input file).',
      },
    );
  }

  /** -F key=@file reads the value from a file, -F key=@- from stdin (as text). */
  private async withFiles(
    fields: ReadonlyArray<readonly [string, string | number | boolean | null]>,
  ): Promise<Array<readonly [string, string | number | boolean | null]>> {
    const read = fields.map(async ([key, value]) => {
      if (typeof value !== 'string' || !value.startsWith('@')) return [key, value] as const;
      return [
        key,
        (await readTextInput(value.slice(1), { flag: `-F ${key}=@`, what: 'a field value' })).text,
      ] as const;
    });
    return Promise.all(read);
  }

  private async readJsonBody(source: string): Promise<unknown> {
    const { name, text } = await readTextInput(source, { flag: '--input', what: 'a request body' });
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new CliError(`${echoedPath(name)} is not JSON: ${(error as Error).message}`, {
        exitCode: ExitCode.Usage,
        code: 'invalid_input',
        suggestion: 'The service takes JSON bodies; check the file, or use -f key=value fields.',
      });
    }
  }

  private async printErrorBody(body: unknown): Promise<void> {
    if (this.out.json) {
      this.out.errorRecord(body as object);
      return;
    }
    this.out.infoDocument(...jsonSegments(body));
  }
}
