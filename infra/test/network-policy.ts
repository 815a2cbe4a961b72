// Evaluates rendered NetworkPolicies the way the Kubernetes API defines them, so a test can ask
// "may A open a connection to B on this port?" instead of comparing YAML. An ipBlock is taken to
// match any pod too (plugins differ on pod addresses in ipBlocks): the answers err towards "allowed".
import { cidrContains } from './support';

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

interface PolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

interface PolicyRule {
  from?: PolicyPeer[];
  to?: PolicyPeer[];
  ports?: { protocol?: string; port?: number | string }[];
}

export interface NetworkPolicy {
  kind: 'NetworkPolicy';
  metadata: { name: string; namespace?: string };
  spec: {
    podSelector: LabelSelector;
    policyTypes: ('Ingress' | 'Egress')[];
    ingress?: PolicyRule[];
    egress?: PolicyRule[];
  };
}

/** A pod (its namespace, labels and named container ports) or an address outside the cluster. */
export type Endpoint =
  | { kind: 'pod'; name: string; namespace: string; labels: Record<string, string>; ports: Record<string, number> }
  | { kind: 'external'; name: string; address: string };

export type Protocol = 'TCP' | 'UDP';

export function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  const matchLabels = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  return (
    matchLabels &&
    (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
      const value = Object.hasOwn(labels, key) ? labels[key] : undefined;
      switch (operator) {
        case 'In':
          return value !== undefined && values.includes(value);
        case 'NotIn':
          return value === undefined || !values.includes(value);
        case 'Exists':
          return value !== undefined;
        case 'DoesNotExist':
          return value === undefined;
      }
    })
  );
}

function inBlock(cidr: string, except: string[], address: string): boolean {
  return cidrContains(cidr, address) && !except.some((range) => cidrContains(range, address));
}

function peerMatches(peer: PolicyPeer, policyNamespace: string, endpoint: Endpoint): boolean {
  if (peer.ipBlock) {
    return endpoint.kind === 'pod' || inBlock(peer.ipBlock.cidr, peer.ipBlock.except ?? [], endpoint.address);
  }
  if (endpoint.kind !== 'pod') return false;
  const namespaceMatches = peer.namespaceSelector
    ? selects(peer.namespaceSelector, { 'kubernetes.io/metadata.name': endpoint.namespace })
    : endpoint.namespace === policyNamespace;
  return namespaceMatches && (!peer.podSelector || selects(peer.podSelector, endpoint.labels));
}

function ruleAllows(rule: PolicyRule, peers: PolicyPeer[] | undefined, policyNamespace: string, other: Endpoint, destination: Endpoint, port: number, protocol: Protocol): boolean {
  const peerAllowed = !peers || peers.length === 0 || peers.some((peer) => peerMatches(peer, policyNamespace, other));
  const portAllowed =
    !rule.ports ||
    rule.ports.length === 0 ||
    rule.ports.some((entry) => {
      if ((entry.protocol ?? 'TCP') !== protocol) return false;
      if (entry.port === undefined) return true;
      if (typeof entry.port === 'number') return entry.port === port;
      // A named port is the destination pod's container port of that name.
      return destination.kind === 'pod' && destination.ports[entry.port] === port;
    });
  return peerAllowed && portAllowed;
}

/** One direction of the check: does `pod`'s side (its ingress or egress policies) let the connection through? */
function sideAllows(
  policies: NetworkPolicy[],
  direction: 'Ingress' | 'Egress',
  pod: Extract<Endpoint, { kind: 'pod' }>,
  other: Endpoint,
  destination: Endpoint,
  port: number,
  protocol: Protocol,
): boolean {
  const applying = policies.filter(
    (policy) => (policy.metadata.namespace ?? 'default') === pod.namespace && policy.spec.policyTypes.includes(direction) && selects(policy.spec.podSelector, pod.labels),
  );
  // A pod no policy of that direction selects is not isolated in that direction.
  if (applying.length === 0) return true;
  return applying.some((policy) =>
    (direction === 'Ingress' ? policy.spec.ingress : policy.spec.egress)?.some((rule) =>
      ruleAllows(rule, direction === 'Ingress' ? rule.from : rule.to, pod.namespace, other, destination, port, protocol),
    ),
  );
}

/** Whether `source` may open a connection to `destination` on `port`: egress of the one and ingress of the other allow it. */
export function canConnect(policies: NetworkPolicy[], source: Endpoint, destination: Endpoint, port: number, protocol: Protocol = 'TCP'): boolean {
  const egress = source.kind !== 'pod' || sideAllows(policies, 'Egress', source, destination, destination, port, protocol);
  const ingress = destination.kind !== 'pod' || sideAllows(policies, 'Ingress', destination, source, destination, port, protocol);
  return egress && ingress;
}

/** Whether some policy isolates the pod in that direction (everything not allowed is refused). */
export function isIsolated(policies: NetworkPolicy[], pod: Extract<Endpoint, { kind: 'pod' }>, direction: 'Ingress' | 'Egress'): boolean {
  return policies.some(
    (policy) => (policy.metadata.namespace ?? 'default') === pod.namespace && policy.spec.policyTypes.includes(direction) && selects(policy.spec.podSelector, pod.labels),
  );
}
