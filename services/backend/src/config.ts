import { readServiceConfig, type Env, type ServiceConfig } from '@sample-services/kit/config';
import { service } from './service.js';
import { readStoreConfig, type StoreConfig } from '@sample-services/users/open-store';

export interface BackendConfig extends ServiceConfig {
  store: StoreConfig;
}

/** The common variables (the run mode from FLASK_ENV first, spec 4.5) and where users are stored. */
export const readConfig = (env: Env): BackendConfig => ({ ...readServiceConfig(env, service), store: readStoreConfig(env) });
