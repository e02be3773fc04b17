import { readInt, readUrl, runService } from '@svc/kit';
import { createFrontendApp } from './app.js';
import { createBackendClient } from './backend-client.js';

await runService({
  name: 'frontend',
  defaults: { port: 3000 },
  build: ({ env, logger }) => {
    const backendUrl = readUrl(env, 'BACKEND_URL', 'http://backend:5000', ['http:', 'https:']);
    const timeoutMs = readInt(env, 'BACKEND_TIMEOUT_MS', 5_000, 1, 600_000);
    logger.info({ backend: backendUrl.href, timeoutMs }, 'users come from the backend');
    return { app: createFrontendApp({ logger, backend: createBackendClient(backendUrl, timeoutMs) }) };
  },
  startedMessage: (port) => `Frontend service running on port ${port}`,
});
