// What the project's own target/run_results.json (the last dbt command run there) says of a model whose
// catalog.json is older than its manifest.json: whether that command rebuilt the model's relation after the
// catalog was written. A manifest is rewritten by dbt compile, parse and docs generate too, and by a run or
// build that failed or skipped the model: then the warehouse still holds the columns the catalog lists. A
// command with no result for the model (dbt test, a run of others, dbt show --inline) tells nothing of it.
// Pure: no I/O. Which results count as a rebuilt relation is dbt-run.ts's reading (the recertification
// signal's): a model, seed or snapshot with status success of a command that builds (args.which, or without
// it a result that ran SQL).
import { isEntry, text } from './manifest.js';
import { readRunResults, subcommandOf } from '../dbt-run.js';

/**
 * Whether the last run rebuilt a node since the catalog, or why not (a clause: "its result there is error");
 * `compiledOnly`: the last command only compiled it (dbt compile, show), which says nothing of a build between
 * the catalog and it (target/run's SQL may: hidByCompile).
 */
export type SinceCatalog = { rebuilt: true } | { rebuilt: false; why: string; compiledOnly?: true };

/** target/run_results.json read for judging the catalog, each node's result by its unique id. */
export interface LastRun {
  /** `dbt <args.which>`, or "a dbt command" when the file does not say. */
  command: string;
  generatedAt: string;
  /** The results' nodes that the run rebuilt (dbt-run.ts's `built`). */
  built: ReadonlySet<string>;
  /** Each result's status, and when its execution completed (the timing `execute` step's completed_at). */
  results: ReadonlyMap<string, { status: string; completedAt?: string }>;
}

/** An instant of a dbt artifact, NaN unless it parses and names its time zone (dbt writes UTC, `…Z`). */
const instant = (at: string | undefined) =>
  at !== undefined && /(?:Z|[+-]\d\d:?\d\d)$/i.test(at) ? Date.parse(at) : NaN;

/** Whether a catalog written at `catalogAt` is older than the manifest written at `manifestAt`. */
export function catalogOlder(catalogAt: string | undefined, manifestAt: string | undefined): boolean {
  const time = (at: string | undefined) => (at === undefined ? NaN : Date.parse(at));
  return time(catalogAt) < time(manifestAt);
}

/** What last-run.ts reads of a result (not its compiled SQL): the service keeps only these of the file. */
export const LAST_RUN_RESULT_FIELDS: readonly string[] = [
  'unique_id',
  'status',
  'message',
  'adapter_response',
  'timing',
];

/**
 * The run_results.json as read for the catalog; undefined when gds does not read it as dbt's (another schema,
 * no results list) or it says not when it was written: then it tells nothing and the catalog is judged without
 * it.
 */
export function readLastRun(value: unknown): LastRun | undefined {
  const reading = readRunResults(value);
  if (!reading.ok && reading.code === 'malformed_run_results') return undefined;
  if (!isEntry(value) || !isEntry(value['metadata']) || !Array.isArray(value['results'])) return undefined;
  const generatedAt = text(value['metadata']['generated_at']);
  if (generatedAt === undefined || Number.isNaN(instant(generatedAt))) return undefined;
  const args = isEntry(value['args']) ? value['args'] : {};
  const rpc = text(args['rpc_method']);
  // An rpc call of a command line (dbt Cloud IDE) names its command in args.cli: its subcommand only, as the
  // rest may hold --vars with secrets. docs.generate is docs generate.
  const which =
    text(args['which']) ?? (rpc === 'cli_args' ? subcommandOf(text(args['cli'])) : rpc?.replace('.', ' '));
  const results = new Map<string, { status: string; completedAt?: string }>();
  for (const result of value['results'] as unknown[]) {
    if (!isEntry(result)) continue;
    const node = isEntry(result['node']) ? result['node'] : {};
    const id = text(result['unique_id']) ?? text(node['unique_id']);
    const status = text(result['status']);
    if (id === undefined || status === undefined) continue;
    const timing = Array.isArray(result['timing']) ? (result['timing'] as unknown[]) : [];
    const execute = timing.find((step) => isEntry(step) && step['name'] === 'execute');
    const completedAt = isEntry(execute) ? text(execute['completed_at']) : undefined;
    results.set(id, { status, ...(completedAt === undefined ? {} : { completedAt }) });
  }
  return {
    command: which === undefined ? 'a dbt command' : `dbt ${which === 'generate' ? 'docs generate' : which}`,
    generatedAt,
    built: new Set(reading.ok ? reading.built.map((b) => b.uniqueId) : []),
    results,
  };
}

