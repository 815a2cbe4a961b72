import { parseCommand } from '../src/cli';

describe('pnpm bench options', () => {
  it('runs every case by default, the chat cases included', () => {
    expect([...parseCommand([]).settings.cases]).toEqual([
      'single',
      'concurrent',
      'streams',
      'chat',
      'chat-limited',
      'chat-streams',
      'messages',
      'messages-streams',
      'responses',
      'responses-streams',
      'gemini',
      'gemini-streams',
      'clouds',
      'images',
      'transcription-upload',
      'open-streams',
    ]);
  });

  it('accepts the chat cases alone', () => {
    expect([...parseCommand(['--cases', 'chat,chat-streams']).settings.cases]).toEqual(['chat', 'chat-streams']);
  });

  it('names the cases it knows when given another', () => {
    expect(() => parseCommand(['--cases', 'chat,embeddings'])).toThrow(
      '--cases: unknown embeddings (expected single, concurrent, streams, chat, chat-limited, chat-streams, messages, messages-streams, responses, ' +
        'responses-streams, gemini, gemini-streams, clouds, images, transcription-upload, open-streams)',
    );
  });

  it('measures a peer gateway after our targets when given its URL, with its routing headers and process', () => {
    const { settings } = parseCommand([
      '--peer-url',
      'http://127.0.0.1:8787/v1',
      '--peer-header',
      'x-portkey-provider: openai',
      '--peer-header',
      'X-Portkey-Custom-Host: {upstream}/v1',
      '--peer-pid',
      '4242',
    ]);
    expect(settings.targets).toEqual(['upstream', 'relay', 'edge', 'peer']);
    expect(settings.peer).toEqual({
      url: 'http://127.0.0.1:8787/v1',
      headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': '{upstream}/v1' },
      pid: 4242,
    });
  });

  it('refuses a peer that could run nothing, or peer options without a peer', () => {
    expect(parseCommand([]).settings.targets).toEqual(['upstream', 'relay', 'edge']);
    expect(() => parseCommand(['--targets', 'edge,peer'])).toThrow('--targets peer needs --peer-url');
    expect(() => parseCommand(['--peer-url', 'http://127.0.0.1:8787/v1', '--cases', 'gemini'])).toThrow('the peer runs only single and concurrent');
    expect(() => parseCommand(['--peer-header', 'x-portkey-provider: openai'])).toThrow('--peer-header and --peer-pid need --peer-url');
    expect(() => parseCommand(['--peer-url', 'http://127.0.0.1:8787/v1', '--peer-header', 'no colon'])).toThrow("expected 'Name: value'");
  });
});
