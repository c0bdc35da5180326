// The seeded dev warehouse's products object as the end-to-end tests push it, and a Gate 1 rule its
// rows pass.
export const PRODUCTS_DEFINITION = [
  'table: products',
  'source: analytics_dev.products',
  'columns:',
  '  - { name: id, type: text }',
  '  - { name: sku, type: text }',
  '  - { name: name, type: text }',
  '  - { name: price, type: numeric }',
  '',
].join('\n');

export const PRICE_POSITIVE_GATE =
  'customPredicates:\n  - name: price_positive\n    sql: price > 0\n    severity: HARD_FAIL\n';
