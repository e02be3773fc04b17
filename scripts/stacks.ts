/**
 * The services and stacks that run without containers, mirroring deploy/compose: same
 * default ports, and members listed in dependency order, since the runner starts each
 * one only once the previous one answers its health check.
 */
export const serviceNames = ['simple', 'proxy', 'database', 'backend', 'frontend'] as const;
export type ServiceName = (typeof serviceNames)[number];

export interface StackMember {
  service: ServiceName;
  /** The stack-level variable that moves this service's port (each service itself reads PORT). */
  portVariable: string;
  defaultPort: number;
  /** Environment that wires the member to the ports chosen for the others. */
  env?: (ports: Partial<Record<ServiceName, number>>) => Record<string, string>;
}

export const stacks: Record<string, readonly StackMember[]> = {
  simple: [
    { service: 'simple', portVariable: 'SIMPLE_PORT', defaultPort: 3000 },
    {
      service: 'proxy',
      portVariable: 'PROXY_PORT',
      defaultPort: 80,
      env: (ports) => ({ UPSTREAM_URL: `http://127.0.0.1:${ports.simple}` }),
    },
  ],
  database: [{ service: 'database', portVariable: 'DATABASE_PORT', defaultPort: 5000 }],
  'two-tier': [
    { service: 'backend', portVariable: 'BACKEND_PORT', defaultPort: 5000 },
    {
      service: 'frontend',
      portVariable: 'FRONTEND_PORT',
      defaultPort: 3000,
      env: (ports) => ({ BACKEND_URL: `http://127.0.0.1:${ports.backend}` }),
    },
  ],
};

export function serviceEntry(service: ServiceName): string {
  return new URL(`../services/${service}/dist/main.js`, import.meta.url).pathname;
}
