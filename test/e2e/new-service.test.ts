/**
 * docs/architecture.md's "Adding a service", done as a new user does it, in a throwaway copy of the
 * repository: a service `status` on port 4000, in the shape of services/simple. Each test below is one of
 * the page's numbered steps; after them the copy builds, its consistency tests and the new service's own
 * tests pass, and git finds changed only the folder and the files the page lists.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { repoRoot } from '@sample-services/testing/repo-root';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** What the page says a new service touches beside its folder ("Adding a service", its opening). */
const listedBesideTheFolder = [
  'README.md',
  'package-lock.json',
  'packages/manifest/package.json',
  'packages/manifest/src/index.ts',
  'packages/manifest/tsconfig.json',
];

/** Our environment without Vitest's and npm's own variables, which would steer the runs in the copy. */
const childEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(VITEST|npm_)/.test(name)));

let copy = '';
const inCopy = (path: string): string => join(copy, path);
const read = (path: string): string => readFileSync(inCopy(path), 'utf8');
const write = (path: string, text: string): void => {
  mkdirSync(dirname(inCopy(path)), { recursive: true });
  writeFileSync(inCopy(path), text);
};
const editJson = (path: string, edit: (json: Record<string, unknown>) => void): void => {
  const json = JSON.parse(read(path)) as Record<string, unknown>;
  edit(json);
  write(path, `${JSON.stringify(json, null, 2)}\n`);
};

/** Runs a command in the copy; a failure fails the test with the command's own output. */
function run(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { cwd: copy, env: childEnv, encoding: 'utf8', stdio: 'pipe', maxBuffer: 64 * 2 ** 20 });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${`${stdout}\n${stderr}`.trim().slice(-6_000)}`);
  }
}
const git = (...args: string[]): string => run('git', ['-c', 'user.name=new-service', '-c', 'user.email=new-service@localhost', ...args]);

const lines = (text: string): string[] => text.split('\0').filter(Boolean);

describe("docs/architecture.md's recipe adds a service `status` on port 4000 in a copy of the repository", () => {
  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'new-service-'));
    const fromRoot = (args: string[]): string[] =>
      lines(execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', maxBuffer: 16 * 2 ** 20 }));
    // The tracked files as they are in the working tree, a user's repository before the steps.
    for (const path of fromRoot(['ls-files', '-z', '--cached'])) cpSync(join(repoRoot, path), inCopy(path), { preserveTimestamps: true });
    // The installed packages and this repository's build (npm run test:e2e builds first), copied with their times,
    // so that step 3's npm install adds only the new workspace, fetching nothing, and tsc -b compiles only what the steps
    // change (the whole build is about two minutes on 2 cores). Copied, not linked: npm would write through a link
    // into this repository's node_modules. Symbolic links are kept as they are, relative: the workspaces' links
    // then reach the copy's folders.
    const installedOrBuilt = fromRoot(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory']).filter((path) =>
      /(^|\/)(node_modules|dist)\/$|\.tsbuildinfo$/.test(path),
    );
    for (const path of installedOrBuilt)
      cpSync(join(repoRoot, path), inCopy(path), { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
    // A repository of its own: git status names what the steps changed, and the line-endings test clones it.
    git('init', '--quiet');
    git('add', '--all');
    git('commit', '--quiet', '--no-verify', '--no-gpg-sign', '--message', 'before the new service');
  }, 300_000);
  afterAll(() => {
    if (copy !== '') rmSync(copy, { recursive: true, force: true });
  });

  it('1. the folder: services/status, copied from services/simple and made its own', () => {
    cpSync(inCopy('services/simple/tsconfig.json'), inCopy('services/status/tsconfig.json'));
    const simple = JSON.parse(read('services/simple/package.json')) as {
      exports: object;
      scripts: object;
      dependencies: object;
      devDependencies: object;
    };
    write(
      'services/status/package.json',
      `${JSON.stringify(
        {
          name: '@sample-services/status',
          version: '0.0.0',
          private: true,
          description: 'Says it is up',
          type: 'module',
          exports: simple.exports,
          scripts: simple.scripts,
          dependencies: simple.dependencies,
          devDependencies: simple.devDependencies,
        },
        null,
        2,
      )}\n`,
    );
    write(
      'services/status/src/service.ts',
      `import type { ServiceIdentity } from '@sample-services/kit/config';

export const service = {
  name: 'status',
  summary: 'says it is up',
  port: 4000,
  startedMessage: 'Server running on port',
  modeVariables: ['NODE_ENV'],
} as const satisfies ServiceIdentity;
`,
    );
    write(
      'services/status/src/config.ts',
      `import { readServiceConfig, type Env, type ServiceConfig } from '@sample-services/kit/config';
import { service } from './service.js';

export const readConfig = (env: Env): ServiceConfig => readServiceConfig(env, service);
`,
    );
    write(
      'services/status/src/app.ts',
      `import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { apiDocs } from '@sample-services/kit/openapi';
import { cors } from '@sample-services/kit/cors';
import { countRequests, metricsRoute } from '@sample-services/kit/metrics';
import { createServer, type App } from '@sample-services/kit/server';
import { healthPlugin } from '@sample-services/kit/health';
import { loadShedding } from '@sample-services/kit/load-shedding';
import { readyPlugin } from '@sample-services/kit/ready';
import type { Logger } from '@sample-services/kit/logger';
import { Type } from 'typebox';
import { service } from './service.js';

const Up = Type.Object({ status: Type.Literal('up') });
const Healthy = Type.Object({ status: Type.Literal('healthy') });

