import { peerCall } from '../src/peer';
import { callOf } from '../src/requests';

describe('calls sent to a peer gateway', () => {
  const completions = callOf('completions', {
    origin: 'http://127.0.0.1:3000',
    direct: false,
    key: 'sk-bench',
    completionsModel: 'gpt-3.5-turbo-instruct',
    chunks: 20,
    stream: false,
  });

  it("go under the peer's base path with its routing headers, {upstream} filled in", () => {
    const peer = {
      url: 'http://127.0.0.1:8787/v1/',
      headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': '{upstream}/v1' },
      pid: undefined,
    };
    const call = peerCall(completions, peer, 'http://127.0.0.1:41234');
    expect(call).toMatchObject({ origin: 'http://127.0.0.1:8787', path: '/v1/completions', body: completions.body });
    expect(call.headers).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer sk-bench',
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': 'http://127.0.0.1:41234/v1',
    });
  });

  it("take the peer's own authorization over ours", () => {
    const call = peerCall(completions, { url: 'http://gateway.test/api/openai/v1', headers: { authorization: 'Bearer peer-key' }, pid: undefined }, 'http://up');
    expect(call).toMatchObject({ origin: 'http://gateway.test', path: '/api/openai/v1/completions' });
    expect(call.headers.authorization).toBe('Bearer peer-key');
  });
});
