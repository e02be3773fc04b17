/**
 * The standard OTEL_* variables (OpenTelemetry's SDK configuration) that decide whether traces are
 * exported and how. The OTLP exporter reads its own (endpoint, headers, timeout) from the
 * environment; these are read here too, so a wrong value fails at start-up in one line as every
 * other variable does, and the SDK is loaded only when an endpoint is set (tracing.ts).
 */
import { ConfigError, readChoice, readInt, readString, type Env } from './config.js';

export type OtlpProtocol = 'http/protobuf' | 'http/json';
const protocols: readonly OtlpProtocol[] = ['http/protobuf', 'http/json'];

const samplers = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof samplers)[number];

export interface TracingConfig {
  /** An OTLP endpoint is set and OTEL_SDK_DISABLED is not true: the SDK is loaded and spans exported. */
  enabled: boolean;
  protocol: OtlpProtocol;
  /** OTEL_SERVICE_NAME, default the service's manifest name. */
  serviceName: string;
  sampler: SamplerName;
  /** The ratio of the traceidratio samplers, from 0 to 1. */
  samplerRatio: number;
  /** OTEL_BSP_*: the batch span processor's delay, queue, batch and export timeout. */
  batch: { scheduledDelayMillis: number; maxQueueSize: number; maxExportBatchSize: number; exportTimeoutMillis: number };
}

function readRatio(env: Env, name: string): number {
  const value = readString(env, name, '1');
  const ratio = /^\d*\.?\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(ratio >= 0 && ratio <= 1)) throw new ConfigError(`${name} must be a number from 0 to 1, got "${value}"`);
  return ratio;
}

/** The OTEL_* variables every service reads; every one is looked up whatever is set (README's table is checked so). */
export function readTracingConfig(env: Env, defaultServiceName: string): TracingConfig {
  const endpoint = readString(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', '');
  const tracesEndpoint = readString(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', '');
  const disabled = readChoice(env, 'OTEL_SDK_DISABLED', 'false', ['true', 'false']) === 'true';
  const protocol = readChoice(env, 'OTEL_EXPORTER_OTLP_PROTOCOL', 'http/protobuf', protocols) as OtlpProtocol;
  return {
    enabled: !disabled && (endpoint !== '' || tracesEndpoint !== ''),
    protocol: readChoice(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', protocol, protocols) as OtlpProtocol,
    serviceName: readString(env, 'OTEL_SERVICE_NAME', defaultServiceName),
    sampler: readChoice(env, 'OTEL_TRACES_SAMPLER', 'parentbased_always_on', samplers) as SamplerName,
    samplerRatio: readRatio(env, 'OTEL_TRACES_SAMPLER_ARG'),
    batch: {
      scheduledDelayMillis: readInt(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000, 0, 3_600_000),
      maxQueueSize: readInt(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2_048, 1, 1_000_000),
      maxExportBatchSize: readInt(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1, 1_000_000),
      exportTimeoutMillis: readInt(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000, 1, 3_600_000),
    },
  };
}
