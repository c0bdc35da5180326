// The demo's gate1.yml (scripts/demo.ts writes it; the start-up bench validates it): a pattern check and a
// custom predicate, what a real gate1.yml holds.
export const demoGate1 = [
  'patternChecks:',
  '  - name: email_is_an_address',
  '    column: email',
  "    regex: '^[^@[:space:]]+@[^@[:space:]]+\\.[a-z]{2,}$'",
  '    severity: HARD_FAIL',
  'customPredicates:',
  '  - name: amount_not_negative',
  '    sql: amount >= 0',
  '    severity: HARD_FAIL',
  '',
].join('\n');