/**
 * Whether `run` rebuilt the node `uniqueId` after the catalog (written at `catalogAt`): its result is one the
 * run rebuilt (status success of a command that builds) and completed later than the catalog (its execution,
 * else the run's generated_at). Undefined when the run tells nothing of it: no result for it (dbt test, a run
 * of other models, dbt show --inline: an earlier command may have rebuilt it), or a rebuild to set against a catalog
 * time without its time zone.
 */
export function rebuiltSinceCatalog(
  run: LastRun,
  uniqueId: string,
  catalogAt: string,
): SinceCatalog | undefined {
  const said = `the last dbt command (${run.command}, target/run_results.json of ${run.generatedAt})`;
  const result = run.results.get(uniqueId);
  if (result === undefined) return undefined;
  if (!run.built.has(uniqueId))
    return result.status === 'success'
      ? {
          rebuilt: false,
          why: `${said} built nothing for it (${run.command} only compiled it)`,
          compiledOnly: true,
        }
      : { rebuilt: false, why: `its result in ${said} is ${result.status}` };
  const catalogInstant = instant(catalogAt);
  if (Number.isNaN(catalogInstant)) return undefined;
  const completed = instant(result.completedAt);
  const at = Number.isNaN(completed) ? instant(run.generatedAt) : completed;
  if (!(at > catalogInstant))
    return { rebuilt: false, why: `${said} rebuilt it before catalog.json was written` };
  return { rebuilt: true };
}

/**
 * Whether the SQL dbt last ran for a model (target/run/…, its DDL: `create view … as (` the compiled SQL `)`)
 * is a build of its compiled SQL now, white space aside: then a dbt run or build ran this SQL, and where the
 * catalog lists other columns than it selects, it ran after dbt docs generate read the warehouse, though the
 * last command (dbt compile) says only that it compiled the model.
 */
export function ranCompiledSql(runSql: string, compiledSql: string): boolean {
  const flat = (sql: string) => sql.replace(/\s+/g, ' ').trim();
  const compiled = flat(compiledSql);
  return compiled !== '' && flat(runSql).includes(compiled);
}

/** A line of dbt's file log: its level (none in dbt 0.x's), thread and message. */
interface LogLine {
  level?: string;
  thread: string;
  msg: string;
}

/**
 * A line of dbt's file log as written: dbt 1.x's text (`12:00:00.123456 [debug] [Thread-1 (]: …`, after a colour
 * code), dbt 0.x's (`2021-03-01 12:00:00.123456 (Thread-1): …`) or its JSON (`--log-format-file json`: info's
 * level, thread and msg; dbt 1.0 to 1.3's `--log-format json`, level, thread_name and msg). Undefined for
 * another line (the SQL a message spans, a header).
 */
