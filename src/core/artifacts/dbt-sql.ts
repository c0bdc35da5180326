// What marks a SQL file as dbt's own output, shared by the PostgreSQL and the warehouse readers: its
// compiled SQL (`target/compiled/…/<model>.sql`, a bare query) and its run SQL (`target/run/…`, a
// `create … <model>__dbt_tmp as (…)` statement, or on Snowflake `create or replace transient table`).

const DBT_TEMPORARY = /__dbt_(?:tmp|backup)(?:_[0-9a-f]+)?$/i;

/** True for a relation name dbt builds under before swapping it in. */
export function isDbtTemporary(name: string): boolean {
  return DBT_TEMPORARY.test(name);
}

/** A model's name without the suffix dbt builds it under. */
export function withoutDbtSuffix(name: string): string {
  return name.replace(DBT_TEMPORARY, '');
}

/** True for a path under dbt's `target/compiled/` (or `target/run/`) folder. */
export function underDbtTarget(fileName: string, folder: 'compiled' | 'run'): boolean {
  return new RegExp(`(^|[/\\\\])${folder}[/\\\\]`).test(fileName);
}

/** The model a compiled SQL file is: its file name without `.sql` (and without a `__dbt_tmp` suffix). */
export function modelOfFile(fileName: string): string {
  const base = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  return withoutDbtSuffix(base.replace(/\.sql$/i, ''));
}
