import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeUpstream, startFakeUpstream } from '@modelgate/testing/fake-upstream';
import { request } from 'undici';
import { bodyOf, runLoad } from '../src/load';
import { uploadCall, writeUploadBody } from '../src/uploads';

describe('a transcription upload streamed from disk', () => {
  let upstream: FakeUpstream;
  let dir: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ record: true, chunks: 3 });
    dir = mkdtempSync(join(tmpdir(), 'bench-upload-test-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await upstream.close();
  });

  it('is a multipart body of the size it declares, model first, with a WAV file the fake hears the length of', async () => {
    const body = writeUploadBody(dir, 1);
    expect(statSync(body.path).size).toBe(body.bytes);
    const call = uploadCall(upstream.url, 'sk-bench', body);
    const response = await request(`${upstream.url}${call.path}`, { method: 'POST', headers: call.headers, body: bodyOf(call) });
    const answer: unknown = await response.body.json();
    expect(response.statusCode).toBe(200);
    expect(call.isAnswer(answer)).toBe(true);
    // 1 MB of 24 kHz 16-bit mono PCM is 21.8 s, reported as whole seconds.
    expect(answer).toMatchObject({ usage: { type: 'duration', seconds: 22 } });
    const [recorded] = upstream.requests;
    expect(recorded?.form?.fields).toEqual({ model: 'whisper-1' });
    expect(recorded?.form?.files).toEqual([{ name: 'file', filename: 'bench-1mb.wav', size: 1024 * 1024, contentType: 'audio/wav' }]);
  });

  it('opens a fresh stream of the file for each request of a load', async () => {
    const result = await runLoad(uploadCall(upstream.url, 'sk-bench', writeUploadBody(dir, 1)), 2, 60_000, 3);
    expect([result.ok, result.errors]).toEqual([3, 0]);
  });
});
