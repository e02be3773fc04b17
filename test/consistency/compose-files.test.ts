import { imageOf, services, stackNames, stacks, type StackMember, type StackName } from '@svc/manifest';
import { describe, expect, it } from 'vitest';
import { composeServices, dependenciesOf, environmentOf, publishedPorts, type ComposeService } from './support/compose.js';
import { readRepoFile, repoFileExists } from './support/repo-files.js';

const membersOf = (stack: StackName): readonly StackMember[] => stacks[stack].members;

const portOf = (stack: StackName, as: string): number => {
  const member = membersOf(stack).find((m) => m.as === as);
  if (member === undefined) throw new Error(`${as} is not a member of the ${stack} stack`);
  return services[member.service].port;
};

/** The image a member runs: ours as the compose files tag it, or the one compose runs instead. */
const imageOfMember = (member: StackMember): string => member.composeImage ?? imageOf(member.service, '${TAG:-latest}');

/** What a compose file and a swarm file of a stack both hold: the members, their images, ports and links. */
function checkMembers(stack: StackName, file: Record<string, ComposeService>): void {
  const composeOnly: readonly string[] = stacks[stack].composeOnly;
  expect(Object.keys(file).sort()).toEqual([...membersOf(stack).map((m) => m.as), ...composeOnly].sort());
  // A host port moves with <NAME>_PORT (the container tests set them all) and defaults to the container's.
  for (const [as, service] of Object.entries(file)) {
    for (const [host, container] of publishedPorts(service)) {
      expect(host, `${as}: host port`).toBe(`\${${as.toUpperCase()}_PORT:-${container}}`);
    }
  }
  for (const member of membersOf(stack)) {
    const service = file[member.as] ?? {};
    expect(service.image, `${member.as}: image`).toBe(imageOfMember(member));
    const containerPorts = publishedPorts(service).map(([, container]) => container);
    expect(containerPorts, `${member.as}: container ports`).toEqual(containerPorts.map(() => services[member.service].port));
    // nginx reads no environment: its link is nginx.conf's upstream (checked below).
    if (member.composeImage !== undefined) continue;
    const links = Object.entries(member.links ?? {}).map(([variable, as]) => [variable, `http://${as}:${portOf(stack, as)}`]);
    expect(environmentOf(service), `${member.as}: links`).toMatchObject(Object.fromEntries(links));
  }
}

describe.each(stackNames)('deploy/compose/%s.yml agrees with the manifest', (stack) => {
  const file = composeServices(`deploy/compose/${stack}.yml`);

  it("has exactly the stack's members and what compose adds; images, published ports and links", () => {
    checkMembers(stack, file);
  });

  it('builds each of our images from the Dockerfile with SERVICE alone, and publishes every member', () => {
    for (const member of membersOf(stack)) {
      const { build } = file[member.as] ?? {};
      if (member.composeImage === undefined) expect(build, member.as).toEqual({ context: '../..', args: { SERVICE: member.service } });
      else expect(build, member.as).toBeUndefined();
      expect(publishedPorts(file[member.as] ?? {}), `${member.as}: ports`).toHaveLength(1);
    }
  });

  it('starts each member after the one before it, never after a later one', () => {
    const members = membersOf(stack);
    members.forEach((member, i) => {
      const dependencies = dependenciesOf(file[member.as] ?? {});
      const allowed = [...members.slice(0, i).map((m) => m.as), ...stacks[stack].composeOnly];
      expect(
        dependencies.filter((d) => !allowed.includes(d)),
        `${member.as}: depends on a later member`,
      ).toEqual([]);
      if (i > 0) expect(dependencies, `${member.as}: depends on`).toContain(members[i - 1]?.as);
    });
  });
});

const swarmStacks = stackNames.filter((stack) => repoFileExists(`deploy/swarm/${stack}.yml`));

describe.each(swarmStacks)('deploy/swarm/%s.yml agrees with the manifest', (stack) => {
  it("has exactly the stack's members and what compose adds; images, published ports and links", () => {
    checkMembers(stack, composeServices(`deploy/swarm/${stack}.yml`));
  });
});

describe('deploy/nginx/nginx.conf', () => {
  const conf = readRepoFile('deploy/nginx/nginx.conf');
  // Where nginx runs as a member: its upstream is that member's link, and it listens on the member's port.
  const nginxMembers = stackNames.flatMap((stack) =>
    membersOf(stack)
      .filter((m) => m.composeImage?.startsWith('nginx:'))
      .map((member) => ({ stack, member })),
  );

  it.each(nginxMembers)('serves as $member.as of the $stack stack: upstream and listening port', ({ stack, member }) => {
    const upstreams = [...conf.matchAll(/^\s*set \$upstream\s+([^;\s]+);/gm)].map((m) => m[1]);
    expect(upstreams).toEqual(Object.values(member.links ?? {}).map((as) => `${as}:${portOf(stack, as)}`));
    // Resolved as nginx runs, by Docker's DNS, never once at start-up in an upstream block.
    expect(conf).toMatch(/^\s*resolver 127\.0\.0\.11 valid=\d+s/m);
    expect(conf).toMatch(/^\s*proxy_pass http:\/\/\$upstream;/m);
    expect(conf).not.toMatch(/^\s*upstream\s/m);
    expect([...conf.matchAll(/^\s*listen\s+([^;]+);/gm)].map((m) => m[1])).toEqual([String(services[member.service].port)]);
  });
});
