/**
 * deploy/kubernetes against the Kubernetes schemas, the manifest, the compose and swarm files and the
 * Dockerfile. Nothing runs a cluster here: every overlay is rendered by `kubectl kustomize` (kubectl
 * required under CI=true; skipped with a message elsewhere when it is missing), each object is
 * validated against the schema of its kind (kubernetes-models, generated from Kubernetes' OpenAPI
 * document; @kubernetes-models/gateway-api, from the Gateway API's CRDs), and what the objects say is
 * compared with what the other deploy files and the manifest say.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IGateway } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway';
import type { IHTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import type { IHTTPRouteMatch } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRouteMatch';
import { imageOf, services, stackNames, stacks, type ServiceName, type StackMember, type StackName } from '@sample-services/manifest';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IStatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { INetworkPolicyPeer } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyPeer';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IEnvVar } from 'kubernetes-models/v1/EnvVar';
import type { INamespace } from 'kubernetes-models/v1/Namespace';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { committablePaths, committedCopy, gitIgnores } from './support/committed-copy.js';
import { composeServices, environmentOf, type ComposeService } from './support/compose.js';
import { unknownFields } from './support/known-fields.js';
import { keyOf, KubectlMissing, kubectlKustomize, type KubeObject } from './support/kubectl.js';
import { readRepoFile } from './support/repo-files.js';

const repoPath = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const overlaysDir = 'deploy/kubernetes/overlays';
const overlayDirs = readdirSync(repoPath(overlaysDir)).sort();

/** An overlay is a stack of the manifest, or `<stack>-external`: that stack on a database outside the cluster. */
const stackOf = (overlay: string): StackName => overlay.replace(/-external$/, '') as StackName;
/** The overlays of manifest stacks (the first test fails for any other). */
const overlays = overlayDirs.filter((overlay) => (stackNames as string[]).includes(stackOf(overlay)));
const isExternal = (overlay: string): boolean => overlay.endsWith('-external');
const hasDb = (stack: StackName): boolean => (stacks[stack].composeOnly as readonly string[]).includes('db');

/** The member the Gateway's HTTPRoute sends outside traffic to: the stack's front door. */
const frontDoor: Record<StackName, string> = { simple: 'web', database: 'web', 'two-tier': 'frontend' };

/** What people and clients call on each front door (spec 4.1 to 4.3, docs/api.md's routes), which the HTTPRoute must route. */
const userPaths: Partial<Record<ServiceName, string[]>> = {
  simple: ['/', '/api/users', '/health'],
  database: ['/', '/api/users', '/health'],
  frontend: ['/', '/assets/0/main.js', '/api/users', '/health'],
};
/**
 * The label a user sets on the namespace where their Gateway API implementation runs its proxies,
 * when not in the Gateway's own (docs/operations.md#kubernetes): the front doors admit that namespace.
 */
const gatewayNamespaceLabel = 'sample-services/gateway';

/** Paths for the cluster alone: readiness, metrics and the API's documents; the HTTPRoute must route none. */
const internalPaths = ['/ready', '/metrics', '/openapi.json', '/docs', '/docs/static/swagger-initializer.js'];

/** How long the services' graceful stop may take after SIGTERM (the kit's SHUTDOWN_GRACE_MS), in seconds. */
const shutdownGraceSeconds = (() => {
  const match = /const SHUTDOWN_GRACE_MS = ([\d_]+);/.exec(readRepoFile('packages/kit/src/run-service.ts'));
  if (match === null) throw new Error('packages/kit/src/run-service.ts: no SHUTDOWN_GRACE_MS');
  return Number((match[1] ?? '').replaceAll('_', '')) / 1000;
})();

/** Validates an object against the schema of its kind; a kind without an entry here is an error. */
type Validator = (object: KubeObject) => Promise<void>;
const model =
  (load: () => Promise<new (data: never) => { validate(): void }>): Validator =>
  async (object) => {
    const Model = await load();
    new Model(object as never).validate();
  };
const validators: Record<string, Validator> = {
  'v1/Namespace': model(async () => (await import('kubernetes-models/v1/Namespace')).Namespace),
  'v1/Secret': model(async () => (await import('kubernetes-models/v1/Secret')).Secret),
  'v1/Service': model(async () => (await import('kubernetes-models/v1/Service')).Service),
  'apps/v1/Deployment': model(async () => (await import('kubernetes-models/apps/v1/Deployment')).Deployment),
  'apps/v1/StatefulSet': model(async () => (await import('kubernetes-models/apps/v1/StatefulSet')).StatefulSet),
  'policy/v1/PodDisruptionBudget': model(async () => (await import('kubernetes-models/policy/v1/PodDisruptionBudget')).PodDisruptionBudget),
  'autoscaling/v2/HorizontalPodAutoscaler': model(
    async () => (await import('kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler')).HorizontalPodAutoscaler,
  ),
  'gateway.networking.k8s.io/v1/Gateway': model(
    async () => (await import('@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway')).Gateway,
  ),
  'gateway.networking.k8s.io/v1/HTTPRoute': model(
    async () => (await import('@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute')).HTTPRoute,
  ),
  'networking.k8s.io/v1/NetworkPolicy': model(
    async () => (await import('kubernetes-models/networking.k8s.io/v1/NetworkPolicy')).NetworkPolicy,
  ),
};

// ---- what the other files say ----

const dockerfile = readRepoFile('Dockerfile');

/** Seconds of a duration as Docker and compose write them (`30s`, `1m30s`). */
function seconds(duration: string): number {
  let total = 0;
  for (const [, amount, unit] of duration.matchAll(/(\d+)(h|m|s)/g))
    total += Number(amount) * { h: 3600, m: 60, s: 1 }[unit as 'h' | 'm' | 's'];
  return total;
}

/**
 * The image's HEALTHCHECK options (Dockerfile): interval, timeout, start period and start interval
 * (the interval during the start period) in seconds, retries.
 */
const imageHealthcheck = (() => {
  const line = /^HEALTHCHECK\s+(.*?)\\?$/m.exec(dockerfile)?.[1] ?? '';
  const option = (name: string): string => new RegExp(`--${name}=(\\S+)`).exec(line)?.[1] ?? '';
  return {
    interval: seconds(option('interval')),
    timeout: seconds(option('timeout')),
    startPeriod: seconds(option('start-period')),
    startInterval: seconds(option('start-interval')),
    retries: Number(option('retries')),
  };
})();

/** The runtime image's environment (the ENV instructions from the Dockerfile's runtime stage on), e.g. LOG_DIR. */
const imageEnv = Object.fromEntries(
  [...dockerfile.slice(dockerfile.search(/^FROM \S+ AS runtime$/m)).matchAll(/^ENV\s+((?:.*\\\n)*.*)$/gm)]
    .flatMap((instruction) => [...(instruction[1] ?? '').matchAll(/(\w+)=(\S+)/g)])
    .map((m) => [m[1] ?? '', m[2] ?? '']),
);

/** The uid our images run as: the node image's `node` user (Dockerfile `USER node`). */
const NODE_UID = 1000;

/** Bytes of a Kubernetes quantity (`512Mi`, `1G`). */
function quantityBytes(quantity: string | number | undefined): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(quantity));
  if (match === null) throw new Error(`not a byte quantity: ${String(quantity)}`);
  const factor = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[match[2] ?? ''] ?? 1;
  return Number(match[1]) * factor;
}

/** Bytes of a compose memory size: its units are binary (`512M` = 512 MiB, as docker run -m 512m). */
function composeBytes(size: string): number {
  const match = /^(\d+)([bkmg])?$/i.exec(size);
  if (match === null) throw new Error(`not a compose size: ${size}`);
  return Number(match[1]) * ({ k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 }[(match[2] ?? 'b').toLowerCase()] ?? 1);
}

/** Millicores of a Kubernetes CPU quantity (`250m`, `1`, 0.5). */
const millicores = (quantity: string | number | undefined): number =>
  String(quantity).endsWith('m') ? Number(String(quantity).slice(0, -1)) : Number(quantity) * 1000;

/** The spec's example limits as the swarm file gives them to web: 1 CPU, 512 MB. */
const swarmLimits = (() => {
  const web = composeServices('deploy/swarm/compose.simple.yml').web as ComposeService & {
    deploy: { resources: { limits: { cpus: string; memory: string } } };
  };
  const { cpus, memory } = web.deploy.resources.limits;
  return { millicores: Number(cpus) * 1000, bytes: composeBytes(memory) };
})();

