import { type FakeUpstream, startFakeUpstream } from '@modelgate/testing/fake-upstream';
import { RequestLoad } from '../src/load';
import { callOf } from '../src/requests';

describe('a request load taking turns', () => {
  let upstream: FakeUpstream;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ record: false, chunks: 3 });
  });
  afterAll(() => upstream.close());

  it('tallies its runs as one, rated over their running time only', async () => {
    const call = callOf('chat-openai', { origin: upstream.url, direct: true, key: 'sk-bench', completionsModel: 'unused', chunks: 3, stream: false });
    const load = new RequestLoad(call, 2);
    await load.run(100);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await load.run(100);
    const result = await load.close();
    expect(result.errors).toBe(0);
    expect(result.durationMs).toBeGreaterThanOrEqual(200);
    expect(result.durationMs).toBeLessThan(450);
    expect(result.latency.count).toBe(result.ok);
    expect(result.requestsPerSecond).toBeCloseTo((result.ok / result.durationMs) * 1000);
  });
});
