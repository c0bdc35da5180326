// The date and timestamp forms a Mode B column takes (core/record-values.ts): those PostgreSQL's date and
// timestamptz read, since the certified view casts the stored text with them; nothing Date.parse alone takes.
import { describe, expect, it } from 'vitest';
import type { Column } from '../../src/core/record-values.js';
import { checkValues } from '../../src/core/record-values.js';

const columns: Column[] = [
  { name: 'day', type: 'date', required: false },
  { name: 'at', type: 'timestamp', required: false },
];
const fits = (name: 'day' | 'at', value: string) => checkValues(columns, { [name]: value }, true) === null;

describe('a date column', () => {
  it.each(['2024-02-29', '2000-02-29', '0001-01-01', '9999-12-31', '2023-12-31'])('takes %s', (value) => {
    expect(fits('day', value)).toBe(true);
  });
  it.each([
    '2023-02-29',
    '1900-02-29',
    '2024-02-30',
    '2024-04-31',
    '2024-13-01',
    '2024-00-10',
    '2024-01-00',
    '0000-01-01',
    '2024-1-01',
    '24-01-01',
    '2024-01-01T00:00:00Z',
    '2024/01/01',
    ' 2024-01-01',
    '',
  ])('refuses %j', (value) => {
    expect(fits('day', value)).toBe(false);
  });
});

describe('a timestamp column', () => {
  it.each([
    '2024-06-01',
    '2024-06-01T12:00',
    '2024-06-01 12:00',
    '2024-06-01T12:00:59',
    '2024-06-01T12:00:00.1',
    '2024-06-01T12:00:00.123456789Z',
    '2024-06-01T23:59:59Z',
    '2024-06-01T12:00:00+05',
    '2024-06-01T12:00:00+05:30',
    '2024-06-01T12:00:00-0800',
    '2024-06-01 12:00:00 +05',
    '2024-06-01T12:00Z',
    // BigQuery's CSV export and what a table holding them exports back: PostgreSQL reads the zone's name.
    '2024-06-01 12:00:00 UTC',
    '2024-06-01 12:00:00.123456 UTC',
    '2024-06-01T12:00:00utc',
    '2024-06-01 12:00:00 GMT',
  ])('takes %s', (value) => {
    expect(fits('at', value)).toBe(true);
  });
  it.each([
    'hello 5',
    '1',
    'Jan 5',
    'Sat, 01 Jun 2024 12:00:00 GMT',
    '2024-02-30T10:00:00Z',
    '2024-06-01T24:00:00Z',
    '2024-06-01T12:60',
    '2024-06-01T12:00:60',
    '2024-06-01T12',
    '2024-06-01T12:00:00.',
    '2024-06-01T12:00:00+16',
    '2024-06-01T12:00:00+05:60',
    '2024-06-01T12:00:00+5',
    '2024-06-01T12:00:00Zjunk',
    '2024-06-01T12:00:00 ',
    '2024-06-01 ',
    '2024-06-01 12:00:00 UTCX',
  ])('refuses %j', (value) => {
    expect(fits('at', value)).toBe(false);
  });
});
