// signals: how a server process ends on SIGTERM or SIGINT: cleanly, then with an exit code that says whether it was.

/** exitOnSignal runs `stop` at the first SIGTERM or SIGINT, then exits 0, or 1 if stopping failed. */
export function exitOnSignal(stop: () => Promise<void>): void {
  const onSignal = () =>
    void stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
}
