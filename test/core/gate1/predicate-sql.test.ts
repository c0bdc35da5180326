import { describe, expect, it } from 'vitest';
import { checkPredicateSql, validateGate1 } from '../../../src/core/gate1/index.js';

const errorsOf = (sql: string) => checkPredicateSql(sql).filter((f) => f.severity === 'error');

// Each attack must be refused, and with the reason named here (the finding's code).
const attacks: Array<[sql: string, code: string]> = [
  // stacked statements and statement keywords
  ['amount > 0; DROP TABLE orders', 'sql-semicolon'],
  ['amount > 0;', 'sql-semicolon'],
  ["amount > 0; COPY orders TO '/tmp/x'", 'sql-semicolon'],
  ['SELECT 1', 'sql-subquery'],
  ['DELETE FROM orders', 'sql-syntax'],
  ["COPY orders TO PROGRAM 'id'", 'sql-syntax'],
  ['amount > 0 UNION SELECT 1', 'sql-statement'],
  ['amount > 0 GROUP BY amount', 'sql-statement'],
  ['amount > 0 ORDER BY 1', 'sql-statement'],
  ['amount > 0 LIMIT 1', 'sql-statement'],
  ['amount > 0 FOR UPDATE', 'sql-statement'],
  // escaping the WHERE wrapper
  ['amount > 0) OR (1=1', 'sql-unbalanced'],
  ['amount > 0) --', 'sql-unbalanced'],
  ['(amount > 0', 'sql-unbalanced'],
  // comment tricks
  ['amount > 0 -- AND status = 1', 'sql-comment'],
  ['amount > 0 /* hidden */ OR true', 'sql-comment'],
  ['amount > 0 /* unterminated', 'sql-comment'],
  ["status = 'x' --'", 'sql-comment'],
  // string and quoting tricks
  ["status = '\\' OR pg_sleep(5) IS NULL --'", 'sql-backslash-quote'],
  ["status = 'a\\'' OR pg_sleep(1) IS NULL OR status = ''", 'sql-backslash-quote'],
  ["status = E'\\x27 OR true'", 'sql-escape-string'],
  ["status = e'it\\'s'", 'sql-escape-string'],
  ['U&"d\\0061ta" = 1', 'sql-unicode-escape'],
  ["status = U&'\\0027'", 'sql-unicode-escape'],
  ['status = $$x$$', 'sql-dollar'],
  ['status = $tag$x$tag$', 'sql-dollar'],
  ['status = $1', 'sql-dollar'],
  ["status = 'never closed", 'sql-unterminated'],
  ['"never closed = 1', 'sql-unterminated'],
  ['amount \\ 2 > 0', 'sql-backslash'],
  ['amount > 0\u0000', 'sql-control-character'],
  // tokens other SQL readers take differently from PostgreSQL
  ['`amount` > 0', 'sql-backtick'],
  ['`status` = 1 OR `x` = 1', 'sql-backtick'],
  ['amount\u00a0> 0', 'sql-unicode-space'],
  ['amount >\u20030', 'sql-unicode-space'],
  // dangerous functions, in any spelling
  ['pg_sleep(10) IS NULL', 'sql-function-not-allowed'],
  ['PG_SLEEP(10) IS NULL', 'sql-function-not-allowed'],
  ['Pg_Sleep(10) IS NULL', 'sql-function-not-allowed'],
  ['pg_catalog.pg_sleep(10) IS NULL', 'sql-function-not-allowed'],
  ['pg_catalog.lower(status) = status', 'sql-function-not-allowed'],
  ['"pg_sleep"(1) IS NULL', 'sql-function-not-allowed'],
  ['"lower"(status) = status', 'sql-function-not-allowed'],
  ["length(pg_read_file('/etc/passwd')) > 0", 'sql-function-not-allowed'],
  ["pg_read_binary_file('/etc/passwd') IS NULL", 'sql-function-not-allowed'],
  ["pg_ls_dir('.') IS NULL", 'sql-function-not-allowed'],
  ["dblink('host=evil', 'select 1') IS NULL", 'sql-function-not-allowed'],
  ["dblink_exec('host=evil', 'drop table t') IS NULL", 'sql-function-not-allowed'],
  ['lo_import(status) > 0', 'sql-function-not-allowed'],
  ["lo_export(1, '/tmp/x') > 0", 'sql-function-not-allowed'],
  ["set_config('statement_timeout', '0', false) IS NULL", 'sql-function-not-allowed'],
  ["current_setting('data_directory') = 'x'", 'sql-function-not-allowed'],
  ["lower(current_setting('is_superuser')) = 'on'", 'sql-function-not-allowed'],
  ['generate_series(1, 1000000000) > 0', 'sql-function-not-allowed'],
  ["unnest(string_to_array(status, ',')) = 'x'", 'sql-function-not-allowed'],
  ["nextval('orders_id_seq') > 0", 'sql-function-not-allowed'],
  ['pg_terminate_backend(1) IS NULL', 'sql-function-not-allowed'],
  ["query_to_xml('select 1', true, true, '') IS NULL", 'sql-function-not-allowed'],
  ['version() IS NULL', 'sql-function-not-allowed'],
  ['lower(md5(status)) = status', 'sql-function-not-allowed'],
  ['amount = ANY(ARRAY[1, 2])', 'sql-function-not-allowed'],
  ['sum(amount) OVER () > 0', 'sql-aggregate'],
  ['count(*) > 0', 'sql-aggregate'],
  ['max(amount) > 0', 'sql-aggregate'],
  // subqueries
  ['amount IN (SELECT amount FROM other)', 'sql-subquery'],
  ['EXISTS (SELECT 1 FROM pg_user)', 'sql-subquery'],
  ['(SELECT count(*) FROM pg_shadow) > 0', 'sql-subquery'],
  ['amount = (SELECT max(amount) FROM orders)', 'sql-subquery'],
  ['amount = ARRAY(SELECT 1)', 'sql-subquery'],
  // catalog casts and session values
  ["'pg_sleep'::regproc IS NULL", 'sql-cast-not-allowed'],
  ["'orders'::regclass::oid > 0", 'sql-cast-not-allowed'],
  ['status::oid > 0', 'sql-cast-not-allowed'],
  ['CAST(status AS regclass) IS NULL', 'sql-cast-not-allowed'],
  ['status::int[] IS NULL', 'sql-cast-not-allowed'],
  ['session_user = status', 'sql-session-value'],
  ['system_user = status', 'sql-session-value'],
  ['user = status', 'sql-session-value'],
  ['current_role = status', 'sql-session-value'],
  ['current_schema = status', 'sql-session-value'],
  ['pg_user.usename = status', 'sql-qualified-name'],
  ['orders.amount > 0', 'sql-qualified-name'],
  ['public.orders.amount > 0', 'sql-qualified-name'],
  ['current_user = status', 'sql-session-value'],
  // what PostgreSQL's grammar reads beyond the allow-list
  ['amount OPERATOR(pg_catalog.=) 1', 'sql-operator-not-allowed'],
  ['amount >> 2 > 0', 'sql-operator-not-allowed'],
  ["status ~~ 'a%'", 'sql-operator-not-allowed'],
  ['amount IS DISTINCT FROM total', 'sql-unsupported'],
  ["status LIKE ANY (ARRAY['a%'])", 'sql-function-not-allowed'],
  ["created_at AT TIME ZONE 'UTC' > now()", 'sql-function-not-allowed'],
  ["overlay(status placing 'x' from 1) = 'x'", 'sql-function-not-allowed'],
  ["lower(status := 'x') = 'x'", 'sql-unsupported'],
  ['codes[1] = 1', 'sql-unsupported'],
  ['status COLLATE "C" = code', 'sql-unsupported'],
  ['row(amount, total) = row(1, 2)', 'sql-unsupported'],
  ["flags = B'101'", 'sql-unsupported'],
  ['status::setof int IS NULL', 'sql-cast-not-allowed'],
  ["status::varchar(pg_sleep(1)) = 'a'", 'sql-syntax'],
  ["status = 'a'\n'b'", 'sql-ambiguous-literal'],
  // not a boolean expression
  ['amount', 'sql-not-boolean-or-bare'],
  ['42', 'sql-not-boolean'],
  ["'yes'", 'sql-not-boolean'],
  ['NULL', 'sql-not-boolean'],
  ['amount + 1', 'sql-not-boolean'],
  ["status || 'x'", 'sql-not-boolean'],
  ['lower(status)', 'sql-not-boolean'],
  ['amount::text', 'sql-not-boolean'],
  ["CASE WHEN amount > 0 THEN 'big' ELSE 'small' END", 'sql-not-boolean'],
  // regexes PostgreSQL would refuse inside a predicate
  ["email ~ '(?<user>[a-z]+)@'", 'regex-named-group'],
  ["email ~ '\\p{L}+'", 'regex-unicode-property'],
  // values built to any size: one row of lpad(status, 268000000) stalls the warehouse
  ['length(lpad(status, 268000000)) > 0', 'sql-size-bound'],
  ["rpad(status, 1001, 'x') <> ''", 'sql-size-bound'],
  ['lpad(status, 99999999999999999999) IS NULL', 'sql-size-bound'],
  ['lpad(status, 1e9) IS NULL', 'sql-size-bound'],
  ["lpad(status, '100000000') IS NULL", 'sql-size-bound'],
  ['lpad(status, amount) IS NULL', 'sql-size-bound'],
  ['lpad(status, 100 * 100) IS NULL', 'sql-size-bound'],
  ['lpad(status, 10::integer) IS NULL', 'sql-size-bound'],
  ['length(repeat(status, 268000000)) > 0', 'sql-function-not-allowed'],
  ["replace(status, 'a', status) <> ''", 'sql-size-bound'],
  [`replace(status, 'a', '${'b'.repeat(1001)}') <> ''`, 'sql-size-bound'],
  [
    "replace(replace(replace(replace(status, 'a', '1234567890'), '1', '1234567890'), '2', '1234567890'), '3', '1234567890') <> ''",
    'sql-size-bound',
  ],
  // empty and oversized
  ['', 'sql-empty'],
  ['   ', 'sql-empty'],
  [`amount > 0${' AND amount > 0'.repeat(400)}`, 'sql-too-long'],
];

