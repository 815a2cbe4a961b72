import { type FakeUpstream, startFakeUpstream } from '@modelgate/testing/fake-upstream';
import { Pool } from 'undici';
import { bodyOf } from '../src/load';
import { callOf, CLOUD_KINDS, DIRECT_KINDS } from '../src/requests';

describe('whole answers from the fake upstream, in each kind the bench asks it directly', () => {
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

  it.each(DIRECT_KINDS)('%s: an answer with usage, as the sanity check wants it', async (kind) => {
    const call = callOf(kind, { origin: upstream.url, direct: true, key: 'sk-bench', completionsModel: 'gpt-3.5-turbo-instruct', chunks: 3, stream: false });
    const response = await pool.request({ path: call.path, method: 'POST', headers: call.headers, body: bodyOf(call) });
    const body: unknown = await response.body.json();
    expect(response.statusCode).toBe(200);
    expect(call.isAnswer(body)).toBe(true);
  });
});

describe('the cloud channels kinds', () => {
  const options = { origin: 'http://127.0.0.1:1', key: 'sk-bench', completionsModel: 'gpt-3.5-turbo-instruct', chunks: 3, stream: false };

  it('ask the gateway for the models only the Bedrock and the Vertex AI channels serve', () => {
    const [bedrock, vertex] = CLOUD_KINDS.map((kind) => callOf(kind, { ...options, direct: false }));
    expect([bedrock?.path, JSON.parse(String(bedrock?.body)).model, bedrock?.dialect]).toEqual(['/v1/chat/completions', 'gpt-4.1-mini', 'openai']);
    expect([vertex?.path, vertex?.dialect]).toEqual(['/v1beta/models/gemini-2.5-flash-lite:generateContent', 'gemini']);
  });

  it('are not asked of the fake upstream directly, which takes them only signed', () => {
    expect(() => callOf('chat-bedrock', { ...options, direct: true })).toThrow('the fake upstream is not asked chat (Bedrock channel, Converse, SigV4) directly');
  });
});
