// The explicit command map oclif loads (package.json oclif.commands, identifier COMMANDS): one entry per
// command, keyed by its id with `:` between words (`gds gate diff` is 'gate:diff'). A command module
// must not import heavy libraries at its top: importing this map is part of every start-up.
import Api from './api.js';
import AuditList from './audit/list.js';
import AuthLogin from './auth/login.js';
import AuthLogout from './auth/logout.js';
import AuthSet from './auth/set.js';
import AuthStatus from './auth/status.js';
import Certify from './certify.js';
import ConfigHistory from './config/history.js';
import ConfigList from './config/list.js';
import ConfigSet from './config/set.js';
import ConnectorsList from './connectors/list.js';
import ContractSetIntent from './contract/set-intent.js';
import DefinitionsPush from './definitions/push.js';
import Delete from './delete.js';
import EnvPromote from './env/promote.js';
import GateApply from './gate/apply.js';
import GateCancel from './gate/cancel.js';
import GateDiff from './gate/diff.js';
import GateGet from './gate/get.js';
import GateResult from './gate/result.js';
import GateRun from './gate/run.js';
import GateStatus from './gate/status.js';
import GateSubmit from './gate/submit.js';
import GateSuggest from './gate/suggest.js';
import GateValidate from './gate/validate.js';
import List from './list.js';
import MembersList from './members/list.js';
import Push from './push.js';
import QuarantineList from './quarantine/list.js';
import QuarantineOpen from './quarantine/open.js';
import RecertificationDismiss from './recertification/dismiss.js';
import RecertificationList from './recertification/list.js';
import Recertify from './recertify.js';
import Reject from './reject.js';
import Status from './status.js';
import TokensIssue from './tokens/issue.js';
import TokensRefresh from './tokens/refresh.js';
import VersionsList from './versions/list.js';
import VersionsRestore from './versions/restore.js';
import Whoami from './whoami.js';

export const COMMANDS = {
  api: Api,
  'audit:list': AuditList,
  'auth:login': AuthLogin,
  'auth:logout': AuthLogout,
  'auth:set': AuthSet,
  'auth:status': AuthStatus,
  certify: Certify,
  'config:history': ConfigHistory,
  'config:list': ConfigList,
  'config:set': ConfigSet,
  'connectors:list': ConnectorsList,
  'contract:set-intent': ContractSetIntent,
  'definitions:push': DefinitionsPush,
  delete: Delete,
  'env:promote': EnvPromote,
  'gate:apply': GateApply,
  'gate:cancel': GateCancel,
  'gate:diff': GateDiff,
  'gate:get': GateGet,
  'gate:result': GateResult,
  'gate:run': GateRun,
  'gate:status': GateStatus,
  'gate:submit': GateSubmit,
  'gate:suggest': GateSuggest,
  'gate:validate': GateValidate,
  list: List,
  'members:list': MembersList,
  push: Push,
  'quarantine:list': QuarantineList,
  'quarantine:open': QuarantineOpen,
  'recertification:dismiss': RecertificationDismiss,
  'recertification:list': RecertificationList,
  recertify: Recertify,
  reject: Reject,
  status: Status,
  'tokens:issue': TokensIssue,
  'tokens:refresh': TokensRefresh,
  'versions:list': VersionsList,
  'versions:restore': VersionsRestore,
  whoami: Whoami,
};
