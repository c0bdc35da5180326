// The fields of the records each command prints under --json, by command id: what `--json a,b` accepts (any
// other name is exit 2 before anything is sent, naming these) and what the command's help lists under JSON
// FIELDS. test/e2e/json-fields.test.ts runs each command against the reference server and holds the records'
// keys to these lists.

const TABLE_ROW = [
  'id',
  'name',
  'mode',
  'state',
  'environmentLabel',
  'source',
  'connectorId',
  'artifactFile',
  'gate',
];

export const JSON_FIELDS: Readonly<Record<string, readonly string[]>> = {
  list: TABLE_ROW,
  'quarantine:list': TABLE_ROW,
  status: [
    'id',
    'governanceId',
    'name',
    'mode',
    'state',
    'gate',
    'environmentLabel',
    'source',
    'definitionVersion',
    'gate1Version',
    'dataVersion',
    'certification',
    'certifiedView',
    'schemaDrift',
    'activeJobs',
  ],
  'connectors:list': ['id', 'name', 'type', 'status', 'environmentLabel'],
  'gate:jobs': ['id', 'gate', 'type', 'status', 'startedAt', 'endedAt', 'proof'],
  'gate:suggest': ['tableId', 'yaml', 'suggestions', 'notes', 'profile'],
  'versions:list': [
    'version',
    'kind',
    'environmentLabel',
    'certifiedAt',
    'certifiedBy',
    'certifiedByEmail',
    'grain',
    'contract',
    'restoredFrom',
    'reason',
  ],
  'audit:list': [
    'id',
    'userId',
    'userEmail',
    'tableId',
    'action',
    'resource',
    'environmentLabel',
    'gateModeAtEvaluation',
    'createdAt',
    'details',
  ],
  'members:list': ['userId', 'email', 'role', 'envScope'],
  'config:list': ['key', 'value', 'allowedValues', 'updatedAt', 'updatedBy', 'updatedByEmail'],
  'config:history': ['key', 'oldValue', 'newValue', 'changedBy', 'changedByEmail', 'changedAt'],
  whoami: ['profile', 'tokenSource', 'user', 'workspace', 'role', 'token', 'effectiveEnvironmentScope'],
};
