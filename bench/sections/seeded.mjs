// A seeded all-in-one server: `bench/seed.mjs <kind>` fills a temp DATA_DIR in its own process,
// then the all-in-one server starts on it (loading every document, as after a restart).
import { join } from 'node:path';
import { JWT_SECRET } from '../lib.mjs';

/**
 * Seeds `kind` into a fresh dir of `scope` and starts the all-in-one server; returns {seed, base}.
 * `root`: the checkout whose seeder and server run (its own build; '' = this one).
 */
export async function seedDir(scope, kind, root = '') {
  const dir = scope.tempDir(`bench-${kind}-`);
  const seeder = await scope.process(join(root, 'bench/seed.mjs'), { args: [kind, dir] });
  await seeder.stop(); // it exits by itself after READY; this waits for that
  const server = await scope.process(join(root, 'bench/servers/all-in-one.mjs'), { env: { DATA_DIR: dir, JWT_SECRET } });
  return { seed: { ...seeder.info, loadMs: server.info.loadMs }, base: `http://127.0.0.1:${server.info.port}` };
}
