import type { ServiceIdentity } from '@sample-services/kit/config';

/** What this service is: its name (logs, image), default port (PORT overrides it) and start-up line. */
export const service = {
  name: 'proxy',
  summary: 'forwards every request to `web`, with Host, X-Real-IP and X-Forwarded-For',
  port: 80,
  startedMessage: 'Proxy running on port',
  modeVariables: ['NODE_ENV'],
} as const satisfies ServiceIdentity;
