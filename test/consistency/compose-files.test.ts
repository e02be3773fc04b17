import { imageOf, services, stackNames, stacks, type StackMember, type StackName } from '@sample-services/manifest';
import { DEVELOPMENT_PASSWORD } from '@sample-services/users/open-store';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  composeServices,
  dependenciesOf,
  environmentOf,
  extendsOf,
  passedThroughOf,
  publishedPorts,
  type ComposeService,
} from './support/compose.js';
import { readRepoFile, repoFileExists } from './support/repo-files.js';

const membersOf = (stack: StackName): readonly StackMember[] => stacks[stack].members;

const portOf = (stack: StackName, as: string): number => {
  const member = membersOf(stack).find((m) => m.as === as);
  if (member === undefined) throw new Error(`${as} is not a member of the ${stack} stack`);
  return services[member.service].port;
};

/** The image a member runs: ours as the compose files tag it, or the one compose runs instead. */
const imageOfMember = (member: StackMember): string => member.composeImage ?? imageOf(member.service, '${TAG:-latest}');

/**
 * What a compose file and a swarm file of a stack both hold: the members, their images, ports and links;
 * the compose file also its one-shot commands (`commands`), which Swarm does without.
 */
function checkMembers(stack: StackName, file: Record<string, ComposeService>, commands: readonly string[]): void {
  const composeOnly: readonly string[] = stacks[stack].composeOnly;
  expect(Object.keys(file).sort()).toEqual([...membersOf(stack).map((m) => m.as), ...composeOnly, ...commands].sort());
  // A host port moves with <NAME>_PORT (the container tests set them all) and defaults to the container's;
  // what compose adds (PostgreSQL) to the container's on loopback only.
  for (const [as, service] of Object.entries(file)) {
    const address = composeOnly.includes(as) ? '127.0.0.1:' : '';
    for (const [host, container] of publishedPorts(service)) {
      expect(host, `${as}: host port`).toBe(`\${${as.toUpperCase()}_PORT:-${address}${container}}`);
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

describe.each(stackNames)('deploy/compose/compose.%s.yml agrees with the manifest', (stack) => {
  const file = composeServices(`deploy/compose/compose.${stack}.yml`);

  it("has exactly the stack's members and what compose adds; images, published ports and links", () => {
    checkMembers(stack, file, [...stacks[stack].commands, ...stacks[stack].profiles]);
  });

  it('builds each of our images from the Dockerfile with SERVICE and its port (for EXPOSE), and publishes every member', () => {
    for (const member of membersOf(stack)) {
      const { build } = file[member.as] ?? {};
      const args = { SERVICE: member.service, PORT: services[member.service].port };
      if (member.composeImage === undefined) expect(build, member.as).toEqual({ context: '../..', args });
      else expect(build, member.as).toBeUndefined();
      expect(publishedPorts(file[member.as] ?? {}), `${member.as}: ports`).toHaveLength(1);
    }
  });

  it('starts each member after the one before it, never after a later one', () => {
    const members = membersOf(stack);
    members.forEach((member, i) => {
      const dependencies = dependenciesOf(file[member.as] ?? {});
      const allowed = [...members.slice(0, i).map((m) => m.as), ...stacks[stack].composeOnly, ...stacks[stack].commands];
      expect(
        dependencies.filter((d) => !allowed.includes(d)),
        `${member.as}: depends on a later member`,
      ).toEqual([]);
      if (i > 0) expect(dependencies, `${member.as}: depends on`).toContain(members[i - 1]?.as);
    });
  });
});

describe.each(stackNames)('deploy/compose/compose.%s.yml takes what the stacks share from shared.yml', (stack) => {
  // The tests here read each service as compose renders it, `extends` resolved (support/compose.ts).
  it('each of our services extends its node-service, each command its node-command, nginx and PostgreSQL its every-service', () => {
    const path = `deploy/compose/compose.${stack}.yml`;
    const ours = new Set(
      membersOf(stack)
        .filter((m) => m.composeImage === undefined)
        .map((m) => m.as),
    );
    const commands: readonly string[] = [...stacks[stack].commands, ...stacks[stack].profiles];
    const baseOf = (as: string): string => (ours.has(as) ? 'node-service' : commands.includes(as) ? 'node-command' : 'every-service');
    const wanted = Object.keys(extendsOf(path)).map((as) => [as, { file: 'shared.yml', service: baseOf(as) }]);
    expect(extendsOf(path)).toEqual(Object.fromEntries(wanted));
  });
});

// The stacks on PostgreSQL: the others have no one-shot command.
const withCommands = stackNames.filter((stack) => stacks[stack].commands.length + stacks[stack].profiles.length > 0);

describe.each(withCommands)("deploy/compose/compose.%s.yml runs its one-shot commands from its first member's image", (stack) => {
  const file = composeServices(`deploy/compose/compose.${stack}.yml`);
  const first = file[membersOf(stack)[0]?.as ?? ''] ?? {};
  const { commands, profiles } = stacks[stack];

  it.each([...commands, ...profiles])(
    '%s: node dist/%s.js, where the users are; after migrate, and only on request when a profile',
    (command) => {
      const service = file[command] as ComposeService & { command?: string[]; profiles?: string[] };
      expect(service.image).toBe(first.image);
      expect(service.build).toEqual(first.build);
      expect(service.command).toEqual(['node', `dist/${command}.js`]);
      const { DATABASE_URL: url, DATABASE_PASSWORD_FILE: password } = environmentOf(first);
      expect(environmentOf(service)).toEqual({ DATABASE_URL: url, DATABASE_PASSWORD_FILE: password });
      const onRequest = (profiles as readonly string[]).includes(command);
      expect(service.profiles).toEqual(onRequest ? [command] : undefined);
      expect(dependenciesOf(service)).toEqual(onRequest ? ['migrate'] : ['db']);
    },
  );
});

describe('deploy/compose/dev.yml', () => {
  it("has each stack's members of ours (not nginx, not PostgreSQL), each in the profiles of exactly the stacks that have it", () => {
    const wanted: Record<string, StackName[]> = {};
    for (const stack of stackNames)
      for (const member of membersOf(stack)) if (member.composeImage === undefined) (wanted[member.as] ??= []).push(stack);
    // `!reset` is compose's own tag (drop the merged value); read here as what it leaves, nothing.
    const dev = parse(readRepoFile('deploy/compose/dev.yml'), { merge: true, customTags: [{ tag: '!reset', resolve: () => null }] }) as {
      services: Record<string, { profiles?: string[] }>;
    };
    const profiles = Object.entries(dev.services).map(([as, service]) => [as, [...(service.profiles ?? [])].sort()]);
    expect(Object.fromEntries(profiles)).toEqual(Object.fromEntries(Object.entries(wanted).map(([as, stacks]) => [as, stacks.sort()])));
  });
});

const swarmStacks = stackNames.filter((stack) => repoFileExists(`deploy/swarm/compose.${stack}.yml`));

/**
 * A compose health check as a swarm file must write it: `docker stack deploy` reads format 3.8 with
 * the CLI's own schema, which has no start_interval (only 3.12 has).
 */
const withoutStartInterval = (healthcheck: unknown): unknown =>
  Object.fromEntries(Object.entries(healthcheck as Record<string, unknown>).filter(([key]) => key !== 'start_interval'));
/** The image's HEALTHCHECK line, whose start interval Docker merges into a check that has none. */
const dockerfileHealthcheck = /^HEALTHCHECK .*$/m.exec(readRepoFile('Dockerfile'))?.[0] ?? '';

/** What these tests read of a swarm service beyond what compose and swarm files share. */
type SwarmService = ComposeService & {
  healthcheck?: unknown;
  secrets?: string[];
  volumes?: unknown;
  deploy?: {
    replicas?: string | number;
    endpoint_mode?: string;
    placement?: { constraints?: string[] };
    resources?: { limits?: { cpus?: string; memory?: string } };
    update_config?: { order?: string; failure_action?: string };
    restart_policy?: { condition?: string };
  };
};

describe.each(swarmStacks)('deploy/swarm/compose.%s.yml agrees with the manifest', (stack) => {
  const swarm = composeServices(`deploy/swarm/compose.${stack}.yml`) as Record<string, SwarmService>;
  const compose = composeServices(`deploy/compose/compose.${stack}.yml`) as Record<string, SwarmService>;
  const ours = membersOf(stack).filter((m) => m.composeImage === undefined);

  it("has exactly the stack's members and what compose adds but its one-shot commands; images, published ports and links", () => {
    checkMembers(stack, swarm, []);
  });

  it('publishes in host mode only (no routing mesh: it needs IPVS) and uses no depends_on (swarm ignores it)', () => {
    for (const [as, service] of Object.entries(swarm)) {
      for (const port of service.ports ?? []) expect(port, `${as}: port`).toMatchObject({ protocol: 'tcp', mode: 'host' });
      expect(service.depends_on, `${as}: depends_on`).toBeUndefined();
    }
  });

  it.each(ours.map((m) => m.as))(
    '%s: replicated by DNS round robin, limited, rolled start-first with rollback, checked as in compose',
    (as) => {
      const service = swarm[as] ?? {};
      expect(String(service.deploy?.replicas)).toMatch(new RegExp(`^\\$\\{${as.toUpperCase()}_REPLICAS:-[2-9]\\}$`));
      expect(service.deploy).toMatchObject({
        endpoint_mode: 'dnsrr',
        resources: { limits: { cpus: '1', memory: '512M' } },
        restart_policy: { condition: 'any' },
        update_config: { order: 'start-first', failure_action: 'rollback' },
      });
      // The image's HEALTHCHECK gives the start interval: Swarm keeps it for a check without one.
      expect(service.healthcheck, 'healthcheck').toEqual(withoutStartInterval(compose[as]?.healthcheck));
      expect(dockerfileHealthcheck).toContain('--start-interval=1s');
      expect(environmentOf(service), 'environment').toEqual(environmentOf(compose[as] ?? {}));
      expect(service.secrets ?? [], 'secrets').toEqual(compose[as]?.secrets ?? []);
    },
  );

  const composeOnly: readonly string[] = stacks[stack].composeOnly;
  // Only the stacks with a database have one to check.
  if (composeOnly.includes('db'))
    it('db: one PostgreSQL on the labelled node, its password a secret file, never a variable', () => {
      const db = swarm.db ?? {};
      expect(db.image).toBe(compose.db?.image);
      expect(db.deploy).toMatchObject({ replicas: 1, endpoint_mode: 'dnsrr', placement: { constraints: ['node.labels.db == true'] } });
      expect(db.volumes).toEqual(compose.db?.volumes);
      expect(db.healthcheck).toEqual(withoutStartInterval(compose.db?.healthcheck));
      expect(environmentOf(db)).toEqual(environmentOf(compose.db ?? {}));
      expect(db.secrets).toEqual(['db-password']);
    });
});

/** A compose value with `${NAME:-default}` as its default. */
const withDefaultsOf = (value: string): string => value.replace(/\$\{\w+:-([^}]*)\}/g, '$1');

const deployFiles = [
  ...stackNames.map((stack) => `deploy/compose/compose.${stack}.yml`),
  ...swarmStacks.map((stack) => `deploy/swarm/compose.${stack}.yml`),
];

describe.each(deployFiles)('%s keeps secrets out of environments', (path) => {
  it('holds no password in any environment, only secret files', () => {
    for (const [as, service] of Object.entries(composeServices(path) as Record<string, SwarmService>)) {
      for (const [name, value] of Object.entries(environmentOf(service))) {
        if (/PASSWORD/.test(name)) expect(name, as).toMatch(/_FILE$/);
        if (name.endsWith('_FILE')) expect(value, `${as}: ${name}`).toBe('/run/secrets/db-password');
        if (name === 'DATABASE_URL') expect(new URL(withDefaultsOf(value)).password, `${as}: DATABASE_URL`).toBe('');
      }
      expect(service.secrets ?? [], `${as}: secrets`).toEqual(
        Object.keys(environmentOf(service)).some((n) => n.endsWith('_FILE')) ? ['db-password'] : [],
      );
    }
  });
});

/** What the log tests read of a service. */
type LoggedService = ComposeService & { logging?: { driver?: string; options?: Record<string, string | number> } };

describe.each(deployFiles)('%s is safe by default', (path) => {
  const file = composeServices(path) as Record<string, LoggedService>;

  it.each(Object.keys(file))('%s: Docker rotates its output (json-file with max-size and max-file, or local)', (as) => {
    const logging = file[as]?.logging;
    expect(logging?.driver, 'logging driver').toMatch(/^(json-file|local)$/);
    // local rotates by default; json-file keeps everything unless given a size.
    if (logging?.driver === 'json-file') {
      expect(String(logging.options?.['max-size']), 'max-size').toMatch(/^\d+[kmg]$/);
      expect(Number(logging.options?.['max-file']), 'max-file').toBeGreaterThanOrEqual(1);
    }
  });

  it('publishes PostgreSQL on loopback only, if at all', () => {
    for (const [as, service] of Object.entries(file)) {
      if (service.image?.startsWith('postgres:') !== true) continue;
      for (const [host] of publishedPorts(service)) expect(withDefaultsOf(host), `${as}: host side`).toMatch(/^127\.0\.0\.1:\d+$/);
    }
  });
});

describe('deploy/compose/dev-db-password', () => {
  it('is the password the database services warn of (packages/users): change both or neither', () => {
    expect(readRepoFile('deploy/compose/dev-db-password').replace(/\r?\n$/, '')).toBe(DEVELOPMENT_PASSWORD);
  });
});

/** The OTEL_* variables our services take from where a file is deployed (docs/observability-traces.md). */
const tracingVariables = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_SDK_DISABLED',
];

describe.each(deployFiles)('%s passes tracing through', (path) => {
  it('gives each of our services the OTEL_* variables of where it is deployed, unset by default; nothing else is passed through', () => {
    for (const [as, service] of Object.entries(composeServices(path))) {
      const ours = service.image?.startsWith('sample-') === true;
      expect(passedThroughOf(service), as).toEqual(ours ? tracingVariables : []);
    }
  });
});

/** What the hardening tests read of a compose service. */
type HardenedService = SwarmService & {
  read_only?: boolean;
  cap_drop?: string[];
  cap_add?: string[];
  security_opt?: string[];
  init?: boolean;
  stop_grace_period?: string;
  mem_limit?: string;
  memswap_limit?: string;
  cpus?: number;
  tmpfs?: string[];
  networks?: string[];
};

describe.each(swarmStacks)('deploy/swarm/compose.%s.yml runs hardened as compose does, but for what swarm ignores', (stack) => {
  const swarm = composeServices(`deploy/swarm/compose.${stack}.yml`) as Record<string, HardenedService>;
  const compose = composeServices(`deploy/compose/compose.${stack}.yml`) as Record<string, HardenedService>;

  it.each(Object.keys(swarm))('%s', (as) => {
    const pick = ({ read_only, cap_drop, cap_add, init, stop_grace_period }: HardenedService) => ({
      read_only,
      cap_drop,
      cap_add,
      init,
      stop_grace_period,
    });
    // Swarm ignores the tmpfs key: there, compose's tmpfs are mounts of type tmpfs.
    const tmpfsMounts = (service: HardenedService): string[] | undefined => {
      const mounts = ((service.volumes ?? []) as { type?: string; target?: string }[]).filter((v) => v.type === 'tmpfs');
      return mounts.length > 0 ? mounts.map((m) => m.target ?? '') : undefined;
    };
    expect(swarm[as]?.tmpfs, `${as}: the tmpfs key swarm ignores`).toBeUndefined();
    expect(tmpfsMounts(swarm[as] ?? {}), `${as}: tmpfs mounts`).toEqual(compose[as]?.tmpfs);
    // security_opt is ignored by `docker stack deploy`; the limits are deploy.resources (checked above).
    expect(pick(swarm[as] ?? {})).toEqual(pick(compose[as] ?? {}));
  });
});

describe.each(stackNames)('deploy/compose/compose.%s.yml runs hardened by default', (stack) => {
  const file = composeServices(`deploy/compose/compose.${stack}.yml`) as Record<string, HardenedService>;
  const ours = membersOf(stack).filter((m) => m.composeImage === undefined);

  it.each(ours.map((m) => m.as))('%s: read-only root, no capabilities or new privileges, init, a grace past its own, the limits', (as) => {
    expect(file[as]).toMatchObject({
      read_only: true,
      cap_drop: ['ALL'],
      security_opt: ['no-new-privileges:true'],
      init: true,
      mem_limit: '512m',
      memswap_limit: '512m',
      cpus: 1,
    });
    expect(file[as]?.cap_add, as).toBeUndefined();
    // The services give requests in flight 10 s (packages/kit, run.ts) before they exit.
    expect(Number(/^(\d+)s$/.exec(file[as]?.stop_grace_period ?? '')?.[1]), `${as}: stop_grace_period`).toBeGreaterThan(10);
  });

  const nginx = membersOf(stack).filter((m) => m.composeImage?.startsWith('nginx:'));
  it.each(nginx.map((m) => m.as))(
    '%s (nginx): read-only with its temporary files in memory, only the capabilities a root master needs',
    (as) => {
      expect(file[as]).toMatchObject({ read_only: true, cap_drop: ['ALL'], security_opt: ['no-new-privileges:true'] });
      expect(file[as]?.tmpfs).toEqual(expect.arrayContaining(['/var/cache/nginx', '/run']));
      expect([...(file[as]?.cap_add ?? [])].sort()).toEqual(['CHOWN', 'NET_BIND_SERVICE', 'SETGID', 'SETUID']);
    },
  );

  const composeOnly: readonly string[] = stacks[stack].composeOnly;
  if (composeOnly.includes('db'))
    it('db: on a network of its own, shared only with the services that use it', () => {
      const dbNetworks = file.db?.networks ?? [];
      expect(dbNetworks).toEqual(['db-network']);
      for (const [as, service] of Object.entries(file)) {
        if (as === 'db') continue;
        const usesDb = environmentOf(service).DATABASE_URL !== undefined;
        expect((service.networks ?? []).includes('db-network'), `${as} on db-network`).toBe(usesDb);
      }
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
