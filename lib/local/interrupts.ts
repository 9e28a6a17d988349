/**
 * Ctrl-C in a terminal sends SIGINT to the whole foreground process group: the runtime and every
 * child it started (DynamoDB Local, cognito-local) at once. A child that ends that way has not
 * crashed: the runtime is about to stop, and restarting it would leave a process behind (holding the
 * data folder the next `npm start` opens). The runtime's own signal handler and a child's exit reach
 * the event loop in either order, so a supervisor that sees a child end by an interrupt waits
 * INTERRUPT_GRACE_MS for the shutdown to begin before it treats the exit as a crash.
 */
export const INTERRUPT_GRACE_MS = 2_000;

/** Whether a child ended the way an interrupt ends it: SIGINT/SIGTERM/SIGHUP, or exit 130/143/129. */
export function endedByInterrupt(code: number | null, signal: NodeJS.Signals | null): boolean {
  if (signal === "SIGINT" || signal === "SIGTERM" || signal === "SIGHUP") return true;
  return code === 130 || code === 143 || code === 129;
}

export function graceForInterrupt(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
  const wait = endedByInterrupt(code, signal) ? INTERRUPT_GRACE_MS : 0;
  return new Promise((resolve) => setTimeout(resolve, wait));
}
