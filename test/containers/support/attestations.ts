import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { docker, dockerBin, repoRoot, waitFor } from './docker.js';
import { ensureSidImage } from './engine.js';

/**
 * Where BuildKit's attestations can be made here: the stage's engine keeps images in its classic store,
 * and BuildKit refuses attestations there ("Attestation is not supported for the docker driver"). Engine 28
 * in a container (offline-images/build-sid.sh), its images in containerd's store, takes them.
 */
const dindImage = 'docker:28.5-dind';
/** BuildKit's default SBOM generator, which `--sbom=true` runs; only a registry has it, so a stand-in takes its name. */
const scannerImage = 'docker/buildkit-syft-scanner:stable-1';
const scannerDir = join(repoRoot, 'test/containers/support/sbom-scanner');
/** What the Dockerfile builds from, copied in from the stage's engine (the new engine has no image). */
const baseImage = 'node:24-bookworm-slim';

export interface AttestingEngine {
  /** DOCKER_HOST of the engine: its API on a loopback port. */
  host: string;
  release: () => Promise<void>;
}

/** `docker save <image>` on the stage's engine into `docker load` on the one at `host`. */
function copyImage(image: string, host: string): Promise<void> {
  return new Promise((done, fail) => {
    const save = spawn(dockerBin, ['save', image], { stdio: ['ignore', 'pipe', 'inherit'] });
    const load = spawn(dockerBin, ['load', '--quiet'], {
      stdio: ['pipe', 'ignore', 'inherit'],
      env: { ...process.env, DOCKER_HOST: host },
    });
    save.stdout.pipe(load.stdin);
    save.on('error', fail);
    load.on('error', fail);
    load.on('exit', (code) => (code === 0 ? done() : fail(new Error(`docker load of ${image} exited with ${code}`))));
  });
}

/**
 * A containerd-store engine for one test: Engine 28 in a privileged container, its API published on
 * 127.0.0.1 only, the base image and the stand-in scanner in it. release() removes it with its volume.
 */
export async function startAttestingEngine(name: string): Promise<AttestingEngine> {
  await ensureSidImage(dindImage, 'docker');
  const dir = await mkdtemp(join(tmpdir(), `${name}-`));
  await writeFile(join(dir, 'daemon.json'), JSON.stringify({ features: { 'containerd-snapshotter': true } }));
  const release = async (): Promise<void> => {
    await docker(['rm', '--force', '--volumes', name]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await docker([
      'run', '--detach', '--privileged', '--name', name, '--publish', '127.0.0.1:0:2375',
      '--volume', `${join(dir, 'daemon.json')}:/etc/docker/daemon.json:ro`,
      dindImage, '--host', 'tcp://0.0.0.0:2375', '--tls=false',
    ]); // prettier-ignore
    const host = `tcp://${(await docker(['port', name, '2375'])).split('\n')[0]}`;
    const env = { DOCKER_HOST: host };
    // Until dockerd answers, `docker info` prints the client's part alone, with no storage driver.
    const info = (): Promise<string | undefined> =>
      docker(['info', '--format', '{{.Driver}}|{{json .DriverStatus}}'], { env }).then((out) => (out.startsWith('|') ? undefined : out));
    const driver = await waitFor('the engine in the container', info, 60_000);
    if (!driver.includes('io.containerd.snapshotter')) throw new Error(`${dindImage} keeps images in ${driver}, not containerd's store`);
    await copyImage(baseImage, host);
    await docker(['build', '--pull=false', '--quiet', '--tag', scannerImage, scannerDir], { env, timeoutMs: 120_000 });
    return { host, release };
  } catch (error) {
    await release();
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
