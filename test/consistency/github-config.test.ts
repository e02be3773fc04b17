import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from '@sample-services/testing/repo-root';
import { readRepoFile, repoFileExists } from './support/repo-files.js';

// action-validator ships the published workflow schema in its WebAssembly core, so this runs offline.
const validatorCli = createRequire(import.meta.url).resolve('@action-validator/cli/cli.mjs');

/** The validator's verdict on a workflow file: exit code and its JSON list of errors. */
function validateWorkflow(path: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [validatorCli, path], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { status: run.status, output: run.stdout + run.stderr };
}

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Workflow {
  jobs: Record<string, { 'runs-on': string; needs?: string; strategy?: { matrix?: Record<string, unknown[]> }; steps: Step[] }>;
}

describe('.github/workflows/ci.yml', () => {
  const workflowPath = '.github/workflows/ci.yml';
  const workflow = parse(readRepoFile(workflowPath)) as Workflow;

  it("is a valid workflow by GitHub's published schema (action-validator)", () => {
    expect(validateWorkflow(workflowPath)).toEqual({ status: 0, output: '' });
  });

  it('and the validator refuses a broken one (a misspelt runs-on)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'workflow-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const broken = join(dir, 'ci.yml');
    writeFileSync(broken, readRepoFile(workflowPath).replace('runs-on:', 'runs_on:'));
    const verdict = validateWorkflow(broken);
    expect(verdict.status).toBe(1);
    expect(verdict.output).toContain("Additional property 'runs_on' is not allowed");
  });

  it("runs .ci/run's steps on Node 24 (the tests on 26 too): npm ci, lint, npm test, then the container stage, and arm64 beside it, once the tests pass", () => {
    const runs = (job: string): string[] =>
      (workflow.jobs[job]?.steps ?? []).flatMap((step) => (step.run === undefined ? [] : [step.run.trim()]));
    const nodeVersions = Object.values(workflow.jobs).map(
      (job) => job.steps.find((step) => step.uses?.startsWith('actions/setup-node@'))?.with?.['node-version'],
    );
    expect(nodeVersions).toEqual(['${{ matrix.node }}', 24, 24]);
    expect(workflow.jobs.test?.strategy?.matrix?.node).toEqual([24, 26]);
    expect(runs('test')).toEqual(expect.arrayContaining(['npm ci --no-audit --no-fund', 'npm run lint', 'npm test']));
    // As root (sudo), as .ci/run runs it: the flood tests enter containers' network namespaces.
    expect(runs('containers')).toEqual(
      expect.arrayContaining([
        'npm ci --no-audit --no-fund',
        'sudo -E env "PATH=$PATH" PODMAN_ENGINE_DIR=/run/podman npm run test:containers',
      ]),
    );
    expect(runs('arm64')).toEqual(expect.arrayContaining(['npm ci --no-audit --no-fund', 'npm run test:arm64']));
    expect(workflow.jobs.containers?.needs).toBe('test');
    expect(workflow.jobs.arm64?.needs).toBe('test');
    for (const step of ['npm ci', 'npm run lint', 'npm test', 'npm run test:containers'])
      expect(readRepoFile('.ci/run')).toContain(`\n${step}`);
    // On 26, the unit and e2e projects, less the files whose subject no Node version changes.
    expect(readRepoFile('.ci/run')).toMatch(/install-node\.sh" 26[^]*\n {2}npx vitest run --project unit --project e2e /);
  });
});

