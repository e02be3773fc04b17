import { parse } from 'yaml';
import { readRepoFile } from './repo-files.js';

/** The parts of a compose (or swarm stack) service these tests read. */
export interface ComposeService {
  image?: string;
  build?: { context?: string; args?: Record<string, string> };
  environment?: Record<string, string | null> | string[];
  /** Short syntax `host:container`, or long syntax as in the swarm file. */
  ports?: (string | { target: number; published: string | number })[];
  depends_on?: string[] | Record<string, unknown>;
}

/** A compose file's services by name, parsed (anchors resolved). */
export function composeServices(path: string): Record<string, ComposeService> {
  return (parse(readRepoFile(path), { merge: true }) as { services: Record<string, ComposeService> }).services;
}

/** The environment as a map, whichever of the two syntaxes the file uses; null for a variable passed through (no value). */
function variablesOf(service: ComposeService): Record<string, string | null> {
  const env = service.environment ?? {};
  if (!Array.isArray(env)) return env;
  return Object.fromEntries(env.map((e) => (e.includes('=') ? [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)] : [e, null])));
}

/** The variables the file sets, as a map. */
export function environmentOf(service: ComposeService): Record<string, string> {
  return Object.fromEntries(Object.entries(variablesOf(service)).filter((entry): entry is [string, string] => entry[1] !== null));
}

/** The variables passed through from where the file is deployed (a name without a value), unset there: unset here. */
export const passedThroughOf = (service: ComposeService): string[] =>
  Object.entries(variablesOf(service))
    .filter(([, value]) => value === null)
    .map(([name]) => name);

export function dependenciesOf(service: ComposeService): string[] {
  const deps = service.depends_on ?? [];
  return Array.isArray(deps) ? deps : Object.keys(deps);
}

/** Each published port as [host side, container port], e.g. ['${WEB_PORT:-3000}', 3000]. */
export function publishedPorts(service: ComposeService): [string, number][] {
  return (service.ports ?? []).map((p) => {
    if (typeof p !== 'string') return [String(p.published), p.target];
    const split = p.lastIndexOf(':');
    return [p.slice(0, split), Number(p.slice(split + 1))];
  });
}
