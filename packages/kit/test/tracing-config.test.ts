import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/index.js';
import { readTracingConfig } from '../src/tracing-config.js';

describe('the OTEL_* variables', () => {
  it('leave tracing off without an OTLP endpoint, with the SDK defaults and the manifest name', () => {
    expect(readTracingConfig({}, 'simple')).toEqual({
      enabled: false,
      protocol: 'http/protobuf',
      serviceName: 'simple',
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      batch: { scheduledDelayMillis: 5000, maxQueueSize: 2048, maxExportBatchSize: 512, exportTimeoutMillis: 30000 },
    });
  });

  it('turn tracing on with either endpoint, unless OTEL_SDK_DISABLED is true', () => {
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, 'simple').enabled).toBe(true);
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, 'simple').enabled).toBe(true);
    const disabled = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' };
    expect(readTracingConfig(disabled, 'simple').enabled).toBe(false);
  });

  it('read the protocol (the traces one first), service name, sampler and batch settings', () => {
    const config = readTracingConfig(
      {
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'web',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.01',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
      'simple',
    );
    expect(config).toMatchObject({ protocol: 'http/json', serviceName: 'web', sampler: 'parentbased_traceidratio', samplerRatio: 0.01 });
    expect(config.batch.scheduledDelayMillis).toBe(100);
  });

  it.each([
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc'],
    ['OTEL_TRACES_SAMPLER', 'sometimes'],
    ['OTEL_TRACES_SAMPLER_ARG', '1.5'],
    ['OTEL_TRACES_SAMPLER_ARG', 'half'],
    ['OTEL_SDK_DISABLED', 'yes'],
    ['OTEL_BSP_MAX_QUEUE_SIZE', '0'],
  ])('refuse %s=%s in one line naming the variable', (name, value) => {
    expect(() => readTracingConfig({ [name]: value }, 'simple')).toThrow(ConfigError);
    expect(() => readTracingConfig({ [name]: value }, 'simple')).toThrow(name);
  });
});
