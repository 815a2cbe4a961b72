import { KEY_PLACEHOLDER, mediaSnippets, quickStartSnippets } from '../web/src/pages/docs/snippets';

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

describe('Images and audio snippets', () => {
  const snippetsFor = (image: string) =>
    Object.fromEntries(mediaSnippets('https://gw.example.com', { image, transcription: 'gpt-4o-mini-transcribe' }).map((snippet) => [snippet.id, snippet.code]));

  it('call the image and transcription routes under /v1 with the chosen models and a placeholder key', () => {
    const snippets = snippetsFor('gpt-image-1');
    expect(snippets['image-curl']).toContain('curl https://gw.example.com/v1/images/generations');
    expect(snippets['image-curl']).toContain(`Authorization: Bearer ${KEY_PLACEHOLDER}`);
    expect(snippets['image-openai-node']).toContain("baseURL: 'https://gw.example.com/v1'");
    expect(snippets['image-openai-node']).toContain("model: 'gpt-image-1'");
    expect(snippets['image-openai-python']).toContain('model="gpt-image-1"');
    expect(snippets['transcription-curl']).toContain('curl https://gw.example.com/v1/audio/transcriptions');
    // A multipart upload: the file as a form field, no JSON content type.
    expect(snippets['transcription-curl']).toContain('-F model=gpt-4o-mini-transcribe');
    expect(snippets['transcription-curl']).toContain('-F file=@speech.mp3');
    expect(snippets['transcription-curl']).not.toContain('application/json');
    expect(snippets['transcription-openai-node']).toContain("file: fs.createReadStream('speech.mp3')");
    expect(snippets['transcription-openai-python']).toContain('client.audio.transcriptions.create(model="gpt-4o-mini-transcribe", file=audio)');
  });

  it('save the image from base64, asking dall-e models for it (gpt-image models refuse the parameter)', () => {
    const body = (code: string | undefined) => JSON.parse(/-d '(.*)' \\$/m.exec(code ?? '')?.[1] ?? '') as unknown;
    expect(body(snippetsFor('gpt-image-1')['image-curl'])).toEqual({ model: 'gpt-image-1', prompt: 'A lighthouse at dawn, watercolor', size: '1024x1024' });
    expect(body(snippetsFor('dall-e-3')['image-curl'])).toEqual({ model: 'dall-e-3', prompt: 'A lighthouse at dawn, watercolor', size: '1024x1024', response_format: 'b64_json' });
    expect(snippetsFor('dall-e-3')['image-openai-node']).toContain("response_format: 'b64_json'");
    expect(snippetsFor('gpt-image-1')['image-openai-python']).not.toContain('response_format');
    expect(snippetsFor('gpt-image-1')['image-curl']).toContain("| jq -r '.data[0].b64_json' | base64 --decode > image.png");
  });
});
