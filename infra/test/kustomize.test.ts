// infra/k8s rendered offline by `kubectl kustomize` (kubectl from Debian's kubernetes-client package is
// enough: .ci/run installs it when missing), then checked object by object.
import { execFileSync } from 'node:child_process';
import { canConnect, isIsolated, selects, type Endpoint, type NetworkPolicy } from './network-policy';
import {
  envFileKeys,
  METRICS_PORTS,
  METRICS_SERVICES,
  nodeRuntime,
  parseDockerfile,
  parseYamlDocuments,
  readRepoFile,
  repoPath,
  SERVICE_PORTS,
  SERVICES,
  type ServiceName,
} from './support';

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

interface Probe {
  httpGet?: { path: string; port: string | number };
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  ports?: { name: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
}

interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  terminationGracePeriodSeconds?: number;
  restartPolicy?: string;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
}

interface Workload extends K8sObject {
  spec: {
    replicas?: number;
    ttlSecondsAfterFinished?: number;
    selector?: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
  };
}

const rendered = parseYamlDocuments<K8sObject>(
  execFileSync('kubectl', ['kustomize', repoPath('infra', 'k8s')], { encoding: 'utf8', timeout: 60_000 }),
);

function find<T extends K8sObject = K8sObject>(kind: string, name: string): T {
  const found = rendered.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`${kind}/${name} is not rendered`);
  return found as T;
}

const deployments = SERVICES.map((name) => find<Workload>('Deployment', name));
const job = find<Workload>('Job', 'migrate');
const configMap = rendered.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('modelgate-config'));
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
/** The services that read PostgreSQL, and so must not start before the schema is migrated. */
const DATABASE_SERVICES: ServiceName[] = ['relay', 'account', 'worker'];

function allContainers(workload: Workload): Container[] {
  const pod = workload.spec.template.spec;
  return [...(pod.initContainers ?? []), ...pod.containers];
}

/** A workload's main container: the first of its pod (init containers are listed apart). */
function containerOf(workload: Workload): Container {
  const [container] = workload.spec.template.spec.containers;
  if (!container) throw new Error(`${workload.kind}/${workload.metadata.name} has no container`);
  return container;
}

function envValue(container: Container, name: string): string | undefined {
  return container.env?.find((e) => e.name === name)?.value ?? configMap?.data?.[name];
}

/** The edge serves /metrics on a port of its own besides the public one; the others on theirs (the console none). */
function namedPorts(name: ServiceName): { name: string; port: number }[] {
  const ports = [{ name: 'http', port: SERVICE_PORTS[name] }];
  return name === 'edge' ? [...ports, { name: 'metrics', port: METRICS_PORTS.edge }] : ports;
}

const matches = (selector: Record<string, string>, labels: Record<string, string>) => selects({ matchLabels: selector }, labels);

interface ServiceObject extends K8sObject {
  spec: { type?: string; selector: Record<string, string>; ports: unknown[] };
}

