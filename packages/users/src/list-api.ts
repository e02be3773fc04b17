/**
 * The list's HTTP contract without the stores: what a service that forwards the list (the
 * frontend) needs, importable without loading the PostgreSQL and SQLite drivers.
 */
export { parseListQuery, type ListRequest } from './list-query.js';
export { BadListQuery, ListQuery, User, UserList } from './schemas.js';
