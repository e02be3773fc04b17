/**
 * The objects `kubectl kustomize <dir>` renders: the real kustomize, so the test checks exactly what
 * `kubectl apply -k` would send. kubectl is a system tool here; .ci/run installs it under CI.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';

/** A Kubernetes object as read from YAML. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** kind/namespace/name, the key an object is known by. */
export const keyOf = (object: KubeObject): string => `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;

/** Thrown when kubectl is not on PATH, so a caller can tell a missing tool from a kustomization that does not build. */
export class KubectlMissing extends Error {
  constructor() {
    super('kubectl is not installed (required under CI=true: .ci/run installs it)');
    this.name = 'KubectlMissing';
  }
}

/** The objects `kubectl kustomize <dir>` prints, in its order; rejects with kustomize's own message when the build fails. */
export async function kubectlKustomize(dir: string): Promise<KubeObject[]> {
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)('kubectl', ['kustomize', dir], { timeout: 30_000, maxBuffer: 16 * 2 ** 20 }));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new KubectlMissing();
    const { stderr } = error as { stderr?: string };
    throw new Error(`kubectl kustomize ${dir} failed: ${stderr?.trim() || (error as Error).message}`);
  }
  return parseAllDocuments(stdout).map((document) => {
    if (document.errors.length > 0) throw new Error(`kubectl kustomize ${dir}: unreadable YAML: ${document.errors[0]?.message}`);
    return document.toJS() as KubeObject;
  });
}
