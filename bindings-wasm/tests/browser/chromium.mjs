// Headless Debian Chromium for the browser tests and the bench (playwright-core from SNOWMINT_TOOLS):
// one persistent context in `tmp` (its profile, and XDG config and cache dirs there), the flags that keep
// it quiet and offline-friendly on this machine.
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const tools = process.env.SNOWMINT_TOOLS || path.join(root, 'target', 'wasm-work', 'tools', 'node_modules');

/** playwright-core's `chromium`. */
export const { chromium } = createRequire(path.join(tools, 'x.js'))('playwright-core');

/** A persistent headless context with its profile in `tmp`; `options` are added (e.g. `viewport`). */
export function launch(tmp, options = {}) {
  process.env.XDG_CONFIG_HOME = path.join(tmp, 'config');
  process.env.XDG_CACHE_HOME = path.join(tmp, 'cache');
  return chromium.launchPersistentContext(path.join(tmp, 'profile'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    ...options,
  });
}
