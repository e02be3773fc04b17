/**
 * The users' HTTP contract without the stores: what a service that forwards the list (the
 * frontend) needs, importable without loading the PostgreSQL and SQLite drivers.
 */
export { emailKey } from './email-key.js';
export { nextPageLink } from './next-page-link.js';
export { EMAIL_DOMAIN_MESSAGE, EMAIL_FORM_MESSAGE, EMAIL_LOCAL_MESSAGE, REQUIRED_MESSAGE, userRequestChecks } from './request-checks.js';
export {
  BadListQuery,
  DatabaseStatus,
  EMAIL_MAX_LENGTH,
  ListQuery,
  MAX_ID,
  MAX_PAGE_SIZE,
  NAME_MAX_LENGTH,
  NewUserBody,
  User,
  UserList,
} from './schemas.js';
export { EMAIL_PATTERN, NAME_PATTERN, TRIMMED_CHARACTERS } from './text-patterns.js';
