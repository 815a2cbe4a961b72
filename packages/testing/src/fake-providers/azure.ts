// Fake Azure OpenAI: the OpenAI fake's answers behind Azure's routes, key and errors.
// - POST /openai/deployments/{deployment}/chat/completions | completions | embeddings | images/generations
//   | images/edits | audio/speech | audio/transcriptions | audio/translations?api-version=...
//   (api-version required: else 400 MissingApiVersionParameter); the deployment is answered as the
//   model unless the body names one.
// - POST /openai/v1/chat/completions | completions | embeddings | responses and the same media routes (the v1 API: no
//   api-version, the model in the body).
// - Key in `api-key` (any non-empty value; missing: 401 "Access denied ..."), recorded as
//   `cloud: {model: deployment, auth: 'api-key'}`.
// - Chat answers carry `prompt_filter_results` and per choice `content_filter_results` (all
//   "safe"); streams start with Azure's `choices: []` chunk holding `prompt_filter_results`.
// - Errors in Azure's shape `{error: {code, message}}` (error400 and error500 are the model's, in
//   OpenAI's shape as Azure passes them on); `contentFilter` mode: 400 `content_filter` with
//   `innererror.code` ResponsibleAIPolicyViolation, before any answer (streams too).
import type { IncomingHttpHeaders } from 'node:http';
import { openAiProvider } from './openai';
import {
  type Answer,
  type AnswerContext,
  type ErrorReply,
  type FakeProvider,
  isObject,
  type JsonObject,
  jsonAnswer,
  type Operation,
} from './shared';

const MEDIA = 'images/generations|images/edits|audio/speech|audio/transcriptions|audio/translations';
const DEPLOYMENT_ROUTE = new RegExp(`^/openai/deployments/([^/]+)/(chat/completions|completions|embeddings|${MEDIA})$`);
const V1_ROUTE = new RegExp(`^/openai/v1/(chat/completions|completions|embeddings|responses|${MEDIA})$`);

const reply = (status: number, code: string, message: string): ErrorReply => ({ status, body: { error: { code, message } } });

const ACCESS_DENIED = reply(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.');
const MISSING_API_VERSION = reply(400, 'MissingApiVersionParameter', 'The api-version query parameter (?api-version=) is required for all requests.');

const SAFE = { filtered: false, severity: 'safe' };
const PROMPT_FILTER_RESULTS = [{
  prompt_index: 0,
  content_filter_results: { hate: SAFE, jailbreak: { filtered: false, detected: false }, self_harm: SAFE, sexual: SAFE, violence: SAFE },
}];
const CONTENT_FILTER_RESULTS = {
  hate: SAFE,
  protected_material_code: { filtered: false, detected: false },
  protected_material_text: { filtered: false, detected: false },
  self_harm: SAFE,
  sexual: SAFE,
  violence: SAFE,
};

const contentFilterRefusal = (): ErrorReply => ({
  status: 400,
  body: {
    error: {
      message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
      type: null,
      param: 'prompt',
      code: 'content_filter',
      status: 400,
      innererror: {
        code: 'ResponsibleAIPolicyViolation',
        content_filter_result: { ...PROMPT_FILTER_RESULTS[0]?.content_filter_results, violence: { filtered: true, severity: 'medium' } },
      },
    },
  },
});

/** The OpenAI chat answer with Azure's content filter results added. */
function withFilterResults(answer: Answer): Answer {
  if (answer.stream) {
    const promptChunk = { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: PROMPT_FILTER_RESULTS };
    return { ...answer, events: [`data: ${JSON.stringify(promptChunk)}\n\n`, ...answer.events], cutAfter: answer.cutAfter + 1 };
  }
  if (answer.status !== 200) return answer;
  const whole = JSON.parse(answer.body) as JsonObject;
  const choices = Array.isArray(whole.choices) ? whole.choices.map((choice: unknown) => (isObject(choice) ? { ...choice, content_filter_results: CONTENT_FILTER_RESULTS } : choice)) : [];
  return jsonAnswer({ ...whole, choices, prompt_filter_results: PROMPT_FILTER_RESULTS }, answer.contentType);
}

/** The OpenAI operation of an Azure route, with the deployment as the default model. */
function azureOperation(suffix: string, deployment: string | undefined): Operation | undefined {
  const operation = openAiProvider.operation(`/v1/${suffix}`);
  if (!operation) return undefined;
  const chat = suffix === 'chat/completions';
  return (body: JsonObject, context: AnswerContext) => {
    const answer = operation(deployment === undefined ? body : { model: deployment, ...body }, context);
    return chat ? withFilterResults(answer) : answer;
  };
}

const apiKey = (headers: IncomingHttpHeaders): string => String(headers['api-key'] ?? '');

export const azureProvider: FakeProvider = {
  ...openAiProvider,
  dialect: 'azure',
  operation(path) {
    if (!path.startsWith('/openai/')) return undefined;
    const deployment = DEPLOYMENT_ROUTE.exec(path);
    if (deployment) return azureOperation(deployment[2] ?? '', decodeURIComponent(deployment[1] ?? ''));
    const v1 = V1_ROUTE.exec(path);
    return v1 ? azureOperation(v1[1] ?? '', undefined) : undefined;
  },
  apiKey,
  checkRequest(request) {
    if (!apiKey(request.headers)) return ACCESS_DENIED;
    const deployment = DEPLOYMENT_ROUTE.exec(request.path);
    const body = request.form?.fields ?? request.json;
    const model = deployment ? decodeURIComponent(deployment[1] ?? '') : isObject(body) ? body.model : undefined;
    request.cloud = { model: typeof model === 'string' ? model : undefined, auth: 'api-key' };
    if (deployment && !new URL(request.url, 'http://fake').searchParams.get('api-version')) return MISSING_API_VERSION;
    return undefined;
  },
  faults: {
    error400: openAiProvider.faults.error400,
    error401: () => ACCESS_DENIED,
    error403: () => reply(403, '403', 'Access denied due to Virtual Network/Firewall rules.'),
    error429: () => reply(429, '429', 'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 seconds.'),
    quotaExhausted: () => ({
      status: 429,
      body: { error: { code: 'insufficient_quota', message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota' } },
    }),
    error500: openAiProvider.faults.error500,
    overloaded: () => reply(503, 'ServiceUnavailable', 'The service is temporarily unable to process your request. Please try again later.'),
    contentFilter: contentFilterRefusal,
  },
};
