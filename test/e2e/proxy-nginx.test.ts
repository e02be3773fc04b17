import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commonContract } from '@sample-services/testing/contract/common';
import { proxyContract } from '@sample-services/testing/contract/proxy';
import { simpleContract } from '@sample-services/testing/contract/simple';
import { startEchoUpstream, type EchoUpstream } from '@sample-services/testing/echo-upstream';
import { nginxInstalled, startNginx, type NginxProcess } from '@sample-services/testing/nginx';
import { repoRoot } from '@sample-services/testing/repo-root';
import { startService, type ServiceProcess } from '@sample-services/testing/service-process';

// nginx is optional on a workstation, never in CI: there its absence is a failure.
const available = nginxInstalled();
if (!available && process.env.CI !== 'true') {
  console.warn('SKIPPED: nginx is not installed (apt-get install nginx-light); deploy/nginx/nginx.conf was not tested.');
}
const suite = available || process.env.CI === 'true' ? describe : describe.skip;

describe('deploy/nginx/nginx.conf', () => {
  // The original's `upstream app { server web:3000; }` resolved `web` once, at start-up: its one
  // defect (scaled or recreated replicas unreachable until a restart). Its upstream is kept, in a
  // variable that nginx resolves as it runs.
  it("keeps the spec's lines: upstream web:3000, port 80, server name, 1024 connections, the three headers", async () => {
    const config = await readFile(join(repoRoot, 'deploy/nginx/nginx.conf'), 'utf8');
    for (const line of [
      'worker_connections 1024;',
      'set $upstream web:3000;',
      'listen 80;',
      'server_name localhost;',
      'proxy_set_header Host $host;',
      'proxy_set_header X-Real-IP $remote_addr;',
      'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
      'proxy_set_header X-Forwarded-Proto $scheme;',
    ]) {
      expect(config).toContain(line);
    }
  });
});

suite('nginx with deploy/nginx/nginx.conf, in front of the echo upstream', () => {
  let upstream: EchoUpstream;
  let nginx: NginxProcess;
  beforeAll(async () => {
    expect(available, 'nginx must be installed when CI=true').toBe(true);
    upstream = await startEchoUpstream();
    nginx = await startNginx({ upstreamPort: upstream.port, upstreamTimeout: '2s' });
  });
  afterAll(async () => {
    await nginx?.stop();
    await upstream?.close();
  });

  proxyContract({ baseUrl: () => nginx.baseUrl, upstream: () => upstream, upstreamKeepAlive: false });
});

suite('variant A behind nginx', () => {
  let web: ServiceProcess;
  let nginx: NginxProcess;
  beforeAll(async () => {
    expect(available, 'nginx must be installed when CI=true').toBe(true);
    web = await startService('simple');
    nginx = await startNginx({ upstreamPort: web.port });
  });
  afterAll(async () => {
    await nginx?.stop();
    await web?.stop();
  });

  simpleContract(() => nginx.baseUrl, { environment: 'production' });
  commonContract(() => nginx.baseUrl);
});