describe('checkPredicateSql refuses every attack, each with its reason', () => {
  it.each(attacks.filter(([, code]) => code !== 'sql-not-boolean-or-bare'))(
    'refuses %j (%s)',
    (sql, code) => {
      const errors = errorsOf(sql);
      expect(errors.map((e) => e.code)).toContain(code);
      for (const e of errors) expect(e.message.length).toBeGreaterThan(20);
    },
  );

  it('flags a bare column as possibly not boolean (a warning: it may be a boolean column)', () => {
    const findings = checkPredicateSql('amount');
    expect(findings).toEqual([expect.objectContaining({ code: 'sql-bare-column', severity: 'warning' })]);
  });

  it('names the danger of a refused function in its reason', () => {
    expect(errorsOf('pg_sleep(1) IS NULL')[0]?.message).toMatch(/stalls the warehouse/);
    expect(errorsOf("pg_read_file('/etc/passwd') IS NULL")[0]?.message).toMatch(/reads files/);
    expect(errorsOf('generate_series(1,2) = 1')[0]?.message).toMatch(/set of rows/);
  });

  it('names the function and the bound when a built value could be too long', () => {
    const [lpad] = errorsOf('length(lpad(status, 268000000)) > 0');
    expect(lpad?.message).toMatch(
      /lpad\(\)'s length must be a whole-number literal of at most 1000 \(got 268000000\)/,
    );
    expect(lpad?.index).toBe('length('.length);
    expect(errorsOf('rpad(status, amount) IS NULL')[0]?.message).toMatch(
      /rpad\(\).*at most 1000, not an expression/,
    );
  });

  it('checks only the given columns when the table is known', () => {
    expect(checkPredicateSql('amount > 0 AND status = 1', { columns: ['amount', 'status'] })).toEqual([]);
    expect(checkPredicateSql('secret > 0', { columns: ['amount'] }).map((f) => f.code)).toEqual([
      'sql-unknown-column',
    ]);
  });

  it("points PostgreSQL's refusals and the refused node at their place in the predicate", () => {
    expect(errorsOf('amount > 0 AND status = = 1')).toEqual([
      expect.objectContaining({ code: 'sql-syntax', index: 24, message: expect.stringMatching(/near "="/) }),
    ]);
    // Characters, not bytes: the é before pg_sleep is two bytes in UTF-8.
    expect(errorsOf("lower(status) = 'é' AND pg_sleep(1) IS NULL")[0]?.index).toBe(24);
    expect(errorsOf('amount > 0 AND total OPERATOR(pg_catalog.=) 1')[0]?.index).toBe(21);
    // An expression cut short ends at the end of the user's text, as PostgreSQL says it: not at a ")" the check
    // added after it.
    for (const cut of ['price >', 'price > 1 AND'])
      expect(errorsOf(cut)).toEqual([
        expect.objectContaining({
          code: 'sql-syntax',
          index: cut.length,
          message: expect.stringContaining('(syntax error at end of input)') as string,
        }),
      ]);
  });

  it('places a syntax error at its line and column of gate1.yml', () => {
    const text = 'customPredicates:\n  - name: p\n    sql: amount > 0 AND status = = 1\n    severity: WARN\n';
    const [d] = validateGate1(text, { fileName: 'gate1.yml' }).diagnostics;
    expect(d).toMatchObject({ line: 3, column: 10 + 24, code: 'sql-syntax', severity: 'error' });
  });

  it('points lexical refusals at the offending character', () => {
    const [semicolon] = errorsOf('amount > 0; DROP TABLE t');
    expect(semicolon?.index).toBe(10);
  });
});

