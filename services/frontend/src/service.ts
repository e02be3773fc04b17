import type { ServiceIdentity } from '@sample-services/kit/config';

/** What this service is: its name (logs, image), default port (PORT overrides it) and start-up line. */
export const service = {
  name: 'frontend',
  summary: 'a users page at `/`; forwards `GET /api/users` from the backend; 500 `{"error":"Failed to fetch users"}` when it fails',
  port: 3000,
  startedMessage: 'Frontend service running on port',
  modeVariables: ['NODE_ENV'],
} as const satisfies ServiceIdentity;
