/**
 * The services of this repository and the stacks they run in: the one place that lists them. Each
 * service owns its facts (src/service.ts: name, port, start-up line), which it runs with; the stack
 * runner, the image build, the test support and the bench read them here, and tests check the
 * compose files, the Dockerfile, the README and docs/ against them. Not loaded by any service.
 * Adding a service: docs/architecture.md's numbered steps (a folder under services/, then here an entry, a dependency
 * in package.json and a reference in tsconfig.json).
 */
import { service as backend } from '@sample-services/backend/service';
import { service as database } from '@sample-services/database/service';
import { service as frontend } from '@sample-services/frontend/service';
import { service as proxy } from '@sample-services/proxy/service';
import { service as simple } from '@sample-services/simple/service';

export interface ServiceEntry {
  /** The workspace folder `services/<name>`, the log's name, and the image `sample-<name>`. */
  readonly name: string;
  /** Where the spec describes it. */
  readonly spec: string;
  /** One line on what it does (README table, OpenAPI title). */
  readonly summary: string;
  /** Default listening port (spec 4.5); PORT overrides it. */
  readonly port: number;
  /** The start-up line's text before the port, e.g. `Server running on port` (original-facts). */
  readonly startedMessage: string;
  /** Variables read for the run mode, first set wins (variant B's original reads FLASK_ENV). */
  readonly modeVariables: readonly string[];
}

export const services = {
  simple: { ...simple, spec: 'variant A' },
  proxy: { ...proxy, spec: 'reverse proxy' },
  database: { ...database, spec: 'variant B' },
  backend: { ...backend, spec: 'variant C' },
  frontend: { ...frontend, spec: 'variant C' },
} as const satisfies Record<string, ServiceEntry>;

export type ServiceName = keyof typeof services;
export const serviceNames = Object.keys(services) as ServiceName[];

/** The start-up line of a service listening on `port`. */
export const startedLine = (service: ServiceName, port: number): string => `${services[service].startedMessage} ${port}`;

/** The image the compose files and the container tests use for a service. */
export const imageOf = (service: ServiceName, tag: string): string => `sample-${service}:${tag}`;

/** A service in a stack, under the name the others reach it by (the compose service name). */
export interface StackMember {
  readonly as: string;
  readonly service: ServiceName;
  /**
   * Variables that point this member at another one: variable -> that member's `as`. Locally the
   * value is `http://127.0.0.1:<its port>`; in compose `http://<as>:<port>`.
   */
  readonly links?: Readonly<Record<string, string>>;
  /** The image compose runs for this member instead of ours (nginx for the proxy, spec 4.4). */
  readonly composeImage?: string;
}

export interface Stack {
  /** Members in start order: each starts once the ones before it are healthy. */
  readonly members: readonly StackMember[];
  /** What compose adds that runs without containers from elsewhere (PostgreSQL; SQLite locally). */
  readonly composeOnly: readonly string[];
  /**
   * One-shot commands the compose file runs from a member's image (`node dist/<name>.js`), not in the
   * Swarm file: migrate, which the member waits for (it applies the migrations at start as well).
   */
  readonly commands: readonly string[];
  /** One-shot commands like those, run only on request: each behind the compose profile of its name (seed). */
  readonly profiles: readonly string[];
}

export const stacks = {
  simple: {
    members: [
      { as: 'web', service: 'simple' },
      { as: 'proxy', service: 'proxy', links: { UPSTREAM_URL: 'web' }, composeImage: 'nginx:1.30' },
    ],
    composeOnly: [],
    commands: [],
    profiles: [],
  },
  database: {
    members: [{ as: 'web', service: 'database' }],
    composeOnly: ['db'],
    commands: ['migrate'],
    profiles: ['seed'],
  },
  'two-tier': {
    members: [
      { as: 'backend', service: 'backend' },
      { as: 'frontend', service: 'frontend', links: { BACKEND_URL: 'backend' } },
    ],
    composeOnly: ['db'],
    commands: ['migrate'],
    profiles: ['seed'],
  },
} as const satisfies Record<string, Stack>;

export type StackName = keyof typeof stacks;
export const stackNames = Object.keys(stacks) as StackName[];

/** The variable the stack runner reads to move a service's port, e.g. SIMPLE_PORT. */
export const portVariableOf = (service: ServiceName): string => `${service.toUpperCase()}_PORT`;
