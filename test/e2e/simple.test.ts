import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commonContract } from '@sample-services/testing/contract/common';
import { simpleContract } from '@sample-services/testing/contract/simple';
import { freePort } from '@sample-services/testing/free-port';
import { runServiceToExit, startService, type ServiceProcess } from '@sample-services/testing/service-process';

describe('variant A as a real process', () => {
  let service: ServiceProcess;
  beforeAll(async () => {
    service = await startService('simple', { NODE_ENV: 'production' });
  });
  afterAll(async () => {
    await service.stop();
  });

  simpleContract(() => service.baseUrl, { environment: 'production' });
  commonContract(() => service.baseUrl);

  it('logs the original start-up line as JSON in production', () => {
    const started = service.lines.map((l) => JSON.parse(l) as { msg: string }).find((l) => l.msg.startsWith('Server running'));
    expect(started?.msg).toBe(`Server running on port ${service.port}`);
  });
});

describe('variant A start-up and shutdown', () => {
  it.each([
    ['abc', 'PORT must be an integer from 0 to 65535, got "abc"'],
    ['70000', 'PORT must be an integer from 0 to 65535, got "70000"'],
    ['-1', 'PORT must be an integer from 0 to 65535, got "-1"'],
  ])('PORT=%s stops the process with exit 1 and one line naming PORT', async (port, message) => {
    const { code, output } = await runServiceToExit('simple', { PORT: port });
    expect(code).toBe(1);
    expect(output).toBe(`simple: invalid configuration: ${message}\n`);
  });

  it('a port already in use is one line naming the port and PORT', async () => {
    const first = await startService('simple');
    try {
      const { code, output } = await runServiceToExit('simple', { PORT: String(first.port) });
      expect(code).toBe(1);
      expect(output).toBe(`simple: port ${first.port} is already in use; set PORT to another port\n`);
    } finally {
      await first.stop();
    }
  });

  it('reports development as the environment when NODE_ENV is unset', async () => {
    // Development logs readable lines, without the JSON start-up line: the port is chosen here.
    const service = await startService('simple', { NODE_ENV: '' }, { port: await freePort() });
    try {
      const body = (await (await fetch(`${service.baseUrl}/health`)).json()) as { environment: string };
      expect(body.environment).toBe('development');
    } finally {
      await service.stop();
    }
  });

  it('exits 0 on SIGTERM and on SIGINT', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const service = await startService('simple');
      expect(await service.stop(signal)).toBe(0);
    }
  });
});
