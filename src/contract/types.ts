// Friendly names for the generated contract types; import these rather than types.gen.ts directly.
import type { components, operations, paths } from './types.gen.js';

export type { components, operations, paths };
export type Schemas = components['schemas'];
export type Schema<K extends keyof Schemas> = Schemas[K];

export type ErrorBody = Schema<'Error'>;
export type IssueTokenRequest = Schema<'IssueTokenRequest'>;
export type IssuedToken = Schema<'IssuedToken'>;
export type TokenBundle = Schema<'TokenBundle'>;
export type RefreshResponse = Schema<'RefreshResponse'>;
export type TableGrant = Schema<'TableGrant'>;
export type WorkspaceScope = Schema<'WorkspaceScope'>;
export type RecordValues = Schema<'RecordValues'>;
export type TableRecord = Schema<'Record'>;
export type RecordPage = Schema<'RecordPage'>;
export type BulkUpdateRequest = Schema<'BulkUpdateRequest'>;
export type BulkUpdateResult = Schema<'BulkUpdateResult'>;
export type ImportRequest = Schema<'ImportRequest'>;
export type ImportResult = Schema<'ImportResult'>;
export type AuditEntry = Schema<'AuditEntry'>;
export type AuditLogPage = Schema<'AuditLogPage'>;
export type Member = Schema<'Member'>;
export type MemberList = Schema<'MemberList'>;
export type Role = Schema<'Role'>;
export type CertifyRequest = Schema<'CertifyRequest'>;
export type CertifyResponse = Schema<'CertifyResponse'>;
export type DefinitionRequest = Schema<'DefinitionRequest'>;
export type RegistrationResult = Schema<'RegistrationResult'>;
export type RecertifyRequest = Schema<'RecertifyRequest'>;
export type RecertifyResponse = Schema<'RecertifyResponse'>;
