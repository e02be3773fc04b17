import { readChoice, readServiceConfig, type Env, type ServiceConfig } from '@sample-services/kit/config';
import { service } from './service.js';

/** Variant A reads what every service reads, and METRICS; /health reports the run mode (NODE_ENV). */
export interface SimpleConfig extends ServiceConfig {
  /** METRICS=off: no request is counted and there is no GET /metrics, for an operator who does not scrape it. */
  metrics: boolean;
}

export const readConfig = (env: Env): SimpleConfig => ({
  ...readServiceConfig(env, service),
  metrics: readChoice(env, 'METRICS', 'on', ['on', 'off']) === 'on',
});