function logLine(line: string): LogLine | undefined {
  if (line.startsWith('{')) {
    try {
      const event: unknown = JSON.parse(line);
      if (!isEntry(event)) return undefined;
      // dbt 1.4+ nests the line's fields in info; dbt 1.0 to 1.3 wrote them flat, the thread as thread_name.
      const info = isEntry(event['info']) ? event['info'] : event;
      const [thread, msg] = [text(info['thread'] ?? info['thread_name']), text(info['msg'])];
      const level = text(info['level']);
      return thread === undefined || msg === undefined
        ? undefined
        : { thread, msg, ...(level === undefined ? {} : { level }) };
    } catch {
      return undefined;
    }
  }
  const bare = line.replace(/^(?:\x1b\[[0-9;]*m)+/, '');
  const text1x = /^\d\d:\d\d:\d\d(?:\.\d+)?\s+\[\s*(\w+)\s*\]\s+\[([^\]]*)\]:\s?(.*)$/.exec(bare);
  if (text1x !== null) return { level: text1x[1] ?? '', thread: text1x[2] ?? '', msg: text1x[3] ?? '' };
  const text0x = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \(([^)]*)\): (.*)$/.exec(bare);
  return text0x === null ? undefined : { thread: text0x[1] ?? '', msg: text0x[2] ?? '' };
}

/** A run of a model in dbt's file log, from its "Writing runtime sql" line. */
interface LoggedRun {
  id: string;
  /** The statements the run logged for the model (`On <id>: …` without that, each one's lines). */
  sql: string[][];
  /** An error logged before it finished (its `[error]` level, or dbt 0.x's "ERROR creating"). */
  failed: boolean;
  /**
   * A COMMIT of the model's connection done after the DDL (its `SQL status:` logged): the relation was
   * replaced, whatever failed next. A COMMIT the warehouse refused logs no status: the DDL did not land.
   */
  committed: boolean;
  /**
   * On a warehouse whose DDL commits itself (SELF_COMMITTING), the model's DDL logged as done: the relation was
   * replaced, whatever failed next, though no COMMIT may follow.
   */
  replaced: boolean;
}

/**
 * The adapters (the manifest's metadata.adapter_type) whose DDL commits itself: BigQuery has no transactions;
 * Snowflake commits a DDL statement (create or replace) on its own, an open transaction with it; Databricks and
 * Spark run each statement on its own. There a DDL that ran replaced the relation, before any COMMIT dbt logs.
 */
const SELF_COMMITTING: ReadonlySet<string> = new Set(['bigquery', 'snowflake', 'databricks', 'spark']);

/**
 * What dbt logs of a model's connection as `On <id>: …` besides the SQL it runs (dbt-adapters' Rollback,
 * ConnectionClosed, ConnectionLeftOpen): a failed DDL is followed by its ROLLBACK and Close. dbt's COMMIT is
 * logged as a statement: its SQLCommit event, then the COMMIT it runs, whose status says it was done.
 */
const CONNECTION_EVENTS: ReadonlySet<string> = new Set(['ROLLBACK', 'Close', 'No close available on handle']);

/** A transaction's own statement, which dbt runs around a model's SQL (or dbt-snowflake for a file's `begin;`). */
const TRANSACTION = /^(?:begin|commit)(?: work| transaction)?$/i;

/**
 * The statements of SQL as dbt writes or logs them, to compare one with the other: comments out (dbt's query
 * comment is one, before the SQL or before its last `;`, on each statement dbt-snowflake runs), white space
 * flattened, split at each `;` outside quotes, empty ones left out. dbt-snowflake runs a file's statements one
 * by one (the connector's split_statements), so a file is matched statement by statement, not as one text.
 */
function statementsOf(sql: string): string[] {
  const statements: string[] = [];
  let parts: string[] = [];
  const end = () => {
    const statement = parts.join('').replace(/\s+/g, ' ').trim();
    if (statement !== '') statements.push(statement);
    parts = [];
  };
  // A quoted text or $$ body whole (an unclosed one to the end), a comment, a `;`, or a run of anything else.
  const token =
    /'[^']*'?|"[^"]*"?|\$\$[\s\S]*?(?:\$\$|$)|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|;|[^'"$;/-]+|[\s\S]/g;
  for (const [text] of sql.matchAll(token)) {
    if (text === ';') end();
    else parts.push(text.startsWith('--') || text.startsWith('/*') ? ' ' : text);
  }
  end();
  return statements;
}

/** A model's SQL as loggedRunFailures compares it: its statements (a transaction's BEGIN and COMMIT aside). */
const modelStatements = (sql: string): string[] => statementsOf(sql).filter((s) => !TRANSACTION.test(s));

