import { readInt, readServiceConfig, readUrl, type Env, type ServiceConfig } from '@sample-services/kit/config';
import { service } from './service.js';

export interface FrontendConfig extends ServiceConfig {
  /** BACKEND_URL: where the users come from (spec 4.3: host `backend`, port 5000). */
  backendUrl: URL;
  /**
   * BACKEND_TIMEOUT_MS: longest wait to connect to the backend, for its response headers and for
   * each next chunk of its body; not a bound on the whole response, which streams as long as it
   * keeps coming.
   */
  backendTimeoutMs: number;
}

export const readConfig = (env: Env): FrontendConfig => ({
  ...readServiceConfig(env, service),
  backendUrl: readUrl(env, 'BACKEND_URL', 'http://backend:5000', ['http:', 'https:']),
  backendTimeoutMs: readInt(env, 'BACKEND_TIMEOUT_MS', 5_000, 1, 600_000),
});
