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

/** The models of the media snippets: an image model and a speech-to-text model. */
export interface MediaModels {
  image: string;
  transcription: string;
}

const IMAGE_PROMPT = 'A lighthouse at dawn, watercolor';
const AUDIO_FILE = 'speech.mp3';

/**
 * Image generation and transcription (docs/api.md 2.13) with curl and the OpenAI SDKs. Images come
 * back base64-encoded and are saved to image.png: gpt-image models always answer so, dall-e models
 * are asked to (they answer URLs by default, and gpt-image models refuse the parameter).
 */
export function mediaSnippets(origin: string, models: MediaModels): Snippet[] {
  const v1 = `${origin}/v1`;
  const { image, transcription } = models;
  const base64Asked = image.startsWith('dall-e');
  const imageBody = JSON.stringify({ model: image, prompt: IMAGE_PROMPT, size: '1024x1024', ...(base64Asked ? { response_format: 'b64_json' } : {}) });
  return [
    {
      id: 'image-curl',
      title: 'Image generation: curl',
      description: 'Saves the image as image.png (needs jq).',
      code: [
        `curl ${v1}/images/generations \\`,
        `  -H "Authorization: Bearer ${KEY_PLACEHOLDER}" \\`,
        '  -H "Content-Type: application/json" \\',
        `  -d '${imageBody}' \\`,
        "  | jq -r '.data[0].b64_json' | base64 --decode > image.png",
      ].join('\n'),
    },
    {
      id: 'image-openai-node',
      title: 'Image generation: OpenAI SDK (TypeScript)',
      description: 'npm install openai',
      code: [
        "import fs from 'node:fs';",
        "import OpenAI from 'openai';",
        '',
        `const client = new OpenAI({ baseURL: '${v1}', apiKey: process.env.MODELGATE_API_KEY });`,
        'const result = await client.images.generate({',
        `  model: '${image}',`,
        `  prompt: '${IMAGE_PROMPT}',`,
        "  size: '1024x1024',",
        ...(base64Asked ? ["  response_format: 'b64_json',"] : []),
        '});',
        'const base64 = result.data?.[0]?.b64_json;',
        "if (base64) fs.writeFileSync('image.png', Buffer.from(base64, 'base64'));",
      ].join('\n'),
    },
    {
      id: 'image-openai-python',
      title: 'Image generation: OpenAI SDK (Python)',
      description: 'pip install openai',
      code: [
        'import base64',
        'import os',
        'from openai import OpenAI',
        '',
        `client = OpenAI(base_url="${v1}", api_key=os.environ["MODELGATE_API_KEY"])`,
        'result = client.images.generate(',
        `    model="${image}",`,
        `    prompt="${IMAGE_PROMPT}",`,
        '    size="1024x1024",',
        ...(base64Asked ? ['    response_format="b64_json",'] : []),
        ')',
        'with open("image.png", "wb") as file:',
        '    file.write(base64.b64decode(result.data[0].b64_json))',
      ].join('\n'),
    },
    {
      id: 'transcription-curl',
      title: 'Transcription: curl',
      description: `The text of ${AUDIO_FILE}, uploaded as a form.`,
      code: [
        `curl ${v1}/audio/transcriptions \\`,
        `  -H "Authorization: Bearer ${KEY_PLACEHOLDER}" \\`,
        `  -F model=${transcription} \\`,
        `  -F file=@${AUDIO_FILE}`,
      ].join('\n'),
    },
    {
      id: 'transcription-openai-node',
      title: 'Transcription: OpenAI SDK (TypeScript)',
      description: 'npm install openai',
      code: [
        "import fs from 'node:fs';",
        "import OpenAI from 'openai';",
        '',
        `const client = new OpenAI({ baseURL: '${v1}', apiKey: process.env.MODELGATE_API_KEY });`,
        'const transcription = await client.audio.transcriptions.create({',
        `  model: '${transcription}',`,
        `  file: fs.createReadStream('${AUDIO_FILE}'),`,
        '});',
        'console.log(transcription.text);',
      ].join('\n'),
    },
    {
      id: 'transcription-openai-python',
      title: 'Transcription: OpenAI SDK (Python)',
      description: 'pip install openai',
      code: [
        'import os',
        'from openai import OpenAI',
        '',
        `client = OpenAI(base_url="${v1}", api_key=os.environ["MODELGATE_API_KEY"])`,
        `with open("${AUDIO_FILE}", "rb") as audio:`,
        `    transcription = client.audio.transcriptions.create(model="${transcription}", file=audio)`,
        'print(transcription.text)',
      ].join('\n'),
    },
  ];
}