/**
 * Whether a statement of the model's target/run file is DDL building its relation (`create …`), not one of a
 * relation dbt renames into place next (`…__dbt_tmp`), whose rename may still fail.
 */
const isDdl = (statement: string) => {
  const create = /^create\b[^(]*/i.exec(statement)?.[0];
  return create !== undefined && !/__dbt_(?:tmp|stg)\b/i.test(create);
};

/**
 * Of the models of `runSql` (each one's target/run file, by unique id), those whose dbt run or build that last
 * wrote that file failed, as dbt's own file log (logs/dbt.log) tells: dbt writes the file ("Writing runtime
 * sql for node …") before it runs the SQL, so a run that failed leaves the file of a build the warehouse never
 * made. From that line on, the same thread's lines up to "Finished running node …": an error (its `[error]`
 * level, or dbt 0.x's "ERROR creating") is a failed run, unless the model's connection logged a COMMIT done
 * before it (`On <id>: COMMIT`, then its `SQL status:`: the DDL was committed, and a post-hook or the backup's
 * drop failed after it; the relation was replaced). On a warehouse whose DDL commits itself (`adapter`, the
 * manifest's adapter_type: SELF_COMMITTING), an error after the model's DDL (a `create …` statement of its
 * target/run file) was logged as done (its `SQL status:` line, or the model's next statement) is one too: the
 * relation was replaced before any COMMIT.
 * A failed run does not hide an earlier one that rebuilt the model from the same SQL:
 * where that run is the log's last rebuild of the model, the relation has the file's columns (and as the
 * catalog lists others, dbt docs generate ran before it). A model the log does not tell of (no such line:
 * rotated away, another log path; or the node not finished before its thread began another node) is not among
 * them.
 */
export function loggedRunFailures(
  log: string,
  runSql: Readonly<Record<string, string>>,
  adapter?: string,
): Set<string> {
  const selfCommitting = adapter !== undefined && SELF_COMMITTING.has(adapter);
  const files = new Map<string, { statements: string[]; ddl: ReadonlySet<string> }>();
  const fileOf = (id: string) => {
    let file = files.get(id);
    if (file === undefined) {
      const statements = modelStatements(runSql[id] ?? '');
      files.set(id, (file = { statements, ddl: new Set(statements.filter(isDdl)) }));
    }
    return file;
  };
  const finished = new Map<string, LoggedRun[]>();
  /** The last run that wrote each model's file, finished or not. */
  const lastWrite = new Map<string, LoggedRun>();
  const running = new Map<string, LoggedRun>();
  let statement: string[] | undefined;
  for (const raw of log.split(/\r?\n/)) {
    const line = logLine(raw);
    if (line === undefined) {
      // A line of the message before it: the SQL a statement spans.
      statement?.push(raw);
      continue;
    }
    statement = undefined;
    // A thread runs one node at a time: a node begun there ends any run the thread had not finished (one
    // killed, whose thread name a later invocation reuses), which then tells nothing.
    if (line.msg.startsWith('Began running node ')) running.delete(line.thread);
    const id = /^Writing runtime \w+ for node "([^"]+)"$/i.exec(line.msg)?.[1];
    if (id !== undefined && runSql[id] !== undefined) {
      const run: LoggedRun = { id, sql: [], failed: false, committed: false, replaced: false };
      running.set(line.thread, run);
      lastWrite.set(id, run);
      continue;
    }
    const run = running.get(line.thread);
    if (run === undefined) continue;
    const said = line.msg.startsWith(`On ${run.id}: `) ? line.msg.slice(`On ${run.id}: `.length) : undefined;
    const ranStatement = said !== undefined && !CONNECTION_EVENTS.has(said);
    const done = line.msg.startsWith('SQL status: ');
    // A COMMIT is done once dbt logs its status; one the warehouse refused is followed by the error instead.
    if (done && isCommit(run.sql.at(-1))) run.committed = true;
    // The DDL is done when dbt logs its status (SQL status: SUCCESS 1 in 0.5 seconds), or, as dbt-bigquery logs
    // none, the model's next statement; not its connection's ROLLBACK or Close, which follow a DDL that failed.
    if (selfCommitting && (done || ranStatement) && ranDdl(run, fileOf(run.id).ddl)) run.replaced = true;
    if (ranStatement) run.sql.push((statement = [said]));
    if (line.level === 'error' || /^(?:\d\d:\d\d:\d\d \| )?\d+ of \d+ ERROR creating /.test(line.msg))
      run.failed ||= !run.committed && !run.replaced;
    if (line.msg !== `Finished running node ${run.id}`) continue;
    const runs = finished.get(run.id);
    if (runs === undefined) finished.set(run.id, [run]);
    else runs.push(run);
    running.delete(line.thread);
  }
  const failures = new Set<string>();
  for (const [id, runs] of finished) {
    const last = runs.at(-1);
    if (last === undefined || last !== lastWrite.get(id) || !last.failed) continue;
    const file = fileOf(id).statements;
    // dbt runs the file's SQL right after it writes it: a run that logged other SQL of the model (not only its
    // BEGIN) wrote another file, since replaced by a run logged elsewhere (--log-path, another DBT_LOG_PATH), or
    // is of another project of that name logging to the same folder. It tells nothing of this file. A run that
    // failed partway through the file's statements logged only those up to the one that failed.
    const ran = ranStatements(last);
    if (ran.length > 0 && !ranFile(ran, file) && !ranFileUntilFailed(ran, file)) continue;
    const rebuilt = runs.findLast((run) => !run.failed);
    if (rebuilt === undefined || !ranFile(ranStatements(rebuilt), file)) failures.add(id);
  }
  return failures;
}

