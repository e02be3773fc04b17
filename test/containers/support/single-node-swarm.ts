import { docker, dockerResult, waitFor } from './docker.js';

/**
 * This engine as a one-node swarm whose node may run PostgreSQL (label db=true, as the stacks'
 * placement asks), for a file's stacks. Leaves it as found: the returned function takes away
 * only what this call added (the label, the swarm and the bridge `swarm init` creates).
 */
export async function useSingleNodeSwarm(): Promise<() => Promise<void>> {
  let initializedHere = false;
  if ((await docker(['info', '--format', '{{.Swarm.LocalNodeState}}'])) !== 'active') {
    await docker(['swarm', 'init', '--advertise-addr', '127.0.0.1']);
    initializedHere = true;
  }
  const node = await docker(['info', '--format', '{{.Swarm.NodeID}}']);
  let labelledHere = false;
  if ((await docker(['node', 'inspect', node, '--format', '{{index .Spec.Labels "db"}}'])) !== 'true') {
    await docker(['node', 'update', '--label-add', 'db=true', node]);
    labelledHere = true;
  }
  return async () => {
    if (labelledHere) await dockerResult(['node', 'update', '--label-rm', 'db', node]);
    if (initializedHere) {
      await docker(['swarm', 'leave', '--force']);
      await dockerResult(['network', 'rm', 'docker_gwbridge']); // created by swarm init, left by leave
    }
  };
}

/** `docker stack rm`, then its volumes, which go only once every task's container and its network are gone. */
export async function removeStack(name: string): Promise<void> {
  await dockerResult(['stack', 'rm', name]);
  await waitFor(
    `${name}'s containers and network to go`,
    async () => {
      const [containers, networks] = await Promise.all([
        docker(['ps', '-aq', '--filter', `label=com.docker.stack.namespace=${name}`]),
        docker(['network', 'ls', '-q', '--filter', `name=${name}_`]),
      ]);
      return containers === '' && networks === '' ? true : undefined;
    },
    90_000,
    1_000,
  );
  const volumes = (await docker(['volume', 'ls', '-q', '--filter', `label=com.docker.stack.namespace=${name}`]))
    .split('\n')
    .filter(Boolean);
  if (volumes.length > 0) await docker(['volume', 'rm', ...volumes]);
}

/** Task containers of a swarm service on this node. */
export async function tasksOf(service: string): Promise<string[]> {
  return (await docker(['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${service}`])).split('\n').filter(Boolean);
}

/** Running tasks of a service (`docker service ls`: with a health check, a task runs once healthy). */
export async function running(service: string): Promise<number> {
  const line = await docker(['service', 'ls', '--filter', `name=${service}`, '--format', '{{.Name}} {{.Replicas}}']);
  return Number(new RegExp(`^${service} (\\d+)/\\d+`, 'm').exec(line)?.[1] ?? 0);
}

/** http://127.0.0.1:<port> of a task's container port, published in host mode on a free port. */
export async function taskUrl(container: string, port: number): Promise<string> {
  const mapping = (await docker(['port', container, `${port}/tcp`])).split('\n')[0] ?? '';
  const match = /:(\d+)$/.exec(mapping);
  if (!match) throw new Error(`${container}:${port} is not published (docker port says "${mapping}")`);
  return `http://127.0.0.1:${match[1]}`;
}
