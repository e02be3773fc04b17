import pg from 'pg';
import { DatabaseUnavailableError } from './user-store.js';

// SQLSTATE classes that mean "cannot reach or use the database right now": connection
// exception, invalid authorization, invalid catalog name, insufficient resources,
// operator intervention (shutdown, statement timeout), transaction rollback.
const unavailableClasses = new Set(['08', '28', '3D', '53', '57', '40']);

/**
 * Errors the server reports carry an SQLSTATE; of those only the classes above mean the database
 * is unavailable, anything else (a broken query) is a bug and stays a 500. Errors the server did
 * not send come from the socket, the pool or a client-side timeout: unavailable.
 */
export function classify(error: unknown): unknown {
  if (error instanceof pg.DatabaseError && !unavailableClasses.has((error.code ?? '').slice(0, 2))) return error;
  return new DatabaseUnavailableError(error);
}
