import { loadavg } from 'node:os';

/** The machine's 1-minute load average while a scenario ran: what the figures must be read against. */
export interface LoadAverage {
  min: number;
  max: number;
}

/**
 * Samples the 1-minute load average now, every 10 s and at stop(): the range over a scenario says
 * whether other work shared the cores (on 2 cores, the bench's own processes account for about 2).
 */
export function sampleLoadAverage(): { stop: () => LoadAverage } {
  const samples = [loadavg()[0] ?? 0];
  const timer = setInterval(() => samples.push(loadavg()[0] ?? 0), 10_000).unref();
  return {
    stop: () => {
      clearInterval(timer);
      samples.push(loadavg()[0] ?? 0);
      const round = (value: number): number => Math.round(value * 100) / 100;
      return { min: round(Math.min(...samples)), max: round(Math.max(...samples)) };
    },
  };
}
