import { posix } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
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

/** A service's `extends`: a service of the same file, or of `file` (relative to the file that names it). */
interface Extends {
  extends?: { file?: string; service: string };
}

/** Sequences that compose's `extends` appends to the base's (compose spec, "Merge and override"); others replace it. */
const appended = new Set([
  'cap_add',
  'cap_drop',
  'devices',
  'dns',
  'expose',
  'networks',
  'ports',
  'secrets',
  'security_opt',
  'tmpfs',
  'volumes',
]);

/** `override` over `base` as compose merges a service onto the one it extends: mappings key by key, the sequences above appended. */
function merged(base: unknown, override: unknown, key = ''): unknown {
  if (Array.isArray(base) && Array.isArray(override))
    return appended.has(key) ? [...base, ...override.filter((item) => !base.some((b) => isDeepStrictEqual(b, item)))] : override;
  const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isMap(base) || !isMap(override)) return override === undefined ? base : override;
  const result: Record<string, unknown> = { ...base };
  for (const [k, value] of Object.entries(override)) result[k] = merged(base[k], value, k);
  return result;
}

/** A compose file's services, parsed (anchors resolved), each as it extends another (compose's `extends`, with `file`). */
function servicesOf(path: string): Record<string, ComposeService & Extends> {
  return (parse(readRepoFile(path), { merge: true }) as { services: Record<string, ComposeService & Extends> }).services;
}

function resolved(path: string, as: string): ComposeService {
  const { extends: from, ...service } = servicesOf(path)[as] ?? {};
  if (from === undefined) return service;
  const basePath = from.file === undefined ? path : posix.join(posix.dirname(path), from.file);
  if (servicesOf(basePath)[from.service] === undefined) throw new Error(`${path}: ${as} extends ${from.service}, which ${basePath} lacks`);
  return merged(resolved(basePath, from.service), service) as ComposeService;
}

/** A compose file's services by name, parsed (anchors resolved), `extends` resolved as compose resolves it. */
export function composeServices(path: string): Record<string, ComposeService> {
  return Object.fromEntries(Object.keys(servicesOf(path)).map((as) => [as, resolved(path, as)]));
}

/** The service (and file, if another) each service of a compose file extends; none for one that extends nothing. */
export function extendsOf(path: string): Record<string, { file?: string; service: string } | undefined> {
  return Object.fromEntries(Object.entries(servicesOf(path)).map(([as, service]) => [as, service.extends]));
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