/**
 * statementsOf a statement logged (its lines), read once: at the first log line after it (its status, the
 * next statement), when no more lines are added to it.
 */
const loggedRead = new WeakMap<readonly string[], string[]>();
function loggedStatements(lines: readonly string[]): string[] {
  let statements = loggedRead.get(lines);
  if (statements === undefined) loggedRead.set(lines, (statements = statementsOf(lines.join('\n'))));
  return statements;
}

/** The statements a run logged for its model, one after another (a transaction's BEGIN and COMMIT aside). */
function ranStatements(run: LoggedRun): string[] {
  return run.sql.flatMap((lines) => loggedStatements(lines).filter((s) => !TRANSACTION.test(s)));
}

/** Whether a logged statement (its lines) is a COMMIT (`COMMIT`, dbt-snowflake's after its query comment). */
function isCommit(lines: readonly string[] | undefined): boolean {
  if (lines === undefined || !lines.some((l) => /commit/i.test(l))) return false;
  const statements = loggedStatements(lines);
  return statements.length === 1 && /^commit(?: work| transaction)?$/i.test(statements[0] ?? '');
}

/** Whether the run's last statement logged is the model's DDL (a `create …` statement of its target/run file). */
function ranDdl(run: LoggedRun, ddl: ReadonlySet<string>): boolean {
  const last = run.sql.at(-1);
  if (last === undefined || ddl.size === 0) return false;
  const statement = loggedStatements(last).at(-1);
  return statement !== undefined && ddl.has(statement);
}

/** Whether statements a run logged hold a model's target/run file's statements, all of them in a row. */
function ranFile(ran: readonly string[], file: readonly string[]): boolean {
  if (file.length === 0) return false;
  for (let at = 0; at + file.length <= ran.length; at++)
    if (file.every((statement, i) => ran[at + i] === statement)) return true;
  return false;
}

/** Whether a run's statements end with the file's first ones: it failed at one of them, before the rest. */
function ranFileUntilFailed(ran: readonly string[], file: readonly string[]): boolean {
  for (let count = Math.min(ran.length, file.length - 1); count > 0; count--)
    if (file.slice(0, count).every((statement, i) => ran[ran.length - count + i] === statement)) return true;
  return false;
}
