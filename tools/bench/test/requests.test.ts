import { type FakeUpstream, startFakeUpstream } from '@modelgate/testing/fake-upstream';
import { Pool } from 'undici';
import { CALL_KINDS, callOf } from '../src/requests';

describe('whole answers from the fake upstream, in each kind the bench sends', () => {
  let upstream: FakeUpstream;
  let pool: Pool;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ record: false, chunks: 3 });
    pool = new Pool(upstream.url);
  });
  afterAll(async () => {
    await pool.close();
    await upstream.close();
  });

  it.each(CALL_KINDS)('%s: an answer with usage, as the sanity check wants it', async (kind) => {
    const call = callOf(kind, { origin: upstream.url, direct: true, key: 'sk-bench', completionsModel: 'gpt-3.5-turbo-instruct', chunks: 3, stream: false });
    const response = await pool.request({ path: call.path, method: 'POST', headers: call.headers, body: call.body });
    const body: unknown = await response.body.json();
    expect(response.statusCode).toBe(200);
    expect(call.isAnswer(body)).toBe(true);
  });
});
