import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { compose, dockerBin, probe, repoRoot, waitFor } from './docker.js';

/** Runs one of deploy/'s scripts with the stage's client; resolves its stdout, rejects with its output on a non-zero exit. */
export function runScript(script: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      join(repoRoot, script),
      args,
      { env: { ...process.env, DOCKER: dockerBin, DOCKER_COMPOSE: `${dockerBin} compose` }, timeout: 300_000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${script} failed: ${error.message}\n${stdout}${stderr}`)) : resolve(stdout.trim()),
    );
  });
}

/**
 * Compose options of a project of deploy/compose/compose.database.yml with this run's images, its own
 * POSTGRES_USER and password file, and free loopback ports; its env and password files go in `dir`.
 */
export async function databaseProject(dir: string, project: string, user: string, tag: string): Promise<string[]> {
  const passwordFile = join(dir, `${project}-password`);
  // Readable by uid 1000, which reads the bind-mounted secret in web.
  await writeFile(passwordFile, `${randomBytes(12).toString('hex')}\n`, { mode: 0o644 });
  const envFile = join(dir, `${project}.env`);
  const settings = [
    `TAG=${tag}`,
    `POSTGRES_USER=${user}`,
    `DB_PASSWORD_FILE=${passwordFile}`,
    'WEB_PORT=127.0.0.1:0',
    'DB_PORT=127.0.0.1:0',
  ];
  await writeFile(envFile, `${settings.join('\n')}\n`);
  return ['--env-file', envFile, '-p', project, '-f', join(repoRoot, 'deploy/compose/compose.database.yml')];
}

/** The URL of web's published port in a project (a new one after each start: WEB_PORT=127.0.0.1:0). */
export const webUrl = async (options: string[]): Promise<string> => `http://${await compose([...options, 'port', 'web', '5000'])}`;

/** Polls until GET <url>/ready answers 200: the service reaches its database. */
export const ready = (urls: string[]): Promise<true> =>
  waitFor(
    `${urls.join(', ')} to be ready`,
    async () => (await Promise.all(urls.map(async (url) => (await probe(`${url}/ready`)).status))).every((s) => s === 200) || undefined,
    120_000,
    250,
  );
