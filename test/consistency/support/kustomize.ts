/**
 * Renders a kustomization of deploy/kubernetes as `kubectl kustomize` does, for the features those
 * files use and no others: resources (files and directories), secretGenerator with literals (the
 * name gets kustomize's content hash and every reference follows it), patches (JSON 6902 `replace`
 * and `test`, aimed by kind and name), namespace and images (newName, newTag). Any other field of
 * a kustomization is an error here, so a kustomization that outgrows this fails the test instead of
 * rendering wrongly. Where kubectl is installed, the test also renders with it and compares.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';

/** A Kubernetes object as read from YAML. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  resources?: string[];
  secretGenerator?: { name: string; literals: string[] }[];
  patches?: { path: string; target: { kind: string; name: string } }[];
  images?: { name: string; newName?: string; newTag?: string }[];
}

const supported = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'secretGenerator', 'patches', 'images']);
const clusterScoped = new Set(['Namespace']);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Node = Record<string, Json>;

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Calls visit on every object node of a tree, the root included. */
function walk(value: unknown, visit: (node: Node) => void): void {
  if (Array.isArray(value)) for (const item of value) walk(item, visit);
  else if (isNode(value)) {
    visit(value);
    for (const child of Object.values(value)) walk(child, visit);
  }
}

/**
 * kustomize's name suffix for a generated Secret: SHA-256 of the Secret as Go's json.Marshal writes
 * it (keys sorted; the name empty), its first ten hex digits with 0, 1, 3, a, e swapped for letters
 * (api/hasher in kustomize), so that a suffix never reads as a number or a word.
 */
function secretHash(data: Record<string, string>): string {
  const sorted = Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : 1)));
  const json = JSON.stringify({ data: sorted, kind: 'Secret', name: '', type: 'Opaque' });
  const swap: Record<string, string> = { '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' };
  const hex = createHash('sha256').update(json).digest('hex').slice(0, 10);
  return hex.replace(/[013ae]/g, (digit) => swap[digit] ?? digit);
}

function generateSecret(generator: { name: string; literals: string[] }): KubeObject {
  const data = Object.fromEntries(
    generator.literals.map((literal) => {
      const split = literal.indexOf('=');
      return [literal.slice(0, split), Buffer.from(literal.slice(split + 1)).toString('base64')];
    }),
  );
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${generator.name}-${secretHash(data)}` }, type: 'Opaque', data };
}

/** Points every reference to the Secret `from` (env, envFrom, volumes) at `to`. */
function renameSecretReferences(objects: KubeObject[], from: string, to: string): void {
  walk(objects, (node) => {
    for (const key of ['secretKeyRef', 'secretRef']) {
      const ref = node[key];
      if (isNode(ref) && ref.name === from) ref.name = to;
    }
    const volume = node.secret;
    if (isNode(volume) && volume.secretName === from) volume.secretName = to;
  });
}

/**
 * RFC 6902's `replace`, and `test` (which stops the build, as kustomize does, when the value at the
 * path differs: a guard against patching the wrong list entry); JSON pointers (RFC 6901) without escapes.
 */
function applyJsonPatch(target: KubeObject, operations: { op: string; path: string; value?: Json }[]): void {
  for (const { op, path, value } of operations) {
    if (!['replace', 'test'].includes(op) || value === undefined || /~/.test(path))
      throw new Error(`JSON patch: unsupported ${op} ${path}`);
    const keys = path.split('/').slice(1);
    const last = keys.pop() ?? '';
    let parent: unknown = target;
    for (const key of keys) parent = isNode(parent) || Array.isArray(parent) ? (parent as Record<string, unknown>)[key] : undefined;
    if (!(isNode(parent) || Array.isArray(parent)) || !(last in parent)) throw new Error(`JSON patch: no such path ${path}`);
    const values = parent as Record<string, Json>;
    if (op === 'replace') values[last] = value;
    else if (!isDeepStrictEqual(values[last], value)) throw new Error(`JSON patch: test of ${path} failed`);
  }
}

/** `name[:tag]` or `name@digest` as kustomize splits an image reference. */
function splitImage(image: string): { name: string; tag: string } {
  const at = image.indexOf('@');
  if (at >= 0) return { name: image.slice(0, at), tag: image.slice(at) };
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/') ? { name: image.slice(0, colon), tag: image.slice(colon) } : { name: image, tag: '' };
}

function setImages(objects: KubeObject[], images: NonNullable<Kustomization['images']>): void {
  walk(objects, (node) => {
    for (const list of [node.containers, node.initContainers]) {
      if (!Array.isArray(list)) continue;
      for (const container of list) {
        if (!isNode(container) || typeof container.image !== 'string') continue;
        const { name, tag } = splitImage(container.image);
        const entry = images.find((image) => image.name === name);
        if (entry !== undefined) container.image = `${entry.newName ?? name}${entry.newTag === undefined ? tag : `:${entry.newTag}`}`;
      }
    }
  });
}

/** The objects `kubectl kustomize <dir>` prints, in no particular order. */
export function kustomize(dir: string): KubeObject[] {
  const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization;
  const unsupported = Object.keys(kustomization).filter((key) => !supported.has(key));
  if (unsupported.length > 0) throw new Error(`${dir}: the test's kustomize renderer does not support ${unsupported.join(', ')}`);

  const objects: KubeObject[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = join(dir, resource);
    if (statSync(path).isDirectory()) objects.push(...kustomize(path));
    else objects.push(...parseAllDocuments(readFileSync(path, 'utf8')).map((document) => document.toJS() as KubeObject));
  }
  const generated = (kustomization.secretGenerator ?? []).map((generator) => ({ generator, secret: generateSecret(generator) }));
  objects.push(...generated.map(({ secret }) => secret));

  for (const { path, target } of kustomization.patches ?? []) {
    const operations = parse(readFileSync(join(dir, path), 'utf8')) as unknown;
    if (!Array.isArray(operations)) throw new Error(`${dir}/${path}: only JSON 6902 patches (a list of operations) are supported`);
    const targets = objects.filter((o) => o.kind === target.kind && o.metadata.name === target.name);
    if (targets.length === 0) throw new Error(`${dir}/${path}: no ${target.kind} ${target.name} to patch`);
    for (const object of targets) applyJsonPatch(object, operations as { op: string; path: string; value?: Json }[]);
  }
  if (kustomization.namespace !== undefined) {
    for (const object of objects) if (!clusterScoped.has(object.kind)) object.metadata.namespace = kustomization.namespace;
  }
  setImages(objects, kustomization.images ?? []);
  for (const { generator, secret } of generated) renameSecretReferences(objects, generator.name, secret.metadata.name);
  return objects;
}

/** kind/namespace/name, the key an object is known by. */
export const keyOf = (object: KubeObject): string => `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
