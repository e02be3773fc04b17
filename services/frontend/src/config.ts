import { readInt, readServiceConfig, readUrl, type Env, type ServiceConfig } from '@svc/kit';
import { services } from '@svc/manifest';

export interface FrontendConfig extends ServiceConfig {
  /** BACKEND_URL: where the users come from (spec 4.3: host `backend`, port 5000). */
  backendUrl: URL;
  /** BACKEND_TIMEOUT_MS: bound on one backend call, from connecting to the last byte. */
  backendTimeoutMs: number;
}

export const readConfig = (env: Env): FrontendConfig => ({
  ...readServiceConfig(env, services.frontend),
  backendUrl: readUrl(env, 'BACKEND_URL', 'http://backend:5000', ['http:', 'https:']),
  backendTimeoutMs: readInt(env, 'BACKEND_TIMEOUT_MS', 5_000, 1, 600_000),
});
