import { readServiceConfig, type Env, type ServiceConfig } from '@svc/kit';
import { services } from '@svc/manifest';

/** Variant A reads only what every service reads; /health reports the run mode (NODE_ENV). */
export type SimpleConfig = ServiceConfig;

export const readConfig = (env: Env): SimpleConfig => readServiceConfig(env, services.simple);
