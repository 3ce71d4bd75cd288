// main: the composition root of `npm start`: configuration from the environment → server.
import { loadConfig } from "./config.ts";
import { startServer } from "./server.ts";

try {
  await startServer(loadConfig());
} catch (e) {
  console.error(`sluice: cannot start: ${(e as Error).message}`);
  process.exit(1);
}