const honest = [
  'amount > 0',
  'amount >= 0 AND amount <= 1000000',
  'amount <> 0 OR status != 1',
  'amount BETWEEN 1 AND 100',
  'amount NOT BETWEEN -5 AND -1',
  "status IN ('open', 'closed', 'it''s')",
  'status NOT IN (1, 2, 3)',
  'email IS NOT NULL',
  'deleted_at IS NULL OR deleted_at > created_at',
  'is_active IS TRUE',
  'NOT (amount < 0)',
  'NOT amount < 0 AND NOT (status IS NULL)',
  "email LIKE '%@%'",
  "email NOT LIKE '%@example.com'",
  "email ILIKE '%@EXAMPLE.COM'",
  "code SIMILAR TO '[A-Z]{3}'",
  "email ~ '^[^@]+@[^@]+\\.[a-z]{2,}$'",
  "email ~* '^[A-Z0-9._%+-]+@'",
  "phone !~ '[^0-9+ ]'",
  "CASE WHEN status = 'closed' THEN closed_at IS NOT NULL ELSE true END",
  'coalesce(discount, 0) <= amount',
  "nullif(trim(name), '') IS NOT NULL",
  'lower(email) = email AND upper(country) = country',
  'length(postcode) BETWEEN 4 AND 10',
  "char_length(trim(both ' ' from name)) > 0",
  "substring(sku, 1, 3) = 'ABC'",
  "position('@' in email) > 1",
  "split_part(email, '@', 2) <> ''",
  "date_trunc('day', created_at) <= now()",
  'created_at <= current_timestamp',
  'birth_date < current_date',
  "created_at > now() - interval '30 days'",
  'extract(year from created_at) >= 2000',
  "date_part('month', created_at) BETWEEN 1 AND 12",
  'abs(balance) < 1000000 AND round(rate, 2) = rate',
  'greatest(a, b) - least(a, b) < 10',
  'amount::numeric(12, 2) >= 0',
  'CAST(quantity AS integer) > 0',
  "created_at::date >= '2020-01-01'",
  "created_at >= date '2020-01-01' AND updated_at < timestamp '2030-01-01 00:00:00'",
  'amount < 1e9 AND ratio <= 1.5 AND delta > -1',
  'created_at::timestamp with time zone < now()',
  'is_active::boolean',
  '"Order Total" >= 0',
  'amount * quantity = total AND total / quantity = amount',
  "starts_with(sku, 'SKU-')",
  "(status = 'open' AND amount > 0) OR (status = 'void' AND amount = 0)",
  "note = 'semicolons; -- and /* are fine inside a string'",
  "price_tag ~ '^\\$[0-9]+$'",
  "lpad(zip, 5, '0') = zip AND rpad(code, 1000) <> '' AND lpad(code, -1) = ''",
  "replace(replace(phone, '-', ''), ' ', '') ~ '^[0-9]+$'",
  "replace(name, 'ß', 'ss') <> '' AND translate(code, 'abc', 'ABCDEFGHIJ') <> ''",
  "substring(sku from 1 for 3) = 'ABC' AND trim(leading '0' from code) <> ''",
  "email LIKE '%!%%' ESCAPE '!' AND nullif(code, '') IS NOT NULL",
  "created_at::timestamptz < localtimestamp AND amount::int4 > 0 AND code::character varying(10) <> ''",
];

describe('checkPredicateSql lets honest predicates through', () => {
  it.each(honest)('accepts %j', (sql) => {
    expect(checkPredicateSql(sql)).toEqual([]);
  });
});