// action-validator checks actions and workflows only (no Dependabot schema in it): the file's
// shape is checked here, and that each directory holds what its ecosystem reads.
describe('.github/dependabot.yml', () => {
  interface Update {
    'package-ecosystem': string;
    directory?: string;
    directories?: string[];
    schedule: { interval: string };
    [key: string]: unknown;
  }
  const config = parse(readRepoFile('.github/dependabot.yml')) as { version: number; updates: Update[] };
  const known = ['package-ecosystem', 'directory', 'directories', 'schedule', 'cooldown', 'groups', 'ignore', 'open-pull-requests-limit'];
  const filesIn = (directory: string): string[] => readdirSync(join(repoRoot, directory));

  /**
   * The names Dependabot's docker-compose ecosystem reads in a directory: its file fetcher keeps the files whose
   * name matches /(docker-)?compose(-[\w]+)?(?>\.[\w-]+)?\.ya?ml/i (dependabot-core, DockerCompose::FileFetcher's
   * FILENAME_REGEX; its earlier form lacked the "-suffix" group). JavaScript has no atomic group, and none is
   * needed here: `[\w-]` cannot take the dot the group would have to give back. Anything else, `simple.yml` and
   * `database.yml` among them, it never opens.
   */
  const composeFileName = /(docker-)?compose(-\w+)?(\.[\w-]+)?\.ya?ml/i;
  /** Whether a compose-format file pulls an image from elsewhere (ours, sample-*, are built). */
  const pullsAnImage = (path: string): boolean =>
    [...readRepoFile(path).matchAll(/^\s*image:\s*(\S+)/gm)].some(([, image = '']) => !/^(sample-|!reset)/.test(image));

  /** What each ecosystem reads in its directory. */
  const holds: Record<string, (directory: string) => boolean> = {
    npm: (directory) => repoFileExists(join(directory, 'package-lock.json')),
    docker: (directory) => repoFileExists(join(directory, 'Dockerfile')),
    'docker-compose': (directory) =>
      filesIn(directory).some((file) => composeFileName.test(file) && /^services:/m.test(readRepoFile(join(directory, file)))),
    'github-actions': (directory) => repoFileExists(join(directory, '.github/workflows')),
  };

  it('is version 2 and updates npm, the Dockerfile, the compose and swarm files and the actions weekly', () => {
    expect(config.version).toBe(2);
    expect(config.updates.map((u) => u['package-ecosystem'])).toEqual(['npm', 'docker', 'docker-compose', 'github-actions']);
    expect(config.updates.find((u) => u['package-ecosystem'] === 'docker-compose')?.directories).toEqual([
      '/deploy/compose',
      '/deploy/swarm',
    ]);
    for (const update of config.updates) {
      expect(Object.keys(update).filter((key) => !known.includes(key))).toEqual([]);
      expect(update.schedule.interval).toBe('weekly');
      // Exactly one of directory and directories.
      expect([update.directory, update.directories].filter((d) => d !== undefined)).toHaveLength(1);
    }
  });

  it('names directories that hold what each ecosystem reads', () => {
    const missing = config.updates.flatMap((update) =>
      (update.directories ?? [update.directory ?? ''])
        .filter((directory) => !holds[update['package-ecosystem']]?.(`.${directory}`))
        .map((d) => `${update['package-ecosystem']}: ${d}`),
    );
    expect(missing).toEqual([]);
  });

  it("reads every compose and swarm file that pulls an image: their names match the docker-compose ecosystem's rule", () => {
    const directories = config.updates.find((u) => u['package-ecosystem'] === 'docker-compose')?.directories ?? [];
    const pulling = directories.flatMap((directory) =>
      filesIn(`.${directory}`)
        .filter((file) => /\.ya?ml$/.test(file) && pullsAnImage(join(`.${directory}`, file)))
        .map((file) => `${directory}/${file}`),
    );
    expect(pulling.length).toBeGreaterThan(0);
    expect(pulling.filter((path) => !composeFileName.test(path.split('/').pop() ?? ''))).toEqual([]);
  });

  it('and the rule refuses the names the stacks had (simple.yml, ...), so a directory of them holds nothing it reads', () => {
    for (const name of ['compose.yaml', 'docker-compose.yml', 'compose.simple.yml', 'compose-simple.yml'])
      expect(composeFileName.test(name), name).toBe(true);
    for (const name of ['simple.yml', 'database.yml', 'two-tier.yml', 'dev.yml', 'podman.yml', 'kustomization.yaml'])
      expect(composeFileName.test(name), name).toBe(false);
    expect(holds['docker-compose']?.('./deploy/kubernetes/base/postgres')).toBe(false);
  });

  it('waits a week after a release before proposing it, in every ecosystem (cooldown)', () => {
    const days = config.updates.map((update) => (update.cooldown as { 'default-days'?: number } | undefined)?.['default-days']);
    expect(days.filter((d) => d === undefined || d < 7)).toEqual([]);
  });
});

describe("the workflow's actions", () => {
  it('are pinned to a full commit SHA, with the version it is in a comment Dependabot keeps up to date', () => {
    const uses = [...readRepoFile('.github/workflows/ci.yml').matchAll(/^\s*(?:-\s+)?uses:\s*(.+)$/gm)].map((m) => m[1] ?? '');
    expect(uses.length).toBeGreaterThan(0);
    expect(uses.filter((use) => !/^[\w.-]+\/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/.test(use))).toEqual([]);
  });
});
