import { isIPv6 } from "node:net";

const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);

/**
 * The URL on which this machine reaches a server listening on `host:port`. A wildcard host
 * listens on every address, loopback included, and browsers refuse to open 0.0.0.0 itself; any
 * other host is the only address the server answers on, so a fixed 127.0.0.1 would miss it.
 */
export function localServerUrl(host: string, port: number): string {
  if (WILDCARD_HOSTS.has(host)) return `http://127.0.0.1:${port}`;
  return `http://${isIPv6(host) ? `[${host}]` : host}:${port}`;
}
