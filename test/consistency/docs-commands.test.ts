import { serviceNames } from '@sample-services/manifest';
import { describe, expect, it } from 'vitest';
import { containerStageCommands, pageCommands, type CliCommand } from './support/cli-commands.js';
import { docsPages, serviceReadmeOf } from './support/repo-files.js';

const walkthrough = 'docs/getting-started.md';

/**
 * Flags the stage cannot give: `exec -it` needs a person at a terminal (without one the client
 * refuses `-t` with `-i`), so the stage runs the same `exec` without them.
 */
const needsATerminal: Record<string, string[]> = { 'docker exec': ['--interactive', '--tty'] };

const key = (c: CliCommand): string => `${c.tool} ${c.subcommand}`;
const describeCommand = (c: CliCommand): string => `${key(c)} ${[...c.flags].sort().join(' ')}`.trim();

describe("the documents' docker commands are the container stage's", () => {
  const stage = containerStageCommands();

  it.each(['README.md', ...docsPages(), ...serviceNames.map(serviceReadmeOf)])(
    'the stage runs every docker command of %s, with the same subcommand and at least its flags',
    (page) => {
      const notRun = pageCommands(page).filter((shown) => {
        const flags = [...shown.flags].filter((flag) => !(needsATerminal[key(shown)] ?? []).includes(flag));
        return !stage.some((ran) => key(ran) === key(shown) && flags.every((flag) => ran.flags.has(flag)));
      });
      expect(notRun.map((c) => `${describeCommand(c)}  (${c.source})`)).toEqual([]);
    },
  );
});

describe(`${walkthrough}: the spec's walkthrough`, () => {
  it("shows every <cli> and compose operation of the spec's section 4.5", () => {
    const spec = [
      'docker build --tag',
      'docker run --cap-drop --cpus --detach --env --env-file --memory --name --network --publish --read-only --user --volume',
      'docker create --name',
      'docker start',
      'docker stop',
      'docker rm',
      'docker ps',
      'docker ps --all',
      'docker logs',
      'docker logs --follow',
      'docker exec --interactive --tty',
      'docker cp',
      'docker inspect',
      'docker volume create',
      'docker volume inspect',
      'docker network create',
      'docker network inspect',
      'docker network ls',
      'compose build',
      'compose up --detach',
      'compose up --detach --scale',
      'compose ps',
      'compose logs',
      'compose exec',
      'compose down',
      'compose down --volumes',
    ];
    const shown = pageCommands(walkthrough);
    const missing = spec.filter((operation) => {
      const [tool = '', ...words] = operation.split(' ');
      const subcommand = words.filter((w) => !w.startsWith('-')).join(' ');
      const flags = words.filter((w) => w.startsWith('-'));
      return !shown.some((c) => c.tool === tool && c.subcommand === subcommand && flags.every((flag) => c.flags.has(flag)));
    });
    expect(missing).toEqual([]);
  });
});