/** deploy/compose/example.env as variable -> value. */
const exampleEnv = Object.fromEntries(
  readRepoFile('deploy/compose/example.env')
    .split('\n')
    .filter((line) => /^\w+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
);

/**
 * The files a compose file's secrets read by default (`file: ${DB_PASSWORD_FILE:-./dev-db-password}`),
 * by secret name, as repository paths.
 */
function composeSecretFiles(path: string): Record<string, string> {
  const { secrets = {} } = parse(readRepoFile(path), { merge: true }) as { secrets?: Record<string, { file?: string }> };
  return Object.fromEntries(
    Object.entries(secrets).flatMap(([name, { file }]) =>
      file === undefined ? [] : [[name, posix.join(posix.dirname(path), withDefaults(file))]],
    ),
  );
}

/** A secret file's value as the services read it: without one trailing newline. */
const secretFileValue = (path: string): string => readRepoFile(path).replace(/\r?\n$/, '');

/** A compose value with `${NAME:-default}` as Kubernetes writes a variable: `$(NAME)`. */
const asKubernetesVariables = (value: string): string => value.replace(/\$\{(\w+):-[^}]*\}/g, '$($1)');
/** A compose value with `${NAME:-default}` as its default. */
const withDefaults = (value: string): string => value.replace(/\$\{\w+:-([^}]*)\}/g, '$1');

interface ComposeDb extends ComposeService {
  volumes: string[];
  healthcheck: { test: string[]; interval: string; timeout: string; retries: number; start_period: string; start_interval: string };
}

// ---- reading the rendered objects ----

interface Rendered {
  objects: KubeObject[];
  all<T>(kind: string): (T & KubeObject)[];
  one<T>(kind: string, name: string): T & KubeObject;
}

/** An overlay's objects, or why it has none: reading them then throws that error, failing the test that reads them. */
function rendered(overlay: string, result: KubeObject[] | Error): Rendered {
  const objects = (): KubeObject[] => {
    if (result instanceof Error) throw result;
    return result;
  };
  const all = <T>(kind: string) => objects().filter((o) => o.kind === kind) as (T & KubeObject)[];
  return {
    get objects() {
      return objects();
    },
    all,
    one: <T>(kind: string, name: string) => {
      const found = all<T>(kind).filter((o) => o.metadata.name === name);
      if (found.length !== 1) throw new Error(`${overlay}: expected one ${kind} named ${name}, found ${found.length}`);
      return found[0] as T & KubeObject;
    },
  };
}

const podSpecOf = (workload: IDeployment | IStatefulSet): IPodSpec => workload.spec?.template.spec ?? { containers: [] };

/** The one container of a workload (every pod here has exactly one). */
function containerOf(workload: IDeployment | IStatefulSet): IContainer {
  const { containers } = podSpecOf(workload);
  expect(containers, `${workload.metadata?.name}: containers`).toHaveLength(1);
  return containers[0] as IContainer;
}

/** The container port a probe or Service names (by name or number). */
function containerPort(container: IContainer, port: string | number | undefined): number | undefined {
  return typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
}

/** Whether a selector picks the pods of a workload. */
const selects = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean =>
  selector !== undefined && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

const envOf = (container: IContainer): Record<string, IEnvVar> => Object.fromEntries((container.env ?? []).map((e) => [e.name, e]));

/** Whether an HTTPRoute match (Exact or PathPrefix, as the Gateway API defines them) takes a request for `url`. */
function routeTakes(match: IHTTPRouteMatch, url: string): boolean {
  // The routes match by path alone: a header, query or method match would need a reader of its own.
  expect({ ...match, path: undefined }, 'a match other than by path').toEqual({ path: undefined });
  // No path is PathPrefix /: every path.
  const { type = 'PathPrefix', value = '/' } = match.path ?? {};
  if (type === 'Exact') return url === value;
  expect(type, `${value}: Exact or PathPrefix (RegularExpression depends on the implementation)`).toBe('PathPrefix');
  // PathPrefix matches whole path elements: /assets takes /assets and /assets/x, not /assetsx.
  const prefix = value.replace(/\/+$/, '');
  return prefix === '' || url === prefix || url.startsWith(`${prefix}/`);
}

/** Every match of these HTTPRoutes' rules: a rule without matches takes every path. */
const routeMatches = (routes: IHTTPRoute[]): IHTTPRouteMatch[] =>
  routes.flatMap((route) => (route.spec.rules ?? []).flatMap((rule) => rule.matches ?? [{}]));

type LabelSelector = INetworkPolicyPeer['podSelector'];

/** Whether a NetworkPolicy's label selector picks these labels: an empty one picks every pod (or namespace). */
function picks(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  if (selector === undefined) return false;
  // The policies here select by labels alone: an expression would need a reader of its own.
  expect(selector.matchExpressions, 'matchExpressions').toBeUndefined();
  return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels?.[k] === v);
}

/** A file a container sees from a Secret: which Secret and key, its mode, whether the mount is read-only. */
interface SecretFile {
  secretName: string | undefined;
  key: string;
  mode: number;
  readOnly: boolean;
}

/** The Secret key a workload's container sees as the file `path` (a secret volume mounted at its directory), if any. */
function secretFileOf(workload: IDeployment | IStatefulSet, path: string): SecretFile | undefined {
  const pod = podSpecOf(workload);
  for (const mount of containerOf(workload).volumeMounts ?? []) {
    if (mount.subPath !== undefined || !path.startsWith(`${mount.mountPath}/`)) continue;
    const secret = pod.volumes?.find((v) => v.name === mount.name)?.secret;
    const item = secret?.items?.find((i) => i.path === path.slice(mount.mountPath.length + 1));
    if (secret === undefined || item === undefined) continue;
    // Kubernetes' default mode for a secret volume's files is 0644.
    return {
      secretName: secret.secretName,
      key: item.key,
      mode: item.mode ?? secret.defaultMode ?? 0o644,
      readOnly: mount.readOnly === true,
    };
  }
  return undefined;
}

/** What a probe checks (its handler), without its timings. */
const checkOf = (probe: IProbe | undefined) => ({
  exec: probe?.exec,
  httpGet: probe?.httpGet,
  tcpSocket: probe?.tcpSocket,
  grpc: probe?.grpc,
});

const timingsOf = (probe: IProbe | undefined) => ({
  initialDelaySeconds: probe?.initialDelaySeconds ?? 0,
  periodSeconds: probe?.periodSeconds ?? 10,
  timeoutSeconds: probe?.timeoutSeconds ?? 1,
  failureThreshold: probe?.failureThreshold ?? 3,
});

// The overlays are rendered from a copy of what git commits: a password file a developer keeps in
// the repository (git-ignored) must not make them render here.
const copy = committedCopy('deploy/kubernetes');
afterAll(() => copy.remove());
const copyPath = (path: string): string => join(copy.root, path);

/** Every overlay at once, each to its objects or why it has none. */
const renderAll = async (): Promise<Map<string, KubeObject[] | Error>> =>
  new Map(
    await Promise.all(
      overlays.map(async (overlay) => {
        const result = await kubectlKustomize(copyPath(`${overlaysDir}/${overlay}`)).catch((error: unknown) =>
          error instanceof Error ? error : new Error(String(error)),
        );
        return [overlay, result] as const;
      }),
    ),
  );

/** A secretGenerator of a kustomization.yaml (the fields read here). */
interface SecretGenerator {
  name: string;
  literals?: string[];
  files?: string[];
  envs?: string[];
}
const secretGeneratorsOf = (kustomization: string): SecretGenerator[] =>
  (parse(readFileSync(kustomization, 'utf8')) as { secretGenerator?: SecretGenerator[] }).secretGenerator ?? [];
/** A generator's file sources (`[KEY=]path`) as key and path from its kustomization's directory. */
const fileSources = (generator: SecretGenerator) =>
  (generator.files ?? []).map((source) => {
    const at = source.indexOf('=');
    return at < 0 ? { key: posix.basename(source), path: source } : { key: source.slice(0, at), path: source.slice(at + 1) };
  });
/** The files an overlay's generators read passwords from, as paths from the repository's root: the user's to create. */
const passwordFilesOf = (overlay: string): string[] =>
  secretGeneratorsOf(copyPath(`${overlaysDir}/${overlay}/kustomization.yaml`))
    .flatMap(fileSources)
    .filter(({ key }) => /PASSWORD/.test(key))
    .map(({ path }) => posix.join(overlaysDir, overlay, path));

// First as a fresh clone holds them, then with the password files a user creates (any characters,
// and a trailing newline as `openssl rand -hex 24 > file` writes it).
const withoutPasswords = await renderAll();
const passwords = new Map(
  overlays.flatMap(passwordFilesOf).map((path) => [path, `pw ${randomBytes(12).toString('hex')}@:/%#'"\n`] as const),
);
for (const [path, password] of passwords) writeFileSync(copyPath(path), password, { mode: 0o600 });
// Every overlay before the tests: the unknown-fields check type-checks all their objects in one program.
const renders = await renderAll();
const renderedOverlays = new Map([...renders].map(([overlay, result]) => [overlay, rendered(overlay, result)]));

