// @agentwire/schemas: the shapes every agentwire part agrees on.
// Any new export added here becomes public API.
export {
  CompanyDocument,
  Digest,
  DigestDelta,
  DigestItem,
  DigestRequest,
  DocumentId,
  Email,
  EmailId,
  Employee,
  EmployeeId,
  IsoDate,
  Note,
  NoteRequest,
  OfficeDays,
  Reply,
  ReplyRequest,
  TEAMS,
  Team,
  WEEKDAYS,
  Weekday,
} from './entities.js';
export { ERROR_STATUS, ERROR_TYPES, errorTypeForStatus } from './error-types.js';
export { ErrorEnvelope, ErrorType } from './errors.js';
export { LOG_LEVELS, LOG_REDACT_PATHS, readLogLevel, redactedRequest, redactUrl } from './log-redaction.js';
export { EmailPage, EmployeeList, NoteList, Page, ReplyList } from './pages.js';
export {
  DigestQuery,
  FAULT_ACTIONS,
  FaultConfig,
  FaultRule,
  FlakyQuery,
  Health,
  HTTP_METHODS,
  LimitedQuery,
  ListEmailsQuery,
  ListEmployeesQuery,
  MAX_PAGE_SIZE,
  MAX_SLOW_MS,
  SlowQuery,
} from './requests.js';
export { secretProblem } from './secrets.js';
export {
  readUpstreamReport,
  UPSTREAM_REPORT_KEY,
  UpstreamAttemptReport,
  UpstreamReport,
} from './upstream-report.js';
export { formatValidationErrors, jsonPath, jsonType } from './validation-messages.js';
export {
  compileValidator,
  createAjv,
  type Validate,
  type ValidationResult,
  type ValidatorOptions,
} from './validator.js';
