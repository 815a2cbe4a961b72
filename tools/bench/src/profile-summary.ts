// Summarises V8 CPU profiles (`node --cpu-prof`): self time by function and by package, idle time
// left out. Bundled code (apps/*/dist/index.js) is mapped back to its TypeScript source through the
// bundle's source map. CLI: `pnpm --filter @modelgate/bench profile-summary <dir|file.cpuprofile> [top]`.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface SelfTime {
  name: string;
  location: string;
  group: string;
  ms: number;
}

const REPO_ROOT = join(__dirname, '../../..');
const IDLE = new Set(['(idle)']);
const sourceMaps = new Map<string, SourceMap | null>();

function sourceMapOf(file: string): SourceMap | null {
  let map = sourceMaps.get(file);
  if (map === undefined) {
    const mapFile = `${file}.map`;
    map = existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))) : null;
    sourceMaps.set(file, map);
  }
  return map;
}

/** The package a path inside node_modules belongs to (`@scope/name` or `name`). */
function packageOf(pathInModules: string): string {
  const [first = '', second = ''] = pathInModules.split('/');
  return first.startsWith('@') ? `${first}/${second}` : first;
}

/** Where a frame's code lives, and the package it belongs to (ours, an npm package, Node, V8). */
export function locate(frame: ProfileNode['callFrame']): { location: string; group: string } {
  const { url, lineNumber, columnNumber } = frame;
  if (!url) return { location: '', group: frame.functionName.startsWith('(') ? frame.functionName : '(native)' };
  if (url.startsWith('node:')) return { location: `${url}:${lineNumber + 1}`, group: 'node internals' };
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const modules = file.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const inside = file.slice(modules + 'node_modules/'.length);
    return { location: `${inside}:${lineNumber + 1}`, group: packageOf(inside) };
  }
  const map = file.endsWith('dist/index.js') ? sourceMapOf(file) : null;
  if (map) {
    const entry = map.findEntry(lineNumber, columnNumber) as { originalSource?: string; originalLine?: number };
    if (entry.originalSource) {
      const source = entry.originalSource.startsWith('file://') ? fileURLToPath(entry.originalSource) : join(file, '..', entry.originalSource);
      const modulesInSource = source.lastIndexOf('node_modules/');
      if (modulesInSource !== -1) {
        const inside = source.slice(modulesInSource + 'node_modules/'.length);
        return { location: `${inside}:${(entry.originalLine ?? 0) + 1}`, group: packageOf(inside) };
      }
      const path = relative(REPO_ROOT, source);
      return { location: `${path}:${(entry.originalLine ?? 0) + 1}`, group: path.split('/').slice(0, 2).join('/') };
    }
  }
  return { location: `${relative(REPO_ROOT, file)}:${lineNumber + 1}`, group: 'modelgate' };
}

/** Self time per node id, in ms, from the sample stream (the exact attribution V8's tools use). */
function selfTimes(profile: CpuProfile): Map<number, number> {
  const times = new Map<number, number>();
  const { samples, timeDeltas } = profile;
  if (samples && timeDeltas) {
    for (const [i, id] of samples.entries()) {
      const delta = timeDeltas[i + 1] ?? 0;
      times.set(id, (times.get(id) ?? 0) + delta / 1000);
    }
  } else {
    const hits = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
    const interval = hits > 0 ? (profile.endTime - profile.startTime) / hits / 1000 : 0;
    for (const node of profile.nodes) times.set(node.id, (node.hitCount ?? 0) * interval);
  }
  return times;
}

export function aggregate(profile: CpuProfile): { functions: SelfTime[]; busyMs: number; idleMs: number } {
  const times = selfTimes(profile);
  const byFunction = new Map<string, SelfTime>();
  let busyMs = 0;
  let idleMs = 0;
  for (const node of profile.nodes) {
    const ms = times.get(node.id) ?? 0;
    if (ms === 0) continue;
    if (IDLE.has(node.callFrame.functionName)) {
      idleMs += ms;
      continue;
    }
    busyMs += ms;
    const { location, group } = locate(node.callFrame);
    const name = node.callFrame.functionName || '(anonymous)';
    const key = `${name}\0${location}`;
    const entry = byFunction.get(key);
    if (entry) entry.ms += ms;
    else byFunction.set(key, { name, location, group, ms });
  }
  return { functions: [...byFunction.values()].sort((a, b) => b.ms - a.ms), busyMs, idleMs };
}

function percent(part: number, whole: number): string {
  return whole > 0 ? `${((part / whole) * 100).toFixed(1)}%` : 'n/a';
}

function profileFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).filter((name) => name.endsWith('.cpuprofile')).sort().map((name) => join(path, name));
}

/** A markdown summary per profile: busy/idle time, self time by package, then the top functions. */
export function summarizeProfiles(path: string, top: number, names: Map<number, string> = new Map()): string {
  const sections: string[] = [];
  for (const file of profileFiles(path)) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const { functions, busyMs, idleMs } = aggregate(profile);
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile
    const pid = Number(basename(file).split('.')[3]);
    const title = names.get(pid) ?? basename(file);
    const groups = new Map<string, number>();
    for (const fn of functions) groups.set(fn.group, (groups.get(fn.group) ?? 0) + fn.ms);
    const byGroup = [...groups].sort((a, b) => b[1] - a[1]).slice(0, 12);
    sections.push([
      `### ${title}: busy ${(busyMs / 1000).toFixed(1)} s, idle ${(idleMs / 1000).toFixed(1)} s`,
      '',
      `by package: ${byGroup.map(([group, ms]) => `${group} ${percent(ms, busyMs)}`).join(', ')}`,
      '',
      '| self | function | where |',
      '| ---: | --- | --- |',
      ...functions.slice(0, top).map((fn) => `| ${percent(fn.ms, busyMs)} | ${fn.name} | ${fn.location} |`),
    ].join('\n'));
  }
  return sections.join('\n\n');
}

if (require.main === module) {
  const [path, top] = process.argv.slice(2);
  if (!path) {
    process.stderr.write('usage: profile-summary <dir|file.cpuprofile> [top]\n');
    process.exit(2);
  }
  process.stdout.write(`${summarizeProfiles(path, Number(top ?? 30))}\n`);
}