// A plugin, as services/simple's routes: registered after apiDocs, so that the document has them.
const upRoute: FastifyPluginCallbackTypebox = (app, _options, done) => {
  app.get('/', { schema: { summary: 'Up', response: { 200: Up } } }, () => ({ status: 'up' as const }));
  done();
};

export function createStatusApp({ logger }: { logger: Logger | false }): App {
  const app = createServer({ logger, api: { title: service.name, description: service.summary } });
  void app.register(cors).register(apiDocs).register(loadShedding).register(countRequests).register(metricsRoute);
  void app.register(upRoute);
  void app.register(healthPlugin({ schema: Healthy, report: () => ({ status: 'healthy' as const }) }));
  void app.register(readyPlugin());
  return app;
}
`,
    );
    write(
      'services/status/src/main.ts',
      `import { runService } from '@sample-services/kit/run-service';
import { createStatusApp } from './app.js';
import { readConfig } from './config.js';
import { service } from './service.js';

await runService(service, { readConfig, build: ({ logger }) => ({ app: createStatusApp({ logger }) }) });
`,
    );
    write(
      'services/status/test/app.test.ts',
      `import { commonContract } from '@sample-services/testing/contract/common';
import { openApiContract } from '@sample-services/testing/contract/openapi-document';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStatusApp } from '../src/app.js';

describe('status, listening on an ephemeral port', () => {
  const app = createStatusApp({ logger: false });
  let baseUrl = '';
  beforeAll(async () => {
    baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());

  it('GET / says it is up', async () => {
    expect(await (await fetch(baseUrl)).json()).toEqual({ status: 'up' });
  });
  commonContract(() => baseUrl);
});

openApiContract('status', () => createStatusApp({ logger: false }));
`,
    );
    write(
      'services/status/README.md',
      `# \`status\`

Says it is up, on port 4000.

## Variables

| Variable          | Default       | Meaning                                                              |
| ----------------- | ------------- | -------------------------------------------------------------------- |
| \`PORT\`            | \`4000\`        | listening port                                                       |
| \`HOST\`            | \`0.0.0.0\`     | listening address                                                    |
| \`NODE_ENV\`        | \`development\` | run mode                                                             |
| \`LOG_LEVEL\`       | \`info\`        | pino level; \`debug\` also logs every request                          |
| \`LOG_FORMAT\`      | \`auto\`        | \`json\`, \`pretty\`, or \`auto\` (readable at a terminal, JSON otherwise) |
| \`LOG_DIR\`         | unset         | also append the log to \`<LOG_DIR>/status.log\`                        |
| \`MAX_CONNECTIONS\` | \`10000\`       | client connections open at once                                      |
`,
    );
  });

  it("2. the manifest: the service's entry, a dependency on it and a reference to it", () => {
    const index = read('packages/manifest/src/index.ts');
    const lastImport = index.match(/^import \{ service as \w+ \} from '@sample-services\/\w+\/service';$/gm)?.at(-1) ?? '';
    const entries = '} as const satisfies Record<string, ServiceEntry>;';
    expect(index).toContain(lastImport);
    expect(index).toContain(entries);
    write(
      'packages/manifest/src/index.ts',
      index
        .replace(lastImport, `${lastImport}\nimport { service as status } from '@sample-services/status/service';`)
        .replace(entries, `  status: { ...status, spec: 'status page' },\n${entries}`),
    );
    editJson('packages/manifest/package.json', (json) => {
      json.dependencies = { ...(json.dependencies as object), '@sample-services/status': 'file:../../services/status' };
    });
    editJson('packages/manifest/tsconfig.json', (json) => {
      json.references = [...(json.references as object[]), { path: '../../services/status' }];
    });
  });

  it('3. npm install links the workspace and records it in package-lock.json', () => {
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund']);
    expect(read('package-lock.json')).toContain('"node_modules/@sample-services/status"');
  }, 300_000);

  it("4. README.md: the service's row in the services table", () => {
    const readme = read('README.md').split('\n');
    const header = readme.findIndex((line) => line.startsWith('| Service '));
    expect(header).toBeGreaterThan(-1);
    const afterTable = readme.findIndex((line, i) => i > header && !line.startsWith('|'));
    readme.splice(afterTable, 0, '| [`status`](services/status/README.md) | status page | 4000 | says it is up |');
    write('README.md', readme.join('\n'));
  });

  it('5. check: it builds, and the consistency tests and its own tests pass', () => {
    run('npx', ['tsc', '-b']);
    // A failing test fails the run (run() throws with its output); the new service's own file must be among those run.
    expect(run('npx', ['vitest', 'run', '--project', 'unit', 'test/consistency', 'services/status'])).toContain(
      'services/status/test/app.test.ts',
    );
  }, 600_000);

  it('touches its folder and only the files the page lists beside it', () => {
    const changed = lines(git('status', '--porcelain', '-z', '--untracked-files=all')).map((entry) => entry.slice(3));
    expect(changed.filter((path) => !path.startsWith('services/status/')).sort()).toEqual(listedBesideTheFolder);
    expect(changed.filter((path) => path.startsWith('services/status/')).sort()).toEqual([
      'services/status/README.md',
      'services/status/package.json',
      'services/status/src/app.ts',
      'services/status/src/config.ts',
      'services/status/src/main.ts',
      'services/status/src/service.ts',
      'services/status/test/app.test.ts',
      'services/status/tsconfig.json',
    ]);
  });
});
