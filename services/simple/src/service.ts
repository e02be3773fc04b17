import type { ServiceIdentity } from '@sample-services/kit/config';

/** What this service is: its name (logs, image), default port (PORT overrides it) and start-up line. */
export const service = {
  name: 'simple',
  summary: 'greeting, health with uptime and NODE_ENV, two static users',
  port: 3000,
  startedMessage: 'Server running on port',
  modeVariables: ['NODE_ENV'],
} as const satisfies ServiceIdentity;
