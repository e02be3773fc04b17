/** The images of this repository: one per service, built from the root Dockerfile (spec 4.5 ports). */
export const services = [
  { service: 'simple', port: 3000 },
  { service: 'proxy', port: 80 },
  { service: 'database', port: 5000 },
  { service: 'backend', port: 5000 },
  { service: 'frontend', port: 3000 },
] as const;

export type ServiceName = (typeof services)[number]['service'];

/** What the global setup hands to the test files (vitest provide/inject). */
export interface ContainerStage {
  /** Set when no engine is available outside CI: every file skips with this message. */
  skipReason?: string;
  /** Tag of every image built for this run; compose files read it as TAG. */
  tag: string;
  /** Unique per run: compose project names, container and volume names derive from it. */
  runId: string;
}

/** The image reference the compose files use: `sample-<service>:${TAG}`. */
export function imageOf(service: ServiceName, tag: string): string {
  return `sample-${service}:${tag}`;
}

declare module 'vitest' {
  export interface ProvidedContext {
    containerStage: ContainerStage;
  }
}
