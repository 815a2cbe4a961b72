import { parseCommand } from '../src/cli';

describe('pnpm bench options', () => {
  it('runs every case by default, the chat cases included', () => {
    expect([...parseCommand([]).settings.cases]).toEqual(['single', 'concurrent', 'streams', 'chat', 'chat-streams', 'messages-streams']);
  });

  it('accepts the chat cases alone', () => {
    expect([...parseCommand(['--cases', 'chat,chat-streams']).settings.cases]).toEqual(['chat', 'chat-streams']);
  });

  it('names the cases it knows when given another', () => {
    expect(() => parseCommand(['--cases', 'chat,embeddings'])).toThrow(
      '--cases: unknown embeddings (expected single, concurrent, streams, chat, chat-streams, messages-streams)',
    );
  });
});
