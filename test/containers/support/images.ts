import { imageOf, serviceNames, services as manifest, stacks, type ServiceName, type StackMember, type StackName } from '@svc/manifest';

export { imageOf, type ServiceName, type StackName };

/** The images of this repository: one per service of the manifest, with its default port. */
export const services = serviceNames.map((service) => ({ service, port: manifest[service].port }));

/** The container port of a stack member, by its compose name (e.g. `web` of `database`: 5000). */
export function memberPort(stack: StackName, as: string): number {
  const members: readonly StackMember[] = stacks[stack].members;
  const member = members.find((m) => m.as === as);
  if (member === undefined) throw new Error(`stack ${stack} has no member ${as}`);
  return manifest[member.service].port;
}

/** What the global setup hands to the test files (vitest provide/inject). */
export interface ContainerStage {
  /** Set when no engine is available outside CI: every file skips with this message. */
  skipReason?: string;
  /** Tag of every image built for this run; compose files read it as TAG. */
  tag: string;
  /** Unique per run: compose project names, container and volume names derive from it. */
  runId: string;
  /** The OCI label values the images were built with (REVISION, VERSION, CREATED, SOURCE). */
  provenance?: Record<string, string>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    containerStage: ContainerStage;
  }
}
