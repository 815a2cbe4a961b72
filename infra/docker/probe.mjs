// Container health probe: `node probe.mjs [path]` exits 0 when this container's service answers 2xx on
// the path (default /healthz), else 1. The image's HEALTHCHECK uses /healthz, docker-compose /readyz
// (so the edge starts once account and relay are ready). Docker's probe timeout bounds the wait.
const defaultPorts = { edge: 3000, relay: 3001, account: 3002, worker: 3003 };
const service = process.env.MODELGATE_SERVICE ?? '';
const path = process.argv[2] ?? '/healthz';

if (!(service in defaultPorts)) {
  // The migrate image is a one-shot job with no HTTP server: nothing to probe while it runs.
  process.exit(0);
}
const port = process.env[`${service.toUpperCase()}_PORT`] || defaultPorts[service];
try {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
