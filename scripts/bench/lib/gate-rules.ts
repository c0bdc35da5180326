// The gate1.yml the gate bench modules apply to the grown orders table: one pattern and one predicate
// beside the six baseline checks (this folder is not itself a bench module).
export const ORDERS_RULES = `patternChecks:
  - name: status_upper
    column: status
    regex: '^[A-Z]+$'
    severity: WARN
customPredicates:
  - name: amount_not_negative
    sql: amount >= 0
    severity: HARD_FAIL
`;
