import { KEY_PLACEHOLDER, quickStartSnippets } from '../web/src/pages/docs/snippets';

describe('Quick start snippets', () => {
  const snippets = Object.fromEntries(quickStartSnippets('https://gw.example.com', 'claude-sonnet-4-5').map((snippet) => [snippet.id, snippet.code]));

  it('give each client the base URL it expects', () => {
    expect(snippets.curl).toContain('curl https://gw.example.com/v1/chat/completions');
    expect(snippets['openai-node']).toContain("baseURL: 'https://gw.example.com/v1'");
    expect(snippets['openai-python']).toContain('base_url="https://gw.example.com/v1"');
    expect(snippets.codex).toContain('base_url = "https://gw.example.com/v1"');
    expect(snippets.codex).toContain('wire_api = "responses"');
    // Claude Code appends /v1/messages itself.
    expect(snippets['claude-code']).toContain('export ANTHROPIC_BASE_URL=https://gw.example.com\n');
  });

  it('use the chosen model and a placeholder key, never a real one', () => {
    for (const code of Object.values(snippets)) expect(code).toContain('claude-sonnet-4-5');
    expect(snippets.curl).toContain(`Authorization: Bearer ${KEY_PLACEHOLDER}`);
    expect(snippets['claude-code']).toContain(`ANTHROPIC_AUTH_TOKEN=${KEY_PLACEHOLDER}`);
  });

  it('send valid JSON with curl', () => {
    const body = /-d '(.*)'$/m.exec(snippets.curl ?? '')?.[1];
    expect(JSON.parse(body ?? '')).toEqual({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Say hello' }] });
  });
});
