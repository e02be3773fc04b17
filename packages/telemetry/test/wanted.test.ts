import { describe, expect, it } from 'vitest';
import { tracingWanted } from '../src/wanted.js';

describe('the preload loads the SDK only with an OTLP endpoint, unless OTEL_SDK_DISABLED is true', () => {
  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' }, true],
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: ' ', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces', OTEL_SDK_DISABLED: ' TRUE ' }, false],
  ])('with %o: %s', (env, wanted) => {
    expect(tracingWanted(env)).toBe(wanted);
  });
});
