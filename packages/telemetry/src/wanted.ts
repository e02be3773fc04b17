/** Traces are exported: an OTLP endpoint is set, and the SDK is not disabled (OTEL_SDK_DISABLED, case aside). */
export function tracingWanted(env: Readonly<Record<string, string | undefined>>): boolean {
  const endpoints = [env.OTEL_EXPORTER_OTLP_ENDPOINT, env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT];
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
  return !disabled && endpoints.some((endpoint) => Boolean(endpoint?.trim()));
}