/** Missing kubectl skips the overlays' tests outside CI; under CI=true they run and fail, naming it. */
const skipOverlays = [...renders.values()].some((result) => result instanceof KubectlMissing) && process.env.CI !== 'true';
if (skipOverlays) console.warn('SKIPPED: the tests of deploy/kubernetes/overlays/*: kubectl, which renders them, is not installed.');

/**
 * The kustomizations docs/operations.md shows for deploy/kubernetes/local/<name>/ (git-ignored), each on
 * the simple overlay: your class for the stack's Gateway, and your own Gateway for its HTTPRoute alone.
 */
const localKustomizations = [...readRepoFile('docs/operations.md').matchAll(/```yaml\n(# deploy\/kubernetes\/local\/[\s\S]*?)```/g)].map(
  (m) => m[1] ?? '',
);
/** A kustomization's patches as JSON patch operations (the `patch:` text of each, parsed). */
const jsonPatchesOf = (kustomization: string): { op: string; path: string; value?: unknown }[] =>
  ((parse(kustomization) as { patches?: { patch: string }[] }).patches ?? [])
    .map((p) => parse(p.patch) as unknown)
    .filter((p): p is { op: string; path: string; value?: unknown }[] => Array.isArray(p))
    .flat();
/** Each of them on each overlay, as a user writes it (the overlay's name in place of `simple`), rendered with the password files in place. */
const localRenders = new Map(
  await Promise.all(
    localKustomizations.flatMap((text, i) =>
      overlays.map(async (overlay) => {
        const dir = copyPath(`deploy/kubernetes/local/${overlay}-${i}`);
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'kustomization.yaml'), text.replaceAll('../../overlays/simple', `../../overlays/${overlay}`));
        const result = await kubectlKustomize(dir).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
        return [`${overlay}-${i}`, rendered(`local/${overlay}-${i}`, result)] as const;
      }),
    ),
  ),
);

/**
 * Where ingress controllers and Gateway API implementations run by default. A NetworkPolicy naming one
 * assumes that controller (ingress-nginx's was named until it was retired).
 */
const controllerNamespaces = [
  'ingress-nginx',
  'kube-system',
  'envoy-gateway-system',
  'nginx-gateway',
  'istio-system',
  'istio-ingress',
  'kgateway-system',
  'kong',
  'traefik',
  'gateway-system',
];

/**
 * Passwords this repository commits or once committed: compose's local example password files (the
 * committed ones) and the literal the Kubernetes overlays generated until they read the user's file.
 */
const composeExamplePasswords = stackNames
  .flatMap((stack) => Object.values(composeSecretFiles(`deploy/compose/compose.${stack}.yml`)))
  .filter((path) => !gitIgnores(path))
  .map((path) => secretFileValue(path).trim());
const committedPasswords = new Set(['password', ...composeExamplePasswords]);
/** Secret keys that hold names, not credentials: PostgreSQL's user and database, which compose writes in its files too. */
const plainSecretKeys = new Set(['POSTGRES_USER', 'POSTGRES_DB']);

/** Every string value of an object, at any depth (not its keys), with a Secret's data decoded. */
function stringsOf(value: unknown, isSecretData = false): string[] {
  if (typeof value === 'string') return [isSecretData ? Buffer.from(value, 'base64').toString() : value];
  if (Array.isArray(value)) return value.flatMap((v) => stringsOf(v));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, v]) =>
      key === 'data' && (value as { kind?: string }).kind === 'Secret'
        ? Object.values(v as Record<string, string>).flatMap((d) => stringsOf(d, true))
        : stringsOf(v),
    );
  return [];
}

/** What the API would refuse as unknown fields, in every overlay that rendered: type-checked once, on first use. */
let unknown: string[] | undefined;
const unknownFieldsOf = (overlay: string): string[] => {
  const result = renders.get(overlay);
  if (result instanceof Error) throw result;
  unknown ??= unknownFields(
    [...renders].flatMap(([label, objects]) => (objects instanceof Error ? [] : objects.map((object) => ({ label, object })))),
  );
  return unknown.filter((message) => message.startsWith(`${overlay}: `));
};

// ---- the tests ----

describe('deploy/kubernetes/overlays', () => {
  it('has one overlay per stack of the manifest, and one on an external database per stack with a database', () => {
    const expected = stackNames.flatMap((stack) => (hasDb(stack) ? [stack, `${stack}-external`] : [stack]));
    expect(overlayDirs).toEqual(expected.sort());
  });

  it('holds no password in a committed file: Secrets are generated from files git ignores, never from literals', () => {
    const kustomizations = committablePaths('deploy/kubernetes').filter((path) => posix.basename(path) === 'kustomization.yaml');
    expect(kustomizations.length).toBeGreaterThan(overlayDirs.length);
    const isPassword = (key: string) => /PASSWORD/i.test(key);
    const keyOfLine = (line: string) => line.slice(0, line.indexOf('=')).trim();
    let passwordSources = 0;
    for (const path of kustomizations) {
      const dir = posix.dirname(path);
      for (const generator of secretGeneratorsOf(repoPath(path))) {
        const label = `${path}: ${generator.name}`;
        expect(
          (generator.literals ?? []).filter((literal) => isPassword(keyOfLine(literal))),
          `${label}: literals`,
        ).toEqual([]);
        // A committed env file is as committed as a literal.
        for (const env of (generator.envs ?? []).map((file) => posix.join(dir, file)).filter((file) => !gitIgnores(file)))
          expect(readRepoFile(env).split('\n').map(keyOfLine).filter(isPassword), `${label}: ${env}`).toEqual([]);
        for (const { key, path: file } of fileSources(generator).filter((source) => isPassword(source.key))) {
          passwordSources += 1;
          expect(gitIgnores(posix.join(dir, file)), `${label}: ${key} from ${file}, git-ignored`).toBe(true);
        }
      }
    }
    // The overlays with a database read theirs so (the check above looked at something).
    expect(passwordSources).toBe(overlays.filter((overlay) => hasDb(stackOf(overlay)) && !isExternal(overlay)).length);
  });

  it('keeps the Gateway out of the bases: a component every overlay adds, so the routes stand without it', () => {
    const manifests = committablePaths('deploy/kubernetes').filter((path) => path.endsWith('.yaml'));
    expect(manifests.filter((path) => /^kind: Gateway$/m.test(readRepoFile(path)))).toEqual([
      'deploy/kubernetes/components/gateway/gateway.yaml',
    ]);
    for (const overlay of overlayDirs) {
      const { components = [] } = parse(readRepoFile(`${overlaysDir}/${overlay}/kustomization.yaml`)) as { components?: string[] };
      expect(components, overlay).toEqual(['../../components/gateway']);
    }
  });

  it('keeps the shared shape of our Node services in components/node-service: each such base adds it and repeats none of it', () => {
    const basesDir = 'deploy/kubernetes/base';
    const kustomizationOf = (base: string) =>
      parse(readRepoFile(`${basesDir}/${base}/kustomization.yaml`)) as { resources?: string[]; components?: string[] };
    // Our images with the kit's /health and /ready (the proxy's port is web's: its own probes, base/proxy).
    const nodeBases = readdirSync(repoPath(basesDir))
      .filter((base) => base !== 'proxy')
      .filter((base) =>
        (kustomizationOf(base).resources ?? []).some((file) => /image: sample-/.test(readRepoFile(`${basesDir}/${base}/${file}`))),
      )
      .sort();
    expect(nodeBases).toEqual(['backend', 'database', 'frontend', 'simple']);
    for (const base of nodeBases) {
      const { resources = [], components = [] } = kustomizationOf(base);
      expect(components[0], base).toBe('../../components/node-service');
      for (const file of resources)
        expect(readRepoFile(`${basesDir}/${base}/${file}`), `${base}/${file}`).not.toMatch(
          /^\s*(securityContext|resources|startupProbe|readinessProbe|livenessProbe|lifecycle|volumes|kind: PodDisruptionBudget|kind: HorizontalPodAutoscaler)\b/m,
        );
    }
  });

  it('says, on every page that applies an overlay, how to create the password file in one command', () => {
    const names = [...new Set(overlays.flatMap(passwordFilesOf).map((path) => posix.basename(path)))];
    expect(names).toHaveLength(1);
    const pages = ['README.md', ...readdirSync(repoPath('docs')).map((page) => `docs/${page}`)].filter(
      (page) => page.endsWith('.md') && readRepoFile(page).includes('kubectl apply -k deploy/kubernetes/overlays/'),
    );
    expect(pages.length).toBeGreaterThan(0);
    // Written into an overlay's directory, named as the overlays read it, by one command on one line.
    const creates = new RegExp(`^.*> deploy/kubernetes/overlays/\\S+/${names[0]}\\b.*$`, 'm');
    for (const page of pages) expect(creates.exec(readRepoFile(page))?.[0], page).toMatch(/openssl rand/);
  });
});

