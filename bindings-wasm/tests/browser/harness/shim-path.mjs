// node:path for the browser harness.
export function join(...parts) {
  return parts.join('/');
}
