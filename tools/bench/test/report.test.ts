import { peerComparison, renderTable, type RunResult } from '../src/report';
import { loadResult, streamResult, uploadResult } from './fixtures';

const TABLE_OPTIONS = { connections: 50, streams: 100, openStreams: 2000, openStreamMs: 30_000, chunks: 20, chunkDelayMs: 20 };

const run: RunResult = {
  run: 1,
  targets: [
    {
      target: 'upstream',
      concurrent: loadResult(9000, 2),
      wholeLoad: { 'chat-openai': loadResult(8000, 3), 'chat-anthropic': loadResult(7000, 4) },
      streamLoad: { completions: streamResult(1, 0, 4000), 'chat-anthropic': streamResult(2, 0, 4000) },
    },
    {
      target: 'relay',
      concurrent: loadResult(2000, 20, 500),
      wholeLoad: { 'chat-openai': loadResult(1900, 21.5, 520), 'chat-anthropic': loadResult(1500, 30, 560.6) },
      streamLoad: { completions: streamResult(5, 0, 3800, 3000), 'chat-anthropic': streamResult(6.5, 2, 3600, 3300) },
    },
  ],
  rss: [{ name: 'relay', mb: 170 }],
};

const rows = renderTable([run], TABLE_OPTIONS).split('\n');
const cells = (label: string, target: string) => {
  const row = rows.find((line) => line.includes(`| ${label} | ${target} |`));
  if (!row) throw new Error(`no row ${label} / ${target} in\n${rows.join('\n')}`);
  return row.split(' | ');
};

describe('the report table', () => {
  it('prints the chat cases right after the completions at the same connection count', () => {
    const labels = rows.slice(2).map((row) => row.split(' | ')[1]);
    expect(labels).toEqual([
      '50 connections',
      '50 connections',
      '50 connections, chat (OpenAI channel, pass-through)',
      '50 connections, chat (OpenAI channel, pass-through)',
      '50 connections, chat (Anthropic channel, translated)',
      '50 connections, chat (Anthropic channel, translated)',
      '50 streaming connections, completions: first byte',
      '50 streaming connections, completions: first byte',
      '50 streaming connections, chat (Anthropic channel, translated): first byte',
      '50 streaming connections, chat (Anthropic channel, translated): first byte',
      'RSS after the run',
    ]);
  });

  it('compares each chat row with the fake upstream direct in the same channel, and notes CPU per request', () => {
    const [, , , rate, total, p50, , added, , errors, notes] = cells('50 connections, chat (Anthropic channel, translated)', 'relay (direct)');
    expect([rate, total, p50, added, errors]).toEqual(['1500', '', '30.00', '+26.00', '0']);
    expect(notes).toContain('CPU us/request: relay 561, edge 300');
  });

  it('prints streams per second, first byte and merged chunks of the streaming rows', () => {
    const [, , , rate, , p50, , added, , , notes] = cells('50 streaming connections, chat (Anthropic channel, translated): first byte', 'relay (direct)');
    expect([rate, p50, added]).toEqual(['120', '6.50', '+4.50']);
    expect(notes).toContain('merged chunks 2/3600');
    expect(notes).toContain('CPU us/stream: relay 3300, edge 300');
  });
});

describe('the cloud channels rows', () => {
  const clouds: RunResult = {
    run: 1,
    targets: [
      { target: 'upstream', wholeLoad: { 'chat-openai': loadResult(8000, 3) } },
      { target: 'relay', wholeLoad: { 'chat-openai': loadResult(1900, 21.5, 520), 'chat-bedrock': loadResult(1700, 25, 590) } },
    ],
    rss: [],
  };
  const table = renderTable([clouds], TABLE_OPTIONS).split('\n');

  it('say that the fake upstream was not asked directly, and leave the added latency blank', () => {
    const label = '50 connections, chat (Bedrock channel, Converse, SigV4)';
    const [direct, relay] = table.filter((line) => line.includes(`| ${label} |`)).map((line) => line.split(' | '));
    expect(direct?.slice(2)).toEqual([
      'fake upstream (direct)', '', '', '', '', '', '', '', 'not asked directly: the fake takes these calls only SigV4-signed or with a Vertex access token |',
    ]);
    expect(relay?.slice(2, 8)).toEqual(['relay (direct)', '1700', '', '25.00', '25.00', '']);
    expect(table.some((line) => line.includes('generateContent (Vertex AI channel'))).toBe(false);
  });
});