describe.skipIf(skipOverlays).each(overlays)('deploy/kubernetes/overlays/%s', (overlay) => {
  const stack = stackOf(overlay);
  const external = isExternal(overlay);
  const withDb = hasDb(stack) && !external;
  const k8s = renderedOverlays.get(overlay) as Rendered;
  const compose = composeServices(`deploy/compose/compose.${stack}.yml`);
  const members: readonly StackMember[] = stacks[stack].members;
  const deployment = (as: string) => k8s.one<IDeployment>('Deployment', as);
  const portOf = (as: string): number => services[members.find((m) => m.as === as)?.service as ServiceName].port;

  it('renders with `kubectl kustomize`: objects with a kind and a name, each once', () => {
    expect(k8s.objects.length).toBeGreaterThan(0);
    for (const object of k8s.objects)
      expect([object.apiVersion, object.kind, object.metadata.name].every(Boolean), keyOf(object)).toBe(true);
    const keys = k8s.objects.map(keyOf);
    expect(keys).toEqual([...new Set(keys)]);
  });

  it(
    withDb
      ? 'renders only with the password file the user creates, which git ignores: without it kustomize stops, naming it'
      : 'renders without any file the user creates',
    () => {
      const files = passwordFilesOf(overlay);
      expect(files).toHaveLength(withDb ? 1 : 0);
      const without = withoutPasswords.get(overlay);
      if (!withDb) {
        expect(without).toEqual(renders.get(overlay));
        return;
      }
      expect(without).toBeInstanceOf(Error);
      expect((without as Error).message).toContain(copyPath(files[0] ?? ''));
      expect(gitIgnores(files[0] ?? ''), `${files[0]} git-ignored`).toBe(true);
    },
  );

  it('validates every object against the schema of its kind (kubernetes-models, @kubernetes-models/gateway-api)', async () => {
    for (const object of k8s.objects) {
      const validate = validators[`${object.apiVersion}/${object.kind}`];
      expect(validate, `${keyOf(object)}: no schema for ${object.apiVersion} ${object.kind}`).toBeDefined();
      await validate?.(object);
    }
  });

  it('has no field the Kubernetes API does not know (kubectl apply validates strictly; the schemas let them through)', () => {
    expect(unknownFieldsOf(overlay)).toEqual([]);
  });

  it("puts everything in the stack's own namespace, which it creates", () => {
    const [namespace, ...more] = k8s.all('Namespace');
    expect(more).toEqual([]);
    expect(namespace?.metadata.name).toBe(`sample-${stack}`);
    for (const object of k8s.objects.filter((o) => o.kind !== 'Namespace'))
      expect(object.metadata.namespace, keyOf(object)).toBe(`sample-${stack}`);
  });

  it("has a Deployment and a Service per member, named as in compose; PostgreSQL as compose's `db` unless external", () => {
    const names = (kind: string) => k8s.all(kind).map((o) => o.metadata.name);
    expect(names('Deployment').sort()).toEqual(members.map((m) => m.as).sort());
    expect(names('StatefulSet')).toEqual(withDb ? ['db'] : []);
    expect(names('Service').sort()).toEqual([...members.map((m) => m.as), ...(withDb ? ['db'] : [])].sort());
    expect(Object.keys(compose).sort()).toEqual(
      [...members.map((m) => m.as), ...stacks[stack].composeOnly, ...stacks[stack].commands, ...stacks[stack].profiles].sort(),
    );
  });

  it.each(members)("runs $as from the manifest's image on the manifest's port, behind a Service on that port", (member) => {
    const workload = deployment(member.as);
    const container = containerOf(workload);
    const port = services[member.service].port;
    expect(container.image).toBe(imageOf(member.service, 'latest'));
    // The manifest's port, its only one.
    expect(container.ports?.map((p) => p.containerPort)).toEqual([port]);
    const service = k8s.one<IService>('Service', member.as);
    expect(service.spec?.ports?.map((p) => [p.port, containerPort(container, p.targetPort)])).toEqual([[port, port]]);
    // The Service sends to this workload's pods and to no other's.
    const labels = workload.spec?.template.metadata?.labels;
    expect(selects(service.spec?.selector, labels)).toBe(true);
    expect(selects(workload.spec?.selector.matchLabels, labels)).toBe(true);
    for (const other of [...k8s.all<IDeployment>('Deployment'), ...k8s.all<IStatefulSet>('StatefulSet')].filter((w) => w !== workload)) {
      expect(selects(service.spec?.selector, other.spec?.template.metadata?.labels), `also selects ${keyOf(other)}`).toBe(false);
    }
  });

  it.each(members)("gives $as compose's environment and the manifest's links, the password as compose's file", (member) => {
    const workload = deployment(member.as);
    const env = envOf(containerOf(workload));
    // Compose runs nginx in the proxy's place; ours is set by its link alone.
    const fromCompose = member.composeImage === undefined ? environmentOf(compose[member.as] ?? {}) : {};
    const links = Object.fromEntries(Object.entries(member.links ?? {}).map(([variable, as]) => [variable, `http://${as}:${portOf(as)}`]));
    const { DATABASE_URL: databaseUrl, DATABASE_PASSWORD_FILE: passwordFile, ...plain } = { ...fromCompose, ...links };
    // Compose gives the URL without its password and the password as a file, or neither.
    expect(passwordFile === undefined, 'DATABASE_PASSWORD_FILE beside DATABASE_URL').toBe(databaseUrl === undefined);
    const names = Object.keys(env);
    if (databaseUrl === undefined || passwordFile === undefined) {
      expect(env).toEqual(Object.fromEntries(Object.entries(plain).map(([name, value]) => [name, { name, value }])));
      return;
    }
    if (external) {
      // The user's Secret `database-url` holds the whole URL: a file where compose puts its secrets.
      const urlFile = posix.join(posix.dirname(passwordFile), 'database-url');
      const expected = { ...plain, DATABASE_URL_FILE: urlFile };
      expect(env).toEqual(Object.fromEntries(Object.entries(expected).map(([name, value]) => [name, { name, value }])));
      expect(secretFileOf(workload, urlFile)).toMatchObject({ secretName: 'database-url', key: 'DATABASE_URL' });
      return;
    }
    // DATABASE_URL made of variables from db's Secret; the password the file of that Secret's password key.
    const url = asKubernetesVariables(databaseUrl);
    const parts = [...url.matchAll(/\$\((\w+)\)/g)].map((m) => m[1] ?? '');
    for (const [name, value] of Object.entries({ ...plain, DATABASE_PASSWORD_FILE: passwordFile, DATABASE_URL: url }))
      expect(env[name], name).toEqual({ name, value });
    expect([...names].sort()).toEqual([...Object.keys(plain), ...parts, 'DATABASE_PASSWORD_FILE', 'DATABASE_URL'].sort());
    const db = k8s.one<IStatefulSet>('StatefulSet', 'db');
    const dbSecret = envOf(containerOf(db)).POSTGRES_USER?.valueFrom?.secretKeyRef?.name;
    for (const name of parts) {
      expect(env[name], name).toEqual({ name, valueFrom: { secretKeyRef: { name: dbSecret, key: name } } });
      // Kubernetes expands $(NAME) only for a variable defined before.
      expect(names.indexOf(name), name).toBeLessThan(names.indexOf('DATABASE_URL'));
    }
    // The very password PostgreSQL was created with: the same Secret and key as db's POSTGRES_PASSWORD_FILE.
    const dbPasswordFile = envOf(containerOf(db)).POSTGRES_PASSWORD_FILE?.value ?? '';
    const dbPassword = secretFileOf(db, dbPasswordFile);
    expect(dbPassword?.secretName).toBe(dbSecret);
    expect(secretFileOf(workload, passwordFile)).toMatchObject({ secretName: dbSecret, key: dbPassword?.key });
  });

  it.each(members)(
    "migrates the schema before $as starts when it uses PostgreSQL: compose's migrate, as an init container like $as's own",
    (member) => {
      const workload = deployment(member.as);
      const container = containerOf(workload);
      const env = envOf(container);
      const usesDb = env.DATABASE_URL !== undefined || env.DATABASE_URL_FILE !== undefined;
      const inits = podSpecOf(workload).initContainers ?? [];
      expect(inits.map((init) => init.name)).toEqual(usesDb ? ['migrate'] : []);
      if (!usesDb) return;
      expect(stacks[stack].commands).toContain('migrate');
      expect(inits[0]?.command).toEqual(['node', 'dist/migrate.js']);
      // The container's image, the variables saying where the users are, mounts, hardening and limits.
      const runs = (c: typeof container) => {
        const { image, imagePullPolicy, env: variables, volumeMounts, securityContext, resources } = c;
        const database = variables?.filter((variable) => /^(DATABASE|POSTGRES)_/.test(variable.name));
        return { image, imagePullPolicy, database, volumeMounts, securityContext, resources };
      };
      expect(runs(inits[0] as typeof container)).toEqual(runs(container));
    },
  );

  it.each(members)('gives $as the OTEL_* variables of the optional ConfigMap opentelemetry (traces off without it)', (member) => {
    expect(containerOf(deployment(member.as)).envFrom).toEqual([{ configMapRef: { name: 'opentelemetry', optional: true } }]);
  });

  it.each(members)(
    "probes $as: readiness GET /ready, startup and liveness GET /health on its port (the proxy: its port accepting), with the image's timings",
    (member) => {
      const container = containerOf(deployment(member.as));
      const { startupProbe: startup, readinessProbe: readiness, livenessProbe: liveness } = container;
      const image = imageHealthcheck;
      // Startup is the image's HEALTHCHECK during its start period: liveness's check every start
      // interval, for as long as Docker waits before it calls a container that never passes
      // unhealthy (the start period, then `retries` failures an interval apart).
      expect(startup, 'startupProbe').toBeDefined();
      expect(checkOf(startup)).toEqual(checkOf(liveness));
      expect(timingsOf(startup)).toEqual({
        initialDelaySeconds: 0,
        periodSeconds: image.startInterval,
        timeoutSeconds: image.timeout,
        failureThreshold: Math.ceil((image.startPeriod + image.retries * image.interval) / image.startInterval),
      });
      // Liveness is the image's HEALTHCHECK after it; readiness asks as patiently but more often.
      // Both begin once startup passes, so without a delay: Ready as soon as the service is.
      expect(timingsOf(liveness)).toEqual({
        initialDelaySeconds: 0,
        periodSeconds: image.interval,
        timeoutSeconds: image.timeout,
        failureThreshold: image.retries,
      });
      expect({ ...timingsOf(readiness), periodSeconds: undefined }).toEqual({
        initialDelaySeconds: 0,
        periodSeconds: undefined,
        timeoutSeconds: image.timeout,
        failureThreshold: image.retries,
      });
      expect(timingsOf(readiness).periodSeconds).toBeLessThanOrEqual(image.interval);
      const port = services[member.service].port;
      // The proxy's every path is its upstream's: its own probes are its port accepting connections.
      if (member.service === 'proxy') {
        for (const probe of [startup, readiness, liveness]) expect(checkOf(probe)).toEqual({ tcpSocket: { port: 'http' } });
        expect(containerPort(container, 'http')).toBe(port);
        return;
      }
      // The kubelet's own GET: no process started in the container per probe.
      for (const [probe, path] of [
        [readiness, '/ready'],
        [liveness, '/health'],
      ] as const) {
        expect(checkOf(probe), `${path}: httpGet only`).toEqual(checkOf({ httpGet: probe?.httpGet ?? { port: '' } }));
        expect(probe?.httpGet?.path).toBe(path);
        expect(probe?.httpGet?.scheme ?? 'HTTP').toBe('HTTP');
        expect(containerPort(container, probe?.httpGet?.port)).toBe(port);
      }
    },
  );

  it.each(members)('pauses $as before SIGTERM (preStop), within a grace period that covers the pause and its graceful stop', (member) => {
    const workload = deployment(member.as);
    const preStop = containerOf(workload).lifecycle?.preStop;
    expect(preStop, 'preStop').toBeDefined();
    // The native sleep action, or `sleep N` run in the container.
    const command = preStop?.exec?.command ?? [];
    const pause = preStop?.sleep?.seconds ?? (command[0] === 'sleep' ? Number(command[1]) : Number.NaN);
    expect(pause, 'the pause, in seconds').toBeGreaterThan(0);
    // Kubernetes' default grace period is 30 s; the pause counts within it.
    const grace = podSpecOf(workload).terminationGracePeriodSeconds ?? 30;
    expect(grace).toBeGreaterThan(pause + shutdownGraceSeconds);
  });

  it("limits every container to the spec's 1 CPU and 512 MiB (the swarm file's limits), with requests below them", () => {
    for (const workload of [...k8s.all<IDeployment>('Deployment'), ...k8s.all<IStatefulSet>('StatefulSet')]) {
      const { requests, limits } = containerOf(workload).resources ?? {};
      const name = keyOf(workload);
      expect(millicores(limits?.cpu), `${name}: cpu`).toBe(swarmLimits.millicores);
      expect(quantityBytes(limits?.memory), `${name}: memory`).toBe(swarmLimits.bytes);
      expect(millicores(requests?.cpu), `${name}: cpu request`).toBeLessThanOrEqual(swarmLimits.millicores);
      expect(quantityBytes(requests?.memory), `${name}: memory request`).toBeLessThanOrEqual(swarmLimits.bytes);
    }
  });

  it('runs every pod hardened: not root, read-only root filesystem, no capabilities or escalation, seccomp, no token', () => {
    for (const workload of [...k8s.all<IDeployment>('Deployment'), ...k8s.all<IStatefulSet>('StatefulSet')]) {
      const name = keyOf(workload);
      const pod = podSpecOf(workload);
      const container = containerOf(workload);
      expect(pod.automountServiceAccountToken, `${name}: service account token`).toBe(false);
      expect(pod.securityContext?.runAsNonRoot, `${name}: runAsNonRoot`).toBe(true);
      expect(pod.securityContext?.seccompProfile?.type ?? container.securityContext?.seccompProfile?.type, name).toBe('RuntimeDefault');
      expect(container.securityContext?.runAsUser ?? pod.securityContext?.runAsUser, `${name}: uid`).toBeGreaterThan(0);
      expect(container.securityContext?.privileged ?? false, `${name}: privileged`).toBe(false);
      expect(container.securityContext?.allowPrivilegeEscalation, `${name}: allowPrivilegeEscalation`).toBe(false);
      expect(container.securityContext?.readOnlyRootFilesystem, `${name}: readOnlyRootFilesystem`).toBe(true);
      expect(container.securityContext?.capabilities, `${name}: capabilities`).toEqual({ drop: ['ALL'] });
    }
    for (const member of members) {
      const workload = deployment(member.as);
      const pod = podSpecOf(workload);
      const container = containerOf(workload);
      // Our images run as uid 1000, and write only LOG_DIR (the image's), which is an emptyDir here;
      // anything else mounted is a Secret's files, read-only.
      expect(container.securityContext?.runAsUser ?? pod.securityContext?.runAsUser, `${member.as}: uid`).toBe(NODE_UID);
      expect(imageEnv.LOG_DIR).toBeDefined();
      const volumeOf = (name: string) => pod.volumes?.find((v) => v.name === name);
      const mounts = container.volumeMounts ?? [];
      const writable = mounts.filter((m) => m.readOnly !== true).map((m) => ({ path: m.mountPath, emptyDir: volumeOf(m.name)?.emptyDir }));
      expect(writable, `${member.as}: writable paths`).toEqual([{ path: imageEnv.LOG_DIR, emptyDir: expect.any(Object) as unknown }]);
      for (const mount of mounts.filter((m) => m.readOnly === true))
        expect(volumeOf(mount.name)?.secret, `${member.as}: ${mount.mountPath}`).toBeDefined();
    }
  });

  it(`sends outside traffic through its Gateway's HTTPRoute to ${frontDoor[stack]}, which autoscales and keeps a pod through disruptions`, () => {
    // One Gateway: plain HTTP on port 80 (spec 4.4's proxy port) for this namespace's routes, of a named class.
    const [gateway, ...otherGateways] = k8s.all<IGateway>('Gateway');
    expect(otherGateways).toEqual([]);
    expect(gateway?.spec.gatewayClassName).toMatch(/^\S+$/);
    expect(
      gateway?.spec.listeners.map((l) => ({ protocol: l.protocol, port: l.port, from: l.allowedRoutes?.namespaces?.from ?? 'Same' })),
    ).toEqual([{ protocol: 'HTTP', port: 80, from: 'Same' }]);
    // One HTTPRoute, attached to that Gateway as a whole (no sectionName or port: a later HTTPS listener
    // takes it too), sending every rule to the front door's Service on its port, unchanged (no filters).
    const routes = k8s.all<IHTTPRoute>('HTTPRoute');
    expect(routes).toHaveLength(1);
    expect(routes[0]?.spec.parentRefs).toEqual([{ name: gateway?.metadata?.name }]);
    const front = frontDoor[stack];
    const rules = routes[0]?.spec.rules ?? [];
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      expect(rule.backendRefs).toEqual([{ name: front, port: portOf(front) }]);
      expect(rule.filters).toBeUndefined();
    }
    expect(k8s.one<IService>('Service', front).spec?.ports?.map((p) => p.port)).toContain(portOf(front));
    // Every scaled Deployment: an autoscaler (autoscaling/v2) owns its count, and a budget keeps one pod up.
    const scaled = k8s.all<IDeployment>('Deployment').filter((d) => d.spec?.replicas === undefined);
    expect(scaled.map((d) => d.metadata.name)).toContain(front);
    const autoscalers = k8s.all<IHorizontalPodAutoscaler>('HorizontalPodAutoscaler');
    const budgets = k8s.all<IPodDisruptionBudget>('PodDisruptionBudget');
    expect(autoscalers.map((a) => a.spec?.scaleTargetRef.name).sort()).toEqual(scaled.map((d) => d.metadata.name).sort());
    for (const workload of scaled) {
      const autoscaler = autoscalers.find((a) => a.spec?.scaleTargetRef.name === workload.metadata.name);
      expect(autoscaler?.apiVersion).toBe('autoscaling/v2');
      expect(autoscaler?.spec?.scaleTargetRef).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' });
      const minReplicas = autoscaler?.spec?.minReplicas ?? 1;
      expect(minReplicas).toBeGreaterThanOrEqual(2);
      // CPU utilization is measured against the request, so there must be one.
      expect(containerOf(workload).resources?.requests?.cpu).toBeDefined();
      const budget = budgets.filter((b) => selects(b.spec?.selector?.matchLabels, workload.spec?.template.metadata?.labels));
      expect(budget, `${workload.metadata.name}: disruption budgets`).toHaveLength(1);
      // At least one pod stays, and a drain can still evict one of the minimum.
      expect(budget[0]?.spec?.minAvailable).toBeGreaterThanOrEqual(1);
      expect(budget[0]?.spec?.minAvailable).toBeLessThan(minReplicas);
    }
    expect(budgets).toHaveLength(scaled.length);
  });

  it('routes through the HTTPRoute only what users call, never /ready, /metrics, /docs or /openapi.json', () => {
    const matches = routeMatches(k8s.all<IHTTPRoute>('HTTPRoute'));
    const front = members.find((m) => m.as === frontDoor[stack])?.service as ServiceName;
    expect(userPaths[front]?.length).toBeGreaterThan(0);
    for (const url of userPaths[front] ?? [])
      expect(
        matches.some((match) => routeTakes(match, url)),
        `${url} routed`,
      ).toBe(true);
    for (const url of internalPaths)
      expect(
        matches.filter((match) => routeTakes(match, url)).map((match) => match.path),
        `${url} routed`,
      ).toEqual([]);
  });

  it("renders no Ingress and nothing of one ingress controller's: outside traffic comes through the Gateway API", () => {
    expect(k8s.objects.filter((o) => /^Ingress(Class)?$/.test(o.kind)).map(keyOf)).toEqual([]);
    // ingress-nginx's name, its annotations (nginx.ingress.kubernetes.io/...) and an Ingress's class field.
    for (const object of k8s.objects)
      expect(JSON.stringify(object), keyOf(object)).not.toMatch(/ingress-nginx|ingress\.kubernetes\.io|ingressClassName/i);
  });

  it("names no controller's namespace in a NetworkPolicy: other namespaces only by the label the user sets", () => {
    const policies = k8s.all<INetworkPolicy>('NetworkPolicy');
    expect(policies.length).toBeGreaterThan(0);
    for (const policy of policies) {
      const peers = [
        ...(policy.spec?.ingress ?? []).flatMap((rule) => rule.from ?? []),
        ...(policy.spec?.egress ?? []).flatMap((rule) => rule.to ?? []),
      ];
      for (const selector of peers.flatMap((peer) => (peer.namespaceSelector === undefined ? [] : [peer.namespaceSelector]))) {
        const keys = [...Object.keys(selector.matchLabels ?? {}), ...(selector.matchExpressions ?? []).map((e) => e.key)];
        // Kubernetes' own label on a namespace is its name: selecting by it picks one controller's.
        expect(keys, `${keyOf(policy)}: namespaceSelector`).toEqual([gatewayNamespaceLabel]);
      }
      const named = stringsOf(policy).filter((value) => controllerNamespaces.includes(value));
      expect(named, `${keyOf(policy)}: a controller's namespace`).toEqual([]);
    }
  });

  it("renders no committed password or Secret value: every credential is the user's file, byte for byte", () => {
    // compose's example password was read, from each stack with a database.
    expect(composeExamplePasswords).toHaveLength(stackNames.filter(hasDb).length);
    const userPasswords = [...passwords.values()];
    for (const object of k8s.objects) {
      for (const value of stringsOf(object)) {
        expect(committedPasswords.has(value.trim()), `${keyOf(object)}: a committed password`).toBe(false);
        expect(/:\/\/[^/@\s]*:[^/@\s]*@/.test(value), `${keyOf(object)}: a URL with a password`).toBe(false);
      }
    }
    for (const secret of k8s.all<ISecret>('Secret')) {
      // stringData is written in a file as it is: only generated data, from files git ignores.
      expect(secret.stringData, `${keyOf(secret)}: stringData`).toBeUndefined();
      for (const [key, value] of Object.entries(secret.data ?? {}).filter(([key]) => !plainSecretKeys.has(key)))
        expect(userPasswords, `${keyOf(secret)}: ${key} from the user's file`).toContain(Buffer.from(value, 'base64').toString());
    }
  });

  it('admits, through NetworkPolicies, only the connections the stack makes, each on the public port, never the probe port', () => {
    const policies = k8s.all<INetworkPolicy>('NetworkPolicy');
    const workloads = [...k8s.all<IDeployment>('Deployment'), ...k8s.all<IStatefulSet>('StatefulSet')];
    const labelsOf = (workload: IDeployment | IStatefulSet) => workload.spec?.template.metadata?.labels;
    const namespace = k8s.all<INamespace>('Namespace')[0];
    // Kubernetes labels every namespace with its own name.
    const namespaceLabels = { ...namespace?.metadata?.labels, 'kubernetes.io/metadata.name': namespace?.metadata?.name ?? '' };
    // The pods an implementation runs for the Gateway in its namespace carry its name (GEP-1762).
    const gatewayPods = { 'gateway.networking.k8s.io/gateway-name': k8s.all<IGateway>('Gateway')[0]?.metadata?.name ?? '' };
    const podLabels = [...workloads.map(labelsOf), gatewayPods];
    const selecting = (labels: Record<string, string> | undefined, type: 'Ingress' | 'Egress') =>
      policies.filter((p) => (p.spec?.policyTypes ?? ['Ingress']).includes(type) && picks(p.spec?.podSelector, labels));

    // Default deny: one policy isolates every pod of the namespace, admitting nothing itself.
    const denyAll = policies.filter((p) => Object.keys(p.spec?.podSelector?.matchLabels ?? {}).length === 0);
    expect(denyAll.map((p) => ({ types: p.spec?.policyTypes, ingress: p.spec?.ingress ?? [] }))).toEqual([
      { types: ['Ingress'], ingress: [] },
    ]);
    // Every other policy selects pods that are here (ours or the Gateway's), and every pod it names
    // as a peer is here too.
    for (const policy of policies.filter((p) => !denyAll.includes(p))) {
      expect(podLabels.filter((labels) => picks(policy.spec?.podSelector, labels)).length, `${keyOf(policy)} selects`).toBeGreaterThan(0);
      for (const peer of (policy.spec?.ingress ?? []).flatMap((rule) => rule.from ?? [])) {
        expect(peer.ipBlock, `${keyOf(policy)}: ipBlock`).toBeUndefined();
        // Other namespaces only by the label a user sets on their gateway's (docs/operations.md): never
        // all of them, nor one controller's by name.
        if (peer.namespaceSelector !== undefined)
          expect(peer.namespaceSelector, `${keyOf(policy)}: namespaces`).toEqual({ matchLabels: { [gatewayNamespaceLabel]: 'true' } });
        else if (Object.keys(peer.podSelector?.matchLabels ?? {}).length > 0)
          expect(
            podLabels.filter((labels) => picks(peer.podSelector, labels)).length,
            `${keyOf(policy)}: peer ${JSON.stringify(peer)}`,
          ).toBeGreaterThan(0);
      }
    }

    /** A pod that may connect: the labels of its namespace and its own. */
    interface Source {
      namespace: Record<string, string>;
      labels: Record<string, string> | undefined;
    }
    /**
     * Whether a peer admits a pod: of this namespace (`namespaceLabels` itself) unless it selects
     * namespaces, and of the pods it selects if it selects pods.
     */
    const admits = (peer: INetworkPolicyPeer, source: Source): boolean =>
      (peer.namespaceSelector === undefined ? source.namespace === namespaceLabels : picks(peer.namespaceSelector, source.namespace)) &&
      (peer.podSelector === undefined || picks(peer.podSelector, source.labels));
    /** Whether pods with `labels` accept connections on `port` (a name resolved by `portNumber`) from `source`. */
    const accepts = (
      labels: Record<string, string> | undefined,
      port: number,
      portNumber: (port: string | number) => number | undefined,
      source: Source,
    ): boolean => {
      const isolating = selecting(labels, 'Ingress');
      if (isolating.length === 0) return true;
      return isolating.some((policy) =>
        (policy.spec?.ingress ?? []).some(
          (rule) =>
            // No ports, or no peers (missing or empty), is every port, or every source.
            (!rule.ports?.length || rule.ports.some((p) => p.port === undefined || portNumber(p.port) === port)) &&
            (!rule.from?.length || rule.from.some((peer) => admits(peer, source))),
        ),
      );
    };

    // Who connects: each workload; the Gateway's pods here; a pod of a namespace labelled for a
    // gateway's proxies (as Envoy Gateway runs them, in its own namespace); a pod of any other namespace.
    const front = frontDoor[stack];
    const sources: Record<string, Source> = {
      ...Object.fromEntries(workloads.map((w) => [w.metadata.name, { namespace: namespaceLabels, labels: labelsOf(w) }])),
      "the Gateway's pods": { namespace: namespaceLabels, labels: gatewayPods },
      'a labelled namespace': {
        namespace: { 'kubernetes.io/metadata.name': 'gateway-system', [gatewayNamespaceLabel]: 'true' },
        labels: {},
      },
      'another namespace': { namespace: { 'kubernetes.io/metadata.name': 'elsewhere' }, labels: {} },
    };
    const fromGateway = (from: string) => from === "the Gateway's pods" || from === 'a labelled namespace';
    // Whom: the manifest's links, the members whose compose DATABASE_URL names db, the front door
    // from the Gateway, and the proxy from anyone of its namespace (its clients inside the cluster).
    const usesDb = (as: string) => /@db:/.test(environmentOf(compose[as] ?? {}).DATABASE_URL ?? '');
    const calls = (from: string, to: string): boolean =>
      (to === 'proxy' && sources[from]?.namespace === namespaceLabels) ||
      (to === front && fromGateway(from)) ||
      Object.values(members.find((m) => m.as === from)?.links ?? {}).includes(to) ||
      (to === 'db' && usesDb(from));
    for (const target of workloads) {
      const to = target.metadata.name;
      const publicPort = to === 'db' ? 5432 : portOf(to);
      const container = containerOf(target);
      const ports = (container.ports ?? []).map((p) => p.containerPort);
      expect(ports, `${to}: its public port`).toContain(publicPort);
      for (const port of ports)
        for (const [from, source] of Object.entries(sources).filter(([from]) => from !== to))
          expect(
            accepts(labelsOf(target), port, (p) => containerPort(container, p), source),
            `${from} -> ${to}:${port}`,
          ).toBe(port === publicPort && calls(from, to));
    }
    // The Gateway's pods are the door: anyone, on whichever port its implementation gives the
    // listener (80 itself, or a mapped one such as Envoy Gateway's 10080).
    for (const [from, source] of Object.entries(sources))
      for (const port of [80, 10080])
        expect(
          accepts(gatewayPods, port, (p) => (typeof p === 'number' ? p : undefined), source),
          `${from} -> the Gateway:${port}`,
        ).toBe(true);
    // PostgreSQL opens no connection of its own: isolated for egress, with nothing allowed.
    if (withDb) {
      const egress = selecting(labelsOf(k8s.one<IStatefulSet>('StatefulSet', 'db')), 'Egress');
      expect(egress.length).toBeGreaterThan(0);
      expect(egress.flatMap((p) => p.spec?.egress ?? [])).toEqual([]);
    }
  });

  if (withDb)
    it("runs compose's PostgreSQL as the StatefulSet `db`, with its image, data path, credentials and health check", () => {
      const db = compose.db as ComposeDb;
      const statefulSet = k8s.one<IStatefulSet>('StatefulSet', 'db');
      const container = containerOf(statefulSet);
      expect(container.image).toBe(db.image);
      // The data on a claim per replica, mounted where compose mounts its named volume.
      const [volume, path] = (db.volumes[0] ?? '').split(':');
      const claims = statefulSet.spec?.volumeClaimTemplates ?? [];
      expect(claims.map((c) => c.metadata?.name)).toEqual([volume]);
      expect(container.volumeMounts?.find((m) => m.name === volume)?.mountPath).toBe(path);
      expect(statefulSet.spec?.replicas).toBe(1);
      expect(statefulSet.spec?.serviceName).toBe('db');
      // The port in compose's DATABASE_URL is db's Service port.
      const url = new URL(
        withDefaults(environmentOf(compose[members.find((m) => m.service !== 'frontend')?.as ?? ''] ?? {}).DATABASE_URL ?? ''),
      );
      expect(url.hostname).toBe('db');
      const service = k8s.one<IService>('Service', 'db');
      expect(service.spec?.ports?.map((p) => [p.port, containerPort(container, p.targetPort)])).toEqual([[Number(url.port), 5432]]);
      expect(selects(service.spec?.selector, statefulSet.spec?.template.metadata?.labels)).toBe(true);
      // compose's variables: its files (the password's) as they are, the others from the Secret under
      // their own names; and PGDATA (see base/postgres), nothing else.
      const env = envOf(container);
      const secret = env.POSTGRES_USER?.valueFrom?.secretKeyRef?.name;
      const composeEnv = environmentOf(db);
      expect(composeEnv.POSTGRES_PASSWORD_FILE).toBeDefined();
      for (const [name, value] of Object.entries(composeEnv)) {
        if (name.endsWith('_FILE')) expect(env[name], name).toEqual({ name, value });
        else expect(env[name], name).toEqual({ name, valueFrom: { secretKeyRef: { name: secret, key: name } } });
      }
      expect(Object.keys(env).sort()).toEqual([...Object.keys(composeEnv), 'PGDATA'].sort());
      expect(secretFileOf(statefulSet, composeEnv.POSTGRES_PASSWORD_FILE ?? '')?.secretName).toBe(secret);
      // compose's pg_isready, with its timings, for readiness and liveness; and every start interval
      // for its start period, for startup. Readiness and liveness begin once startup passes, so
      // without a delay.
      const { test, interval, timeout, retries, start_period: startPeriod, start_interval: startInterval } = db.healthcheck;
      const command = (test[1] ?? '').replaceAll('$$', '$');
      const { startupProbe: startup, readinessProbe: readiness, livenessProbe: liveness } = container;
      expect(startup, 'startupProbe').toBeDefined();
      for (const probe of [startup, readiness, liveness]) expect(probe?.exec?.command).toEqual(['sh', '-c', command]);
      expect(timingsOf(startup)).toEqual({
        initialDelaySeconds: 0,
        periodSeconds: seconds(startInterval),
        timeoutSeconds: seconds(timeout),
        failureThreshold: Math.ceil(seconds(startPeriod) / seconds(startInterval)),
      });
      for (const probe of [readiness, liveness]) {
        expect(timingsOf(probe)).toEqual({
          initialDelaySeconds: 0,
          periodSeconds: seconds(interval),
          timeoutSeconds: seconds(timeout),
          failureThreshold: retries,
        });
      }
    });

  it("mounts each *_FILE variable's file from one key of a Secret: read-only, readable through fsGroup, by nobody else", () => {
    for (const workload of [...k8s.all<IDeployment>('Deployment'), ...k8s.all<IStatefulSet>('StatefulSet')]) {
      const name = keyOf(workload);
      const pod = podSpecOf(workload);
      const files = (containerOf(workload).env ?? []).filter((e) => e.name.endsWith('_FILE')).map((e) => e.value ?? '');
      for (const path of files) {
        const file = secretFileOf(workload, path);
        expect(file, `${name}: ${path}`).toBeDefined();
        expect(file?.readOnly, `${name}: ${path} read-only`).toBe(true);
        // root owns a secret's files, in the group fsGroup: the pod's user (not root) reads them
        // through that group, and nobody else reads or writes them.
        expect(pod.securityContext?.fsGroup, `${name}: fsGroup`).toBeDefined();
        expect((file?.mode ?? 0) & 0o077, `${name}: ${path} mode`).toBe(0o040);
      }
      // A secret volume holds the keys it names (items), each the file of one of those variables, and no other.
      const mounts = containerOf(workload).volumeMounts ?? [];
      for (const volume of (pod.volumes ?? []).filter((v) => v.secret !== undefined)) {
        const at = mounts.filter((m) => m.name === volume.name).map((m) => m.mountPath);
        const projected = at.flatMap((dir) => (volume.secret?.items ?? []).map((item) => `${dir}/${item.path}`));
        expect(volume.secret?.items?.length, `${name}: ${volume.name} items`).toBeGreaterThan(0);
        expect(
          projected.filter((path) => !files.includes(path)),
          `${name}: ${volume.name}`,
        ).toEqual([]);
      }
    }
  });

  it("keeps every password out of the environment: a Secret's file, generated from the user's file or created by the user", () => {
    // compose's local example password (its secret db-password's default file), in the stacks with a database.
    const composePasswordFile = composeSecretFiles(`deploy/compose/compose.${stack}.yml`)['db-password'];
    expect(composePasswordFile !== undefined, 'compose has the secret db-password').toBe(hasDb(stack));
    const composePassword = composePasswordFile === undefined ? undefined : secretFileValue(composePasswordFile);
    const variables: { name: string; key: string }[] = [];
    const files: { name: string; key: string }[] = [];
    for (const workload of [...k8s.all<IDeployment>('Deployment'), ...k8s.all<IStatefulSet>('StatefulSet')]) {
      for (const e of containerOf(workload).env ?? []) {
        const label = `${keyOf(workload)}: ${e.name}`;
        if (e.valueFrom?.secretKeyRef !== undefined)
          variables.push({ name: e.valueFrom.secretKeyRef.name ?? '', key: e.valueFrom.secretKeyRef.key });
        // No password variable, no URL with a password, neither compose's example password nor the
        // user's anywhere.
        expect(e.name, label).not.toMatch(/PASSWORD$/);
        expect(/:\/\/[^/@]*:[^/@]*@/.test(e.value ?? ''), `${label}: a URL with a password`).toBe(false);
        if (composePassword !== undefined) expect(e.value ?? '', label).not.toBe(composePassword);
        for (const password of passwords.values()) expect(e.value ?? '', label).not.toContain(password.trim());
        if (e.name.endsWith('_FILE')) {
          const file = secretFileOf(workload, e.value ?? '');
          files.push({ name: file?.secretName ?? '', key: file?.key ?? '' });
        }
      }
    }
    const unique = (refs: { name: string; key: string }[]) => [...new Set(refs.map((r) => `${r.name}/${r.key}`))].sort();
    const secrets = k8s.all<ISecret>('Secret');
    if (external) {
      // The user creates `database-url` (kustomization.yaml says how): no Secret here, nothing to leak.
      expect(secrets).toEqual([]);
      expect(variables).toEqual([]);
      expect(unique(files)).toEqual(['database-url/DATABASE_URL']);
      return;
    }
    expect(secrets.length).toBe(withDb ? 1 : 0);
    for (const { name, key } of [...variables, ...files]) {
      const secret = secrets.find((s) => s.metadata.name === name);
      expect(secret?.data?.[key], `${name}/${key}`).toBeDefined();
    }
    if (!withDb) return;
    // One key is the password, read only as a file; the others (user, database) may be variables.
    const passwordKeys = [...new Set(files.map((f) => f.key))];
    expect(passwordKeys).toHaveLength(1);
    expect(variables.map((v) => v.key)).not.toContain(passwordKeys[0]);
    const values = Object.fromEntries(Object.entries(secrets[0]?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    // example.env's user, compose's default database name, and the password as the user's file holds
    // it, byte for byte (its trailing newline too, which PostgreSQL and the services drop as they read it).
    const db = environmentOf(compose.db ?? {});
    const passwordFiles = passwordFilesOf(overlay);
    expect(passwordFiles).toHaveLength(1);
    expect(values).toEqual({
      POSTGRES_USER: exampleEnv.POSTGRES_USER,
      [passwordKeys[0] ?? '']: passwords.get(passwordFiles[0] ?? ''),
      POSTGRES_DB: withDefaults(db.POSTGRES_DB ?? ''),
    });
  });
});

describe.skipIf(skipOverlays)("deploy/kubernetes/local: docs/operations.md's own kustomizations, on each overlay", () => {
  /** The one shown that deletes the stack's Gateway (a Gateway the cluster has), and the one that sets a class. */
  const ownGateway = localKustomizations.findIndex((text) => text.includes('$patch: delete'));
  const ownClass = localKustomizations.findIndex((text) => !text.includes('$patch: delete'));

  it("shows two, each on the simple overlay: your class for the stack's Gateway, and your Gateway for its HTTPRoute alone", () => {
    expect(localKustomizations).toHaveLength(2);
    expect([ownGateway, ownClass].sort()).toEqual([0, 1]);
    for (const text of localKustomizations) expect(text).toContain('../../overlays/simple');
  });

  describe.each(overlays)('on overlays/%s', (overlay) => {
    const full = renderedOverlays.get(overlay) as Rendered;
    const isGatewayItself = (o: KubeObject) => o.kind === 'Gateway' || (o.kind === 'NetworkPolicy' && o.metadata.name === 'gateway');

    it("gives the stack's Gateway your class, and changes nothing else", () => {
      const local = localRenders.get(`${overlay}-${ownClass}`) as Rendered;
      const [change, ...more] = jsonPatchesOf(localKustomizations[ownClass] ?? '');
      expect(more).toEqual([]);
      expect(change).toMatchObject({ op: 'replace', path: '/spec/gatewayClassName' });
      const gateway = local.one<IGateway>('Gateway', 'gateway');
      expect(gateway.spec.gatewayClassName).toBe(change?.value);
      expect(gateway.spec.gatewayClassName).not.toBe(full.one<IGateway>('Gateway', 'gateway').spec.gatewayClassName);
      const withClass = (o: KubeObject) =>
        o.kind === 'Gateway' ? { ...o, spec: { ...(o as IGateway & KubeObject).spec, gatewayClassName: change?.value } } : o;
      expect(local.objects).toEqual(full.objects.map(withClass));
    });

    it('renders its HTTPRoute alone on your Gateway: no Gateway of its own, the rest as the overlay renders it', async () => {
      const local = localRenders.get(`${overlay}-${ownGateway}`) as Rendered;
      const [change, ...more] = jsonPatchesOf(localKustomizations[ownGateway] ?? '');
      expect(more).toEqual([]);
      expect(change).toMatchObject({ op: 'replace', path: '/spec/parentRefs' });
      expect(local.objects.filter(isGatewayItself).map(keyOf)).toEqual([]);
      const [route, ...otherRoutes] = local.all<IHTTPRoute>('HTTPRoute');
      expect(otherRoutes).toEqual([]);
      // Your Gateway is in another namespace, so each reference names it.
      expect(route?.spec.parentRefs).toEqual(change?.value);
      for (const ref of route?.spec.parentRefs ?? []) expect(ref.namespace, `${ref.name}: namespace`).toMatch(/^\S+$/);
      await validators['gateway.networking.k8s.io/v1/HTTPRoute']?.(route as KubeObject);
      const withRefs = (o: KubeObject) =>
        o.kind === 'HTTPRoute' ? { ...o, spec: { ...(o as IHTTPRoute & KubeObject).spec, parentRefs: change?.value } } : o;
      expect(local.objects).toEqual(full.objects.filter((o) => !isGatewayItself(o)).map(withRefs));
    });
  });
});

/** docs/https.md's kustomization adding components/gateway-https, rendered on each overlay as a user writes it. */
const httpsKustomization = /```yaml\n(# deploy\/kubernetes\/local\/https\/[\s\S]*?)```/.exec(readRepoFile('docs/https.md'))?.[1] ?? '';
const httpsRenders = new Map(
  await Promise.all(
    overlays.map(async (overlay) => {
      const dir = copyPath(`deploy/kubernetes/local/https-${overlay}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'kustomization.yaml'), httpsKustomization.replaceAll('../../overlays/simple', `../../overlays/${overlay}`));
      const result = await kubectlKustomize(dir).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
      return [overlay, rendered(`local/https-${overlay}`, result)] as const;
    }),
  ),
);

describe.skipIf(skipOverlays)("components/gateway-https: docs/https.md's kustomization, on each overlay", () => {
  it('is shown on the simple overlay, adding the component', () => {
    expect(httpsKustomization).toContain('../../overlays/simple');
    expect(parse(httpsKustomization)).toMatchObject({ components: ['../../components/gateway-https'] });
  });

  describe.each(overlays)('on overlays/%s', (overlay) => {
    it("adds an HTTPS listener on 443 with the TLS Secret to the stack's Gateway, valid by its schema, and changes nothing else", async () => {
      const full = renderedOverlays.get(overlay) as Rendered;
      const local = httpsRenders.get(overlay) as Rendered;
      const gateway = local.one<IGateway>('Gateway', 'gateway');
      await validators['gateway.networking.k8s.io/v1/Gateway']?.(gateway);
      const before = full.one<IGateway>('Gateway', 'gateway');
      expect(gateway.spec.listeners).toEqual([
        ...before.spec.listeners,
        {
          name: 'https',
          protocol: 'HTTPS',
          port: 443,
          tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'sample-services-tls' }] },
          allowedRoutes: { namespaces: { from: 'Same' } },
        },
      ]);
      // The HTTPRoute names the Gateway as a whole, so it attaches to the new listener as well.
      expect(local.all<IHTTPRoute>('HTTPRoute').flatMap((route) => route.spec.parentRefs ?? [])).toEqual([{ name: 'gateway' }]);
      const withListener = (o: KubeObject) => (o.kind === 'Gateway' ? gateway : o);
      expect(local.objects).toEqual(full.objects.map(withListener));
    });
  });
});
