import { expect } from 'vitest';
import { inspectJson } from './docker.js';

interface HostConfig {
  ReadonlyRootfs: boolean;
  CapDrop: string[] | null;
  CapAdd: string[] | null;
  SecurityOpt: string[] | null;
  Init: boolean | null;
  Memory: number;
  NanoCpus: number;
  Tmpfs: Record<string, string> | null;
}

const hostConfigOf = (container: string): Promise<HostConfig> => inspectJson<HostConfig>(container, '{{json .HostConfig}}');

/** What the compose files promise for our services, as the engine applied it (docker inspect). */
export async function expectHardenedService(container: string): Promise<void> {
  const host = await hostConfigOf(container);
  expect(host).toMatchObject({
    ReadonlyRootfs: true,
    CapDrop: ['ALL'],
    CapAdd: null,
    SecurityOpt: ['no-new-privileges:true'],
    Init: true,
    Memory: 512 * 1024 * 1024,
    NanoCpus: 1e9,
  });
  // Longer than the services' own 10 s drain, so the engine never kills a draining service.
  expect(await inspectJson<number>(container, '{{json .Config.StopTimeout}}')).toBeGreaterThan(10);
}

/** nginx: read-only with its temporary files in memory, only the capabilities of a root master. */
export async function expectHardenedNginx(container: string): Promise<void> {
  const host = await hostConfigOf(container);
  expect(host).toMatchObject({ ReadonlyRootfs: true, CapDrop: ['ALL'], SecurityOpt: ['no-new-privileges:true'] });
  expect([...(host.CapAdd ?? [])].sort()).toEqual(['CHOWN', 'NET_BIND_SERVICE', 'SETGID', 'SETUID']);
  expect(Object.keys(host.Tmpfs ?? {})).toEqual(expect.arrayContaining(['/var/cache/nginx', '/run']));
}

/** The networks a container is attached to, without the compose project's prefix. */
export async function networksOf(container: string, project: string): Promise<string[]> {
  const networks = await inspectJson<Record<string, unknown>>(container, '{{json .NetworkSettings.Networks}}');
  return Object.keys(networks)
    .map((name) => name.replace(`${project}_`, ''))
    .sort();
}