describe('kubectl kustomize infra/k8s', () => {
  it('renders the namespace, the per-service objects, the migration Job and the shared ConfigMap', () => {
    const kinds = rendered.map((o) => `${o.kind}/${o.metadata.name.replace(/-[a-z0-9]{10}$/, '')}`).sort();
    expect(kinds).toEqual(
      [
        'Namespace/modelgate',
        'ConfigMap/modelgate-config',
        'Job/migrate',
        ...SERVICES.flatMap((s) => [`Deployment/${s}`, `Service/${s}`, `PodDisruptionBudget/${s}`]),
        'Service/edge-metrics',
        'HorizontalPodAutoscaler/edge',
        'HorizontalPodAutoscaler/relay',
        ...['default-deny', 'dns', 'edge', 'reached-through-edge', 'prometheus', 'postgresql', 'redis', 'relay-internal-api', 'upstream-apis'].map((n) => `NetworkPolicy/${n}`),
      ].sort(),
    );
    for (const object of rendered.filter((o) => o.kind !== 'Namespace')) {
      expect({ object: `${object.kind}/${object.metadata.name}`, namespace: object.metadata.namespace }).toEqual({
        object: `${object.kind}/${object.metadata.name}`,
        namespace: 'modelgate',
      });
    }
  });

  it.each(SERVICES)('%s: probes readiness on /readyz and liveness on /healthz of its own port', (name) => {
    const container = containerOf(find<Workload>('Deployment', name));
    expect(container.ports).toEqual(namedPorts(name).map(({ name: portName, port }) => ({ name: portName, containerPort: port })));
    expect(envValue(container, `${name.toUpperCase()}_PORT`)).toBe(String(SERVICE_PORTS[name]));
    expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.startupProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
  });

  it.each(SERVICES)('%s: runs with exactly its memory settings of infra/node-runtime.json (none for the edge and the console)', (name) => {
    const runtime = nodeRuntime().services;
    const runtimeKeys = [...new Set(Object.values(runtime).flatMap((settings) => Object.keys(settings)))];
    const container = containerOf(find<Workload>('Deployment', name));
    const given = Object.fromEntries(runtimeKeys.flatMap((key) => {
      const value = envValue(container, key);
      return value === undefined ? [] : [[key, value]];
    }));
    expect(given).toEqual(runtime[name] ?? {});
  });

  it('sets resource requests and limits on every container', () => {
    for (const workload of [...deployments, job]) {
      for (const container of allContainers(workload)) {
        expect({ container: container.name, resources: container.resources }).toEqual({
          container: container.name,
          resources: {
            requests: { cpu: expect.any(String), memory: expect.any(String) },
            limits: { cpu: expect.any(String), memory: expect.any(String) },
          },
        });
      }
    }
  });

  it('gives every pod a termination grace period longer than its preStop pause plus its drain time', () => {
    const tooShort = deployments
      .map((deployment) => {
        const pod = deployment.spec.template.spec;
        const container = containerOf(deployment);
        const drainMs = Number(envValue(container, 'SHUTDOWN_TIMEOUT_MS') ?? DEFAULT_SHUTDOWN_TIMEOUT_MS);
        const preStop = container.lifecycle?.preStop?.exec?.command ?? [];
        const pauseMs = preStop[0] === 'sleep' ? Number(preStop[1]) * 1000 : 0;
        // 5 s for closing PostgreSQL, Redis and the BullMQ worker after the drain.
        return { name: deployment.metadata.name, graceMs: (pod.terminationGracePeriodSeconds ?? 30) * 1000, neededMs: pauseMs + drainMs + 5000 };
      })
      .filter(({ graceMs, neededMs }) => graceMs < neededMs);
    expect(tooShort).toEqual([]);
  });

  it('runs every container as a non-root user on a read-only root filesystem', () => {
    for (const workload of [...deployments, job]) {
      const pod = workload.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      for (const container of allContainers(workload)) {
        expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      }
    }
  });

  it('exposes each Deployment through a Service that selects its pods on the `http` port only', () => {
    for (const deployment of deployments) {
      const service = find<ServiceObject>('Service', deployment.metadata.name);
      expect(matches(service.spec.selector, deployment.spec.template.metadata.labels)).toBe(true);
      expect(matches(deployment.spec.selector?.matchLabels ?? {}, deployment.spec.template.metadata.labels)).toBe(true);
      expect(service.spec.ports).toEqual([{ name: 'http', port: SERVICE_PORTS[deployment.metadata.name as ServiceName], targetPort: 'http' }]);
    }
    expect(configMap?.data).toMatchObject({ RELAY_URL: 'http://relay:3001', ACCOUNT_URL: 'http://account:3002', CONSOLE_URL: 'http://console:3004' });
  });

  it('serves the edge metrics through a separate cluster-internal Service, so exposing `edge` publishes only the public port', () => {
    const metrics = find<ServiceObject>('Service', 'edge-metrics');
    expect(metrics.spec.type).toBe('ClusterIP');
    expect(matches(metrics.spec.selector, find<Workload>('Deployment', 'edge').spec.template.metadata.labels)).toBe(true);
    expect(metrics.spec.ports).toEqual([{ name: 'metrics', port: METRICS_PORTS.edge, targetPort: 'metrics' }]);
  });

  it('listens on every interface of the pod and trusts forwarded client addresses from the pod network only', () => {
    expect(configMap?.data?.HOST).toBe('0.0.0.0');
    expect(configMap?.data?.TRUSTED_PROXIES).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$/);
    expect(configMap?.data).not.toHaveProperty('EDGE_TRUST_PROXY_HOPS');
  });

  it.each(METRICS_SERVICES)('%s: pods ask Prometheus to scrape /metrics on the port that serves it', (name) => {
    const template = find<Workload>('Deployment', name).spec.template;
    expect(template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(METRICS_PORTS[name]),
      'prometheus.io/path': '/metrics',
    });
    const container = containerOf(find<Workload>('Deployment', name));
    expect(container.ports?.map((port) => port.containerPort)).toContain(METRICS_PORTS[name]);
    if (name === 'edge') expect(envValue(container, 'EDGE_METRICS_PORT')).toBe(String(METRICS_PORTS.edge));
  });

  it('gives account and edge an https public address, so cookies are Secure and the edge sends HSTS', () => {
    for (const name of ['account', 'edge']) {
      const container = containerOf(find<Workload>('Deployment', name));
      expect(envValue(container, 'PUBLIC_URL')).toMatch(/^https:\/\/[^/]+$/);
      // COOKIE_SECURE follows PUBLIC_URL unless set; nothing here turns it off.
      expect(envValue(container, 'COOKIE_SECURE')).toBeUndefined();
    }
  });

  it('does not ask Prometheus to scrape the console, which serves no /metrics', () => {
    expect(find<Workload>('Deployment', 'console').spec.template.metadata.annotations).toBeUndefined();
  });

  it('autoscales the edge and the relay, which then own their replica counts', () => {
    for (const name of ['edge', 'relay']) {
      const hpa = find<K8sObject & { spec: Record<string, unknown> }>('HorizontalPodAutoscaler', name);
      expect(hpa.apiVersion).toBe('autoscaling/v2');
      expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas as number);
      // A fixed `replicas` would be reset by every `kubectl apply`, fighting the autoscaler.
      expect(find<Workload>('Deployment', name).spec.replicas).toBeUndefined();
    }
    for (const name of ['account', 'worker', 'console']) expect(find<Workload>('Deployment', name).spec.replicas).toBeGreaterThanOrEqual(2);
  });

  it('limits voluntary disruptions to one pod at a time for every Deployment', () => {
    for (const deployment of deployments) {
      const pdb = find<K8sObject & { spec: { maxUnavailable: number; selector: { matchLabels: Record<string, string> } } }>(
        'PodDisruptionBudget',
        deployment.metadata.name,
      );
      expect(pdb.apiVersion).toBe('policy/v1');
      expect(pdb.spec.maxUnavailable).toBe(1);
      expect(matches(pdb.spec.selector.matchLabels, deployment.spec.template.metadata.labels)).toBe(true);
    }
  });

  it('runs the migrations in a Job from the migrate image, each attempt in a fresh pod', () => {
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe('Never');
    expect(containerOf(job).image).toMatch(/^modelgate\/migrate:[\w.-]+$/);
    expect(containerOf(job).env).toContainEqual({
      name: 'DATABASE_URL',
      valueFrom: { secretKeyRef: { name: 'modelgate-secrets', key: 'DATABASE_URL' } },
    });
  });

  it.each(DATABASE_SERVICES)('%s: waits in an init container until the schema has every migration of its release', (name) => {
    const pod = find<Workload>('Deployment', name).spec.template.spec;
    expect(pod.initContainers).toHaveLength(1);
    const [wait] = pod.initContainers ?? [];
    if (!wait) throw new Error(`${name} has no init container`);
    // The migrate image of the same release, whose migrations folder is the one this release expects.
    expect(wait.image).toBe(containerOf(job).image);
    const runtime = parseDockerfile(readRepoFile('infra', 'docker', 'Dockerfile')).stages.at(-1);
    const imageCommand = JSON.parse(runtime?.instructions.find((i) => i.keyword === 'CMD')?.args ?? '[]') as string[];
    expect(wait.command).toEqual([...imageCommand, '--wait']);
    expect(wait.env).toEqual([
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'modelgate-secrets', key: 'DATABASE_URL' } } },
    ]);
  });

  it('starts the edge and the console without waiting for migrations: they read no database', () => {
    expect(find<Workload>('Deployment', 'edge').spec.template.spec.initContainers).toBeUndefined();
    expect(find<Workload>('Deployment', 'console').spec.template.spec.initContainers).toBeUndefined();
  });

  it('lets the next release re-create the migrate Job: a finished Job deletes itself', () => {
    // Its pod template (the image) cannot change; a Job that lingered would make the next apply fail.
    expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
    expect(job.spec.ttlSecondsAfterFinished).toBeLessThanOrEqual(600);
  });

  it('takes settings from the generated ConfigMap and secrets from modelgate-secrets, with documented keys', () => {
    const documentedKeys = envFileKeys(readRepoFile('infra', 'k8s', 'secrets.example.env')).set;
    for (const workload of [...deployments, job]) {
      const container = containerOf(workload);
      expect(container.image).toMatch(new RegExp(`^modelgate/${workload.metadata.name}:[\\w.-]+$`));
      expect(container.envFrom).toContainEqual({ configMapRef: { name: configMap?.metadata.name } });
      for (const source of container.envFrom ?? []) {
        if (source.secretRef) expect(source.secretRef.name).toBe('modelgate-secrets');
      }
      for (const { valueFrom } of container.env ?? []) {
        if (!valueFrom?.secretKeyRef) continue;
        expect(valueFrom.secretKeyRef.name).toBe('modelgate-secrets');
        expect(documentedKeys).toContain(valueFrom.secretKeyRef.key);
      }
    }
    // The edge and the console hold no credentials.
    for (const name of ['edge', 'console']) {
      const container = containerOf(find<Workload>('Deployment', name));
      expect(container.envFrom).toEqual([{ configMapRef: { name: configMap?.metadata.name } }]);
      expect(container.env?.some((e) => e.valueFrom)).toBe(false);
    }
  });
});

