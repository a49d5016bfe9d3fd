// node:fs for the browser harness: the vectors were fetched before the runner was loaded.
const files = () => globalThis.__SNOWMINT_VECTORS || {};
export function readdirSync() {
  return Object.keys(files());
}
export function readFileSync(p) {
  const name = String(p).split('/').pop();
  if (!(name in files())) throw new Error(`ENOENT: ${p}`);
  return files()[name];
}
