import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot } from './docker.js';
import { openDind, type Dind } from './dind.js';
import type { ContainerStage } from './images.js';

/** BuildKit's default SBOM generator, which `--sbom=true` runs; only a registry has it, so a stand-in takes its name. */
const scannerImage = 'docker/buildkit-syft-scanner:stable-1';
const scannerDir = join(repoRoot, 'test/containers/support/sbom-scanner');
/** What the Dockerfile builds from, copied in from the stage's engine (the new engine has no image). */
const baseImage = 'node:24-bookworm-slim';

/**
 * Where BuildKit's attestations can be made here: the stage's engine keeps images in its classic store,
 * and BuildKit refuses attestations there ("Attestation is not supported for the docker driver"). Engine 28
 * in a container (support/dind.ts) with containerd's store takes them: the base image and the stand-in
 * scanner are put in it. `remove()` takes it away with its volume.
 */
export async function openAttestingEngine(stage: ContainerStage): Promise<Dind> {
  const dind = await openDind(stage, { purpose: 'attest', containerdStore: true });
  try {
    const driver = await dind.fromHost(['info', '--format', '{{.Driver}}|{{json .DriverStatus}}']);
    if (!driver.includes('io.containerd.snapshotter')) throw new Error(`${dind.name} keeps images in ${driver}, not containerd's store`);
    await dind.load([baseImage]);
    await dind.fromHost(['build', '--pull=false', '--quiet', '--tag', scannerImage, scannerDir], { timeoutMs: 120_000 });
    return dind;
  } catch (error) {
    await dind.remove();
    throw error;
  }
}

interface Descriptor {
  mediaType: string;
  digest: string;
  annotations?: Record<string, string>;
  platform?: { os: string; architecture: string };
}

/**
 * The attestations of the one image in an OCI layout folder (`--output type=oci,tar=false`): each in-toto
 * statement attached to it, by predicate type.
 */
export async function attestationsIn(layout: string): Promise<Map<string, { predicateType: string; predicate: unknown }>> {
  const blob = async <T>(digest: string): Promise<T> =>
    JSON.parse(await readFile(join(layout, 'blobs', ...digest.split(':')), 'utf8')) as T;
  const root = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as { manifests: Descriptor[] };
  const [top] = root.manifests;
  if (top === undefined) throw new Error(`${layout}: no manifest`);
  // BuildKit writes an index: the image's manifest and, beside it, an attestation manifest that points at it.
  const index = top.mediaType.endsWith('index.v1+json') ? await blob<{ manifests: Descriptor[] }>(top.digest) : { manifests: [top] };
  const image = index.manifests.find((m) => m.platform?.os === 'linux');
  const attestation = index.manifests.find((m) => m.annotations?.['vnd.docker.reference.type'] === 'attestation-manifest');
  if (image === undefined || attestation === undefined) throw new Error(`${layout}: no image with an attestation manifest`);
  if (attestation.annotations?.['vnd.docker.reference.digest'] !== image.digest) throw new Error('the attestations are not the image’s');
  const { layers } = await blob<{ layers: Descriptor[] }>(attestation.digest);
  const statements = new Map<string, { predicateType: string; predicate: unknown }>();
  for (const layer of layers) {
    const statement = await blob<{ predicateType: string; predicate: unknown }>(layer.digest);
    statements.set(statement.predicateType, statement);
  }
  return statements;
}