describe('the headline and the side-by-side figures', () => {
  const withPeer: RunResult = {
    run: 1,
    targets: [
      { target: 'relay', single: loadResult(500, 2, 600), concurrent: loadResult(2400, 20, 550) },
      { target: 'edge', single: loadResult(400, 2.5, 600), concurrent: loadResult(1600, 30, 560.6) },
      {
        target: 'peer',
        single: loadResult(250, 4),
        concurrent: { ...loadResult(800, 60), cpuPerRequest: [{ name: 'peer', us: 1210 }] },
      },
    ],
    rss: [],
  };
  const table = renderTable([withPeer], TABLE_OPTIONS).split('\n');
  const total = (target: string) => table.find((line) => line.includes(`| 50 connections | ${target} |`))?.split(' | ')[4];

  it('adds edge and relay CPU per call on the edge target, and shows the peer process alone', () => {
    expect(table[0]).toContain('| req/s | CPU us/call edge+relay |');
    expect(total('edge -> relay -> upstream')).toBe('861');
    expect(total('relay (direct)')).toBe('');
    expect(total('peer gateway -> upstream')).toBe('1210');
  });

  it("gives the peer's rate and ours as a multiple of it, at 1 and N connections", () => {
    expect(peerComparison(withPeer, 50)).toEqual([
      'completions at 1 connection: peer 250 req/s, 0 errors; edge / peer 1.60x, relay / peer 2.00x',
      'completions at 50 connections: peer 800 req/s, 1210 CPU us/call, 0 errors; edge / peer 2.00x, relay / peer 3.00x, ' +
        'CPU per call edge+relay / peer 0.71x',
    ]);
  });
});

describe('the transcription upload rows', () => {
  const uploads: RunResult = {
    run: 1,
    targets: [
      { target: 'upstream', upload: uploadResult(100, []) },
      { target: 'edge', upload: uploadResult(250, [{ name: 'edge', mb: 0.42 }, { name: 'relay', mb: 3.06 }], 2500) },
    ],
    rss: [],
  };
  const table = renderTable([uploads], TABLE_OPTIONS).split('\n');
  const row = (label: string, target: string) => table.find((line) => line.includes(`| ${label} | ${target} |`))?.split(' | ');

  it('give the small uploads their rate in MB/s and the CPU per MB', () => {
    const cells = row('4 connections, transcription uploads of 1 MB (whisper-1)', 'edge -> relay -> upstream');
    // 500 uploads of 1 MB in 10 s; 2,500 us of relay CPU per 1 MB upload.
    expect(cells?.[10]).toBe('50 MB/s uploaded; CPU us/MB: relay 2500, edge 300; CPU us/request: relay 2500, edge 300 |');
    expect(cells?.[4]).toBe('2800');
  });

  it('give the large upload its time, rate and the RSS growth of each process it passed', () => {
    const cells = row('one transcription upload of 20 MB alone', 'edge -> relay -> upstream');
    expect(cells?.slice(3, 10)).toEqual(['', '', '250.00', '', '+150.00', '', '0']);
    expect(cells?.[10]).toBe('80 MB/s uploaded; RSS peak - before: edge +0.4 MB, relay +3.1 MB |');
    expect(row('one transcription upload of 20 MB alone', 'fake upstream (direct)')?.[10]).toBe('200 MB/s uploaded |');
  });
});

describe('the open-streams row', () => {
  const open: RunResult = {
    run: 1,
    targets: [
      { target: 'upstream', openStreams: { result: streamResult(2, 0, 40000), memoryPerStream: [] } },
      {
        target: 'edge',
        openStreams: { result: streamResult(5, 0, 40000, undefined, 1), memoryPerStream: [{ name: 'edge', kb: 12.34 }, { name: 'relay', kb: 40.5 }] },
      },
    ],
    rss: [],
  };
  const table = renderTable([open], TABLE_OPTIONS).split('\n');

  it('gives each process its RSS per open stream, with the first byte against the upstream direct and the errors', () => {
    const cells = table.find((line) => line.includes('| 2000 streams open together, 30 s each: first byte | edge -> relay -> upstream |'))?.split(' | ');
    expect(cells?.[10]).toMatch(/^RSS per open stream: edge 12\.3 KB, relay 40\.5 KB; /);
    expect(cells?.[7]).toBe('+3.00');
    expect(cells?.[9]).not.toBe('0');
  });
});
