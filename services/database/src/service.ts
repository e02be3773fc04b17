import type { ServiceIdentity } from '@sample-services/kit/config';

/** What this service is: its name (logs, image), default port (PORT overrides it) and start-up line. */
export const service = {
  name: 'database',
  summary: 'users in PostgreSQL (`DATABASE_URL`) or a local SQLite file; list, create, health with a database probe',
  port: 5000,
  startedMessage: 'Database app running on port',
  // The original (Flask) read FLASK_ENV; NODE_ENV is read when it is unset.
  modeVariables: ['FLASK_ENV', 'NODE_ENV'],
} as const satisfies ServiceIdentity;
