/** One copy-ready example of calling the gateway. */
export interface Snippet {
  id: string;
  title: string;
  /** What it is for, in a sentence. */
  description: string;
  code: string;
}

/** The key placeholder in every snippet: users paste their own (keys are shown once, never stored here). */
export const KEY_PLACEHOLDER = 'sk-your-key';

/**
 * The Quick start's examples for a gateway at `origin` (the edge, e.g. https://gw.example.com) and one
 * model. Base URLs differ per client: the OpenAI SDK and Codex want `/v1`, Claude Code and the
 * Anthropic and Google SDKs the bare origin (they append their own paths).
 */
export function quickStartSnippets(origin: string, model: string): Snippet[] {
  const v1 = `${origin}/v1`;
  const json = JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello' }] });
  return [
    {
      id: 'curl',
      title: 'curl',
      description: 'One chat completion from the command line.',
      code: [
        `curl ${v1}/chat/completions \\`,
        `  -H "Authorization: Bearer ${KEY_PLACEHOLDER}" \\`,
        '  -H "Content-Type: application/json" \\',
        `  -d '${json}'`,
      ].join('\n'),
    },
    {
      id: 'openai-node',
      title: 'OpenAI SDK (TypeScript)',
      description: 'npm install openai',
      code: [
        "import OpenAI from 'openai';",
        '',
        `const client = new OpenAI({ baseURL: '${v1}', apiKey: process.env.MODELGATE_API_KEY });`,
        'const answer = await client.chat.completions.create({',
        `  model: '${model}',`,
        "  messages: [{ role: 'user', content: 'Say hello' }],",
        '});',
        'console.log(answer.choices[0].message.content);',
      ].join('\n'),
    },
    {
      id: 'openai-python',
      title: 'OpenAI SDK (Python)',
      description: 'pip install openai',
      code: [
        'import os',
        'from openai import OpenAI',
        '',
        `client = OpenAI(base_url="${v1}", api_key=os.environ["MODELGATE_API_KEY"])`,
        'answer = client.chat.completions.create(',
        `    model="${model}",`,
        '    messages=[{"role": "user", "content": "Say hello"}],',
        ')',
        'print(answer.choices[0].message.content)',
      ].join('\n'),
    },
    {
      id: 'claude-code',
      title: 'Claude Code',
      description: 'Claude Code appends /v1/messages itself, so the base URL has no /v1. Any model a channel serves works.',
      code: [
        `export ANTHROPIC_BASE_URL=${origin}`,
        `export ANTHROPIC_AUTH_TOKEN=${KEY_PLACEHOLDER}`,
        `export ANTHROPIC_MODEL=${model}`,
        'claude',
      ].join('\n'),
    },
    {
      id: 'codex',
      title: 'Codex',
      description: 'In ~/.codex/config.toml, then export MODELGATE_API_KEY and run codex.',
      code: [
        `model = "${model}"`,
        'model_provider = "modelgate"',
        '',
        '[model_providers.modelgate]',
        'name = "Modelgate"',
        `base_url = "${v1}"`,
        'env_key = "MODELGATE_API_KEY"',
        'wire_api = "responses"',
      ].join('\n'),
    },
  ];
}
