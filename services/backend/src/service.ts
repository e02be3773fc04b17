import type { ServiceIdentity } from '@sample-services/kit/config';

/** What this service is: its name (logs, image), default port (PORT overrides it) and start-up line. */
export const service = {
  name: 'backend',
  summary: 'users from the database; health with `service` and `database`',
  port: 5000,
  startedMessage: 'Backend service running on port',
  // The original (Flask) read FLASK_ENV; NODE_ENV is read when it is unset.
  modeVariables: ['FLASK_ENV', 'NODE_ENV'],
} as const satisfies ServiceIdentity;
