import { commonContract } from '@sample-services/testing/contract/common';
import { simpleContract } from '@sample-services/testing/contract/simple';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe } from 'vitest';
import { createSimpleApp } from '../src/app.js';

describe('variant A in-process, listening on an ephemeral port', () => {
  let app: FastifyInstance;
  let baseUrl: string;
  beforeAll(async () => {
    app = createSimpleApp({ logger: false, environment: 'production' });
    baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());

  simpleContract(() => baseUrl, { environment: 'production' });
  commonContract(() => baseUrl);
});
