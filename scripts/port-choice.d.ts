export function portProblem(port: number, host: string): Promise<'needs more privileges' | 'is already in use' | undefined>;
export function nearbyFreePort(port: number, host: string, reserved?: ReadonlySet<number>): Promise<number>;
