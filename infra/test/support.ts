// Readers shared by the static checks: repository files, YAML with compose-style merge keys, the
// services' runtime settings (infra/node-runtime.json), the Dockerfile's stages, .dockerignore rules
// and the environment variables the services read; and the CIDR check of compose subnets and
// NetworkPolicy ipBlocks.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

export const REPO_ROOT = resolve(__dirname, '..', '..');
export const SERVICES = ['edge', 'relay', 'account', 'worker', 'console'] as const;
export type ServiceName = (typeof SERVICES)[number];
export const SERVICE_PORTS: Record<ServiceName, number> = { edge: 3000, relay: 3001, account: 3002, worker: 3003, console: 3004 };
/**
 * The services with Prometheus `/metrics`, and where: each one's own port, except the edge's (public)
 * one. The console has none: every path of its port is reachable through the edge.
 */
export const METRICS_SERVICES = ['edge', 'relay', 'account', 'worker'] as const;
export const METRICS_PORTS: Record<(typeof METRICS_SERVICES)[number], number> = { edge: 9091, relay: 3001, account: 3002, worker: 3003 };

/** infra/node-runtime.json: the memory settings (environment variables) of the services it names. */
export interface NodeRuntime {
  why: string;
  services: Partial<Record<ServiceName, Record<string, string>>>;
}

export function nodeRuntime(): NodeRuntime {
  return JSON.parse(readRepoFile('infra', 'node-runtime.json')) as NodeRuntime;
}

export function repoPath(...parts: string[]): string {
  return join(REPO_ROOT, ...parts);
}

export function readRepoFile(...parts: string[]): string {
  return readFileSync(repoPath(...parts), 'utf8');
}

/** Compose files use `<<: *anchor` merge keys (YAML 1.1), which the yaml package applies on request. */
export function parseYaml<T = unknown>(text: string): T {
  return parse(text, { merge: true }) as T;
}

export function parseYamlDocuments<T = unknown>(text: string): T[] {
  return parseAllDocuments(text, { merge: true }).map((doc) => {
    if (doc.errors.length > 0) throw doc.errors[0];
    return doc.toJS() as T;
  });
}

/** Whether `address` is inside `cidr` (IPv4 or IPv6; an address of the other family never is). */
export function cidrContains(cidr: string, address: string): boolean {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  const [network = '', bits] = cidr.split('/');
  if ((isIP(network) === 6 ? 'ipv6' : 'ipv4') !== family) return false;
  const list = new BlockList();
  list.addSubnet(network, Number(bits), family);
  return list.check(address, family);
}

/** Docker duration ("75s", "1m30s", "500ms") in milliseconds. */
export function durationMs(text: string): number {
  let total = 0;
  const unitMs = new Map([['ms', 1], ['s', 1000], ['m', 60_000], ['h', 3_600_000]]);
  const matches = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (matches.length === 0 || matches.map((m) => m[0]).join('') !== text) throw new Error(`not a duration: ${text}`);
  for (const [, value, unit = ''] of matches) total += Number(value) * (unitMs.get(unit) ?? Number.NaN);
  return total;
}

export interface DockerInstruction {
  keyword: string;
  args: string;
}

export interface DockerStage {
  name: string;
  from: string;
  instructions: DockerInstruction[];
}

/** Splits a Dockerfile into stages of instructions, joining continuation lines and dropping comments. */
export function parseDockerfile(text: string): { preamble: DockerInstruction[]; stages: DockerStage[] } {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && current === '')) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    current += line;
    if (current.trim() !== '') logical.push(current.trim());
    current = '';
  }
  const preamble: DockerInstruction[] = [];
  const stages: DockerStage[] = [];
  for (const line of logical) {
    // A logical line is trimmed and non-empty: it always has a keyword.
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args: args.replace(/\s+/g, ' ') };
    if (instruction.keyword === 'FROM') {
      const [, from, name] = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args) ?? [];
      if (from === undefined) throw new Error(`FROM without an image: ${line}`);
      stages.push({ name: name ?? String(stages.length), from, instructions: [] });
    } else {
      (stages.at(-1)?.instructions ?? preamble).push(instruction);
    }
  }
  return { preamble, stages };
}

/**
 * Whether .dockerignore keeps `path` (relative to the repository) out of the build context. Supports
 * what the file uses: `**`, `*`, exact paths (which also cover everything below) and `!` exceptions.
 */
export function isDockerIgnored(rules: string, path: string): boolean {
  let ignored = false;
  for (const raw of rules.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = (negated ? line.slice(1) : line).replace(/^\/+/, '');
    const source = pattern
      .split('/')
      .map((part) => (part === '**' ? '.*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')))
      .join('/')
      .replace(/\.\*\//g, '(?:.*/)?');
    if (new RegExp(`^${source}(?:/.*)?$`).test(path)) ignored = !negated;
  }
  return ignored;
}

/** Upper-case keys declared in a zod env schema source file (`FOO: env.port(...)`). */
function declaredEnvKeys(source: string): string[] {
  return [...source.matchAll(/^\s*([A-Z][A-Z0-9_]*)\s*:/gm)].map(([, key = '']) => key);
}

/** Keys of each shared shape in packages/config (`export const commonEnvShape = { ... };`). */
function sharedEnvShapes(): Map<string, string[]> {
  const source = readRepoFile('packages', 'config', 'src', 'index.ts');
  return new Map([...source.matchAll(/^export const (\w+EnvShape) = \{([\s\S]*?)^\};/gm)].map(([, name = '', body = '']) => [name, declaredEnvKeys(body)]));
}

/** The environment variables one app reads: its env.ts and the shared shapes it spreads (`...dataEnvShape`). */
export function environmentVariablesReadBy(app: string): string[] {
  const source = readRepoFile('apps', app, 'src', 'env.ts');
  const shapes = sharedEnvShapes();
  const keys = new Set(declaredEnvKeys(source));
  for (const [, shape = ''] of source.matchAll(/\.\.\.(\w+EnvShape)/g)) {
    const shapeKeys = shapes.get(shape);
    if (!shapeKeys) throw new Error(`apps/${app}/src/env.ts spreads ${shape}, which packages/config does not export`);
    for (const key of shapeKeys) keys.add(key);
  }
  return [...keys].sort();
}

/** Every environment variable some service reads: the apps' env.ts plus the shared shapes they spread. */
export function environmentVariablesReadByServices(): string[] {
  const keys = new Set(declaredEnvKeys(readRepoFile('packages', 'config', 'src', 'index.ts')));
  for (const app of readdirSync(repoPath('apps'))) {
    const envFile = repoPath('apps', app, 'src', 'env.ts');
    if (existsSync(envFile)) for (const key of declaredEnvKeys(readFileSync(envFile, 'utf8'))) keys.add(key);
  }
  return [...keys].sort();
}

/** Keys of an env file, set (`KEY=`) or shown commented out with their default (`# KEY=default`). */
export function envFileKeys(text: string): { set: string[]; documented: string[] } {
  const set = [...text.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map(([, key = '']) => key);
  const commented = [...text.matchAll(/^#\s?([A-Z][A-Z0-9_]*)=/gm)].map(([, key = '']) => key);
  return { set, documented: [...set, ...commented] };
}
