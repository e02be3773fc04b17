import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { docker, repoRoot, type CliOptions } from './docker.js';
import type { ContainerStage } from './images.js';

const script = join(repoRoot, 'deploy/swarm/multi-node/cluster.sh');

/**
 * The three-node swarm of deploy/swarm/multi-node/cluster.sh (the script a user runs), named after
 * this run. Everything of the swarm lives in the node containers' engines: the outer engine only
 * runs the containers, so its own swarm state (other files use one) is never touched.
 */
export interface Cluster {
  manager: string;
  workers: [string, string];
  /** The worker labelled db=true by the script (PostgreSQL's node). */
  dbNode: string;
  /** cluster.sh up: node image, engines, swarm, the images of this run loaded into every node. */
  up: () => Promise<void>;
  /** cluster.sh down: safe after a failed or partial up. */
  down: () => Promise<void>;
  /** docker against the manager's engine, through its socket in a host folder. */
  swarm: (args: string[], options?: CliOptions) => Promise<string>;
  /** docker against one node's own engine (docker exec <node> docker …). */
  onNode: (node: string, args: string[]) => Promise<string>;
  /** The node's address on the cluster's network (its published ports answer there). */
  ipOf: (node: string) => Promise<string>;
}

function runScript(command: 'up' | 'down', env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [script, command], { env: { ...process.env, ...env }, timeout: 600_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`cluster.sh ${command} failed (${error.code ?? error.signal}):\n${stdout}\n${stderr}`.trim()));
      else resolve(stdout);
    });
  });
}

export async function openCluster(stage: ContainerStage): Promise<Cluster> {
  const name = `mn-${stage.runId}`;
  const stateDir = await mkdtemp(join(tmpdir(), `${name}-`));
  const env = { CLUSTER: name, TAG: stage.tag, STATE_DIR: stateDir };
  const manager = `${name}-manager`;
  return {
    manager,
    workers: [`${name}-worker1`, `${name}-worker2`],
    dbNode: `${name}-worker1`,
    up: async () => {
      await runScript('up', env);
    },
    down: async () => {
      await runScript('down', env);
      await rm(stateDir, { recursive: true, force: true });
    },
    swarm: (args, options = {}) => docker(args, { ...options, env: { ...options.env, DOCKER_HOST: `unix://${stateDir}/manager.sock` } }),
    onNode: (node, args) => docker(['exec', node, 'docker', ...args]),
    ipOf: (node) => docker(['inspect', '--format', `{{(index .NetworkSettings.Networks "${name}-net").IPAddress}}`, node]),
  };
}