describe('kubectl kustomize infra/k8s: NetworkPolicies', () => {
  const policies = rendered.filter((o): o is K8sObject & NetworkPolicy => o.kind === 'NetworkPolicy');
  const podOf = (workload: Workload): Extract<Endpoint, { kind: 'pod' }> => ({
    kind: 'pod',
    name: workload.metadata.name,
    namespace: 'modelgate',
    labels: workload.spec.template.metadata.labels,
    ports: Object.fromEntries((containerOf(workload).ports ?? []).map((p) => [p.name, p.containerPort])),
  });
  const pods = [...deployments, job].map(podOf);
  const pod = (name: string) => {
    const found = pods.find((p) => p.name === name);
    if (!found) throw new Error(`no pod ${name}`);
    return found;
  };
  const prometheus: Endpoint = { kind: 'pod', name: 'prometheus', namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'prometheus' }, ports: {} };
  const otherPod: Endpoint = { kind: 'pod', name: 'another namespace', namespace: 'default', labels: { app: 'anything' }, ports: {} };
  const client: Endpoint = { kind: 'external', name: 'internet client', address: '203.0.113.9' };
  const outsiders = [client, otherPod, prometheus];
  const everyone = [...outsiders, ...pods];
  const names = (endpoints: Endpoint[]) => endpoints.map((e) => e.name);
  const database: Endpoint = { kind: 'external', name: 'managed database', address: '10.20.0.5' };
  const provider: Endpoint = { kind: 'external', name: 'model provider', address: '198.51.100.20' };
  const resolver: Endpoint = { kind: 'external', name: 'kube-dns', address: '10.96.0.10' };

  it('isolates every pod in both directions: what is not allowed is refused', () => {
    for (const each of pods) expect({ pod: each.name, ingress: isIsolated(policies, each, 'Ingress'), egress: isIsolated(policies, each, 'Egress') }).toEqual({ pod: each.name, ingress: true, egress: true });
  });

  it("lets anyone reach the edge's public port, and only Prometheus its metrics port", () => {
    const edge = pod('edge');
    expect(names(outsiders.filter((source) => canConnect(policies, source, edge, SERVICE_PORTS.edge)))).toEqual(names(outsiders));
    expect(names(everyone.filter((source) => canConnect(policies, source, edge, METRICS_PORTS.edge)))).toEqual(['prometheus']);
  });

  it("lets only the edge reach account (and Prometheus its /metrics on the same port)", () => {
    expect(names(everyone.filter((source) => canConnect(policies, source, pod('account'), SERVICE_PORTS.account)))).toEqual(['prometheus', 'edge']);
  });

  it('lets only the edge and the account service (channel tests) reach the relay (and Prometheus its /metrics)', () => {
    expect(names(everyone.filter((source) => canConnect(policies, source, pod('relay'), SERVICE_PORTS.relay)))).toEqual(['prometheus', 'edge', 'account']);
  });

  it("lets only Prometheus reach the worker's port (health and metrics only)", () => {
    expect(names(everyone.filter((source) => canConnect(policies, source, pod('worker'), SERVICE_PORTS.worker)))).toEqual(['prometheus']);
  });

  it('limits the edge to the services behind it (and DNS)', () => {
    const edge = pod('edge');
    expect(names(pods.filter((target) => Object.values(target.ports).some((port) => canConnect(policies, edge, target, port))))).toEqual(['relay', 'account', 'console']);
    expect([database, provider].flatMap((target) => [5432, 6379, 443].filter((port) => canConnect(policies, edge, target, port)))).toEqual([]);
    expect(canConnect(policies, edge, resolver, 53, 'UDP')).toBe(true);
  });

  it('lets only the edge reach the console (and Prometheus its port, where there is no /metrics)', () => {
    expect(names(everyone.filter((source) => canConnect(policies, source, pod('console'), SERVICE_PORTS.console)))).toEqual(['prometheus', 'edge']);
    // And the console reaches nothing but DNS.
    const console = pod('console');
    expect(names(pods.filter((target) => Object.values(target.ports).some((port) => canConnect(policies, console, target, port))))).toEqual([]);
    expect([database, provider].flatMap((target) => [5432, 6379, 443].filter((port) => canConnect(policies, console, target, port)))).toEqual([]);
  });

  it('lets only relay, account and worker reach Redis, and those and the migrate Job PostgreSQL', () => {
    expect(names(pods.filter((source) => canConnect(policies, source, database, 5432)))).toEqual(['relay', 'account', 'worker', 'migrate']);
    expect(names(pods.filter((source) => canConnect(policies, source, database, 6379)))).toEqual(['relay', 'account', 'worker']);
  });

  it('lets relay, account and worker reach outside services (providers, Stripe, OpenID, SMTP, webhooks), and every pod resolve names', () => {
    expect(names(pods.filter((source) => canConnect(policies, source, provider, 443)))).toEqual(['relay', 'account', 'worker']);
    expect(names(pods.filter((source) => canConnect(policies, source, provider, 587)))).toEqual(['relay', 'account', 'worker']);
    for (const protocol of ['UDP', 'TCP'] as const) {
      expect(names(pods.filter((source) => canConnect(policies, source, resolver, 53, protocol)))).toEqual(names(pods));
    }
  });
});
