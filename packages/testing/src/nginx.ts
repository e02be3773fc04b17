import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { repoRoot } from './repo-root.js';

/** The nginx binary: on PATH, or where Debian puts it (/usr/sbin is not on a normal user's PATH). */
const nginxBinary = ['nginx', '/usr/sbin/nginx'].find((command) => spawnSync(command, ['-v'], { stdio: 'ignore' }).status === 0);

/** Whether nginx is installed (Debian's nginx-light is enough). */
export function nginxInstalled(): boolean {
  return nginxBinary !== undefined;
}

export interface NginxProcess {
  baseUrl: string;
  /** With options.https: nginx's HTTPS base URL (https://127.0.0.1:<port>). */
  httpsUrl: string | undefined;
  /** Stops nginx (SIGQUIT: graceful) and removes its temporary directory. */
  stop: () => Promise<void>;
}

export interface NginxOptions {
  /** The echo upstream's (or any server's) port on 127.0.0.1, in place of web:3000. */
  upstreamPort: number;
  /** proxy_connect_timeout and proxy_read_timeout, in place of 60s, e.g. '500ms'. */
  upstreamTimeout?: string;
  /** deploy/nginx/https.conf included, with these files in place of /etc/nginx/certs and a free port for 443. */
  https?: { certFile: string; keyFile: string; hstsMaxAge?: number };
}

export interface NginxHttps {
  /** Where deploy/nginx/https.conf listens, in place of 443. */
  port: number;
  config: string;
  /** What deploy/nginx/https-settings.sh wrote for that port and options.https, in place of /run/nginx-https/. */
  settingsFile: string;
}

/** Replaces one exact text, failing loudly when deploy/nginx/nginx.conf no longer has it. */
function swap(config: string, from: string, to: string): string {
  const parts = config.split(from);
  if (parts.length !== 2) throw new Error(`deploy/nginx/nginx.conf must contain "${from}" exactly once`);
  return parts.join(to);
}

/**
 * The deployed config with only what a test must change: the upstream, the listen port, the
 * timeouts when asked, and the pid, temp and log files in a temporary directory, so that it
 * runs without root and without touching /var.
 */
export function deriveNginxConfig(config: string, dir: string, port: number, options: NginxOptions, https?: NginxHttps): string {
  // An address needs no resolver: Docker's DNS (127.0.0.11) is not there outside a container.
  let derived = swap(config, 'set $upstream web:3000;', `set $upstream 127.0.0.1:${options.upstreamPort};`);
  derived = swap(derived, 'listen 80;', `listen 127.0.0.1:${port};`);
  if (options.upstreamTimeout !== undefined) {
    derived = swap(derived, 'proxy_connect_timeout 1s;', `proxy_connect_timeout ${options.upstreamTimeout};`);
    derived = swap(derived, 'proxy_read_timeout 60s;', `proxy_read_timeout ${options.upstreamTimeout};`);
  }
  if (https !== undefined) derived = swap(derived, 'include /etc/nginx/https.d/*.conf;', deriveHttpsConfig(https, options));
  const paths = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `    ${kind}_temp_path ${join(dir, kind)};`);
  derived = swap(derived, 'http {', ['http {', '    access_log off;', ...paths].join('\n'));
  return `pid ${join(dir, 'nginx.pid')};\nerror_log ${join(dir, 'error.log')} warn;\n${derived}`;
}

/**
 * deploy/nginx/https.conf as deploy/compose/compose.https.yml runs it, with the test's port, certificate files,
 * and the settings deploy/nginx/https-settings.sh wrote (the redirect's port among them).
 */
function deriveHttpsConfig(https: NginxHttps, options: NginxOptions): string {
  const files = options.https;
  if (files === undefined) throw new Error('deriveHttpsConfig needs options.https');
  let derived = swap(https.config, 'listen 443 ssl http2;', `listen 127.0.0.1:${https.port} ssl http2;`);
  derived = swap(derived, 'ssl_certificate /etc/nginx/certs/tls.crt;', `ssl_certificate ${files.certFile};`);
  derived = swap(derived, 'ssl_certificate_key /etc/nginx/certs/tls.key;', `ssl_certificate_key ${files.keyFile};`);
  return swap(derived, 'include /run/nginx-https/*.conf;', `include ${https.settingsFile};`);
}

/** A free port for HTTPS, published as compose.https.yml would (PROXY_HTTPS_PORT), and the script's settings for it. */
async function prepareHttps(dir: string, hstsMaxAge = 0): Promise<NginxHttps> {
  const port = await freePort();
  const settingsFile = join(dir, 'https-settings.conf');
  const run = spawnSync('sh', [join(repoRoot, 'deploy/nginx/https-settings.sh'), settingsFile], {
    env: { ...process.env, PROXY_HTTPS_PORT: `127.0.0.1:${port}`, HSTS_MAX_AGE: String(hstsMaxAge) },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`deploy/nginx/https-settings.sh failed:\n${run.stderr}`);
  return { port, config: await readFile(join(repoRoot, 'deploy/nginx/https.conf'), 'utf8'), settingsFile };
}

/** Runs nginx in the foreground from the derived config on a free 127.0.0.1 port. */
export async function startNginx(options: NginxOptions): Promise<NginxProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'nginx-test-'));
  const port = await freePort();
  const deployed = await readFile(join(repoRoot, 'deploy/nginx/nginx.conf'), 'utf8');
  const configPath = join(dir, 'nginx.conf');
  const https = options.https === undefined ? undefined : await prepareHttps(dir, options.https.hstsMaxAge);
  await writeFile(configPath, deriveNginxConfig(deployed, dir, port, options, https));
  // As root, nginx workers switch to an unprivileged user that must reach the temp dirs.
  const user = process.getuid?.() === 0 ? 'user root;' : '';
  if (nginxBinary === undefined) throw new Error('nginx is not installed (apt-get install nginx-light)');
  const child = spawn(nginxBinary, ['-p', dir, '-c', configPath, '-e', join(dir, 'error.log'), '-g', `daemon off; ${user}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  const baseUrl = `http://127.0.0.1:${port}`;

  // nginx prints nothing when it is ready: poll until it accepts connections.
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      const log = await readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
      await rm(dir, { recursive: true, force: true });
      throw new Error(`nginx exited with ${child.exitCode}:\n${stderr}${log}`);
    }
    if (
      await fetch(`${baseUrl}/`, { method: 'HEAD', redirect: 'manual' }).then(
        () => true,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) throw new Error(`nginx did not accept connections in 10 s:\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    baseUrl,
    httpsUrl: https === undefined ? undefined : `https://127.0.0.1:${https.port}`,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGQUIT');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
