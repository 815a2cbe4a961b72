// Fake AWS Bedrock runtime: POST /model/{modelId}/invoke, /invoke-with-response-stream, /converse and
// /converse-stream (modelId percent-encoded, inference profiles like `us.anthropic.claude-...-v1:0`
// included). Recorded as `cloud: {model, region, auth}`.
// - Auth: SigV4 (service `bedrock`, any region) checked by signing the request again as received
//   with FAKE_AWS_SECRET_ACCESS_KEY: key id FAKE_AWS_ACCESS_KEY_ID without a session token, or
//   FAKE_AWS_SESSION_ACCESS_KEY_ID with `x-amz-security-token: FAKE_AWS_SESSION_TOKEN`; or
//   `Authorization: Bearer FAKE_BEDROCK_API_KEY`. Unknown key or token: 403 UnrecognizedClientException;
//   bad signature, wrong service or a date off by more than 5 minutes: 403 InvalidSignatureException;
//   none: 403 MissingAuthenticationTokenException.
// - Errors: `x-amzn-ErrorType` header and `{message}`: error400 ValidationException, error401 403
//   UnrecognizedClientException, error403 AccessDeniedException, error429 ThrottlingException,
//   quotaExhausted ThrottlingException "Too many tokens per day" (how Bedrock reports its daily token
//   quota), error500 InternalServerException, overloaded (and errorMidStream on whole answers) 503
//   ServiceUnavailableException.
// - InvokeModel: the Anthropic Messages body with `anthropic_version: "bedrock-2023-05-31"`, without
//   `model` and `stream` (else 400 ValidationException), answered by the fake Anthropic (the model id
//   as `model`). The stream sends each Anthropic event as one `chunk` frame `{"bytes": base64 JSON}`;
//   message_stop carries `amazon-bedrock-invocationMetrics`.
// - Converse: the Anthropic fake's rules in Converse shapes: `chunks` pieces of text capped by
//   `inferenceConfig.maxTokens` (stopReason max_tokens, else end_turn); inputTokens one per word (system,
//   text, toolUse input and toolResult content as JSON text), 258 per image / document / video block;
//   cacheRead/WriteInputTokens = `cachedTokens` / `cacheWriteTokens` (reported when not 0, outside
//   inputTokens, inside totalTokens); a toolUse `tooluse_fake<n>` of the forced (`toolChoice.tool`)
//   or first tool with FAKE_TOOL_ARGUMENTS when tools are offered and the last message holds no
//   toolResult (stopReason tool_use, 10 output tokens); a first reasoningContent block (FAKE_THOUGHT,
//   signature `sig-fake-<n>`, 3 output tokens) when `additionalModelRequestFields.thinking.type` or
//   `.reasoningConfig.type` is `enabled`. ConverseStream: messageStart, contentBlockDelta (reasoning
//   text then signature, text pieces, or after a contentBlockStart the toolUse input in two pieces),
//   contentBlockStop per block, messageStop, metadata (usage, metrics).
// - Stream faults: errorMidStream ends with a `modelStreamErrorException` exception frame;
//   malformedSse sends a frame whose message CRC is wrong; oversized one frame of that size.
import { crc32 } from 'node:zlib';
import { Hash } from '@smithy/hash-node';
import { EventStreamCodec, HeaderMarshaller, type MessageHeaders } from '@smithy/eventstream-codec';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { messages as anthropicMessages } from './anthropic';
import {
  type Answer,
  type AnswerContext,
  asArray,
  bearerToken,
  type ErrorReply,
  errorAnswer,
  FAKE_THOUGHT,
  FAKE_THOUGHT_TOKENS,
  FAKE_TOOL_ARGUMENT_PIECES,
  FAKE_TOOL_ARGUMENTS,
  FAKE_TOOL_CALL_TOKENS,
  type FakeProvider,
  isObject,
  type JsonObject,
  jsonAnswer,
  MEDIA_PART_TOKENS,
  type Operation,
  OVERSIZED_PADDING,
  type RecordedRequest,
  type StreamAnswer,
  type StreamEvent,
  type StreamFraming,
  textPieces,
  toolToCall,
  wordsIn,
  wordsInJson,
} from './shared';

/** Long-term AWS credentials the fake accepts (no session token). */
export const FAKE_AWS_ACCESS_KEY_ID = 'AKIAFAKEMODELGATE001';
export const FAKE_AWS_SECRET_ACCESS_KEY = 'fakeSecretAccessKey/ModelGate+0000000000';
/** Temporary credentials: this key id (with FAKE_AWS_SECRET_ACCESS_KEY) needs `x-amz-security-token: FAKE_AWS_SESSION_TOKEN`. */
export const FAKE_AWS_SESSION_ACCESS_KEY_ID = 'ASIAFAKEMODELGATE001';
export const FAKE_AWS_SESSION_TOKEN = 'FakeSessionToken//ModelGate+Session/Token0000000000000000';
/** A Bedrock API key, sent as `Authorization: Bearer`. */
export const FAKE_BEDROCK_API_KEY = 'ABSKfakeBedrockApiKeyModelGate0000000000';

const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';
const ROUTE = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream)$/;
const SIGV4_AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/\d{8}\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;
/** Headers the signer adds itself: the date, the session token and the hash of the body as received. */
const SIGNER_HEADERS: ReadonlySet<string> = new Set(['x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256']);
const LATENCY_MS = 100;

const awsError = (status: number, type: string, message: string): ErrorReply => ({
  status,
  body: { message },
  headers: { 'x-amzn-ErrorType': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
});
const validation = (message: string) => awsError(400, 'ValidationException', message);
const unrecognizedClient = () => awsError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
const invalidSignature = (message: string) => awsError(403, 'InvalidSignatureException', message);
const SIGNATURE_MISMATCH = 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

// AWS event-stream frames: prelude (lengths, CRC), typed headers, payload, message CRC.
const codec = new EventStreamCodec(toUtf8, fromUtf8);
const headerMarshaller = new HeaderMarshaller(toUtf8, fromUtf8);
const stringHeader = (value: string) => ({ type: 'string' as const, value });
const eventHeaders = (eventType: string): MessageHeaders => ({
  ':event-type': stringHeader(eventType),
  ':content-type': stringHeader('application/json'),
  ':message-type': stringHeader('event'),
});
const frame = (headers: MessageHeaders, payload: unknown): Uint8Array => codec.encode({ headers, body: fromUtf8(JSON.stringify(payload)) });
const eventFrame = (eventType: string, payload: unknown): Uint8Array => frame(eventHeaders(eventType), payload);
const chunkFrame = (json: string): Uint8Array => eventFrame('chunk', { bytes: Buffer.from(json).toString('base64') });

function uint32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes;
}

/** A chunk frame of `{"padding":"aaa..."}`; its length and CRCs are computed without holding the padding. */
function oversizedFrame(bytes: number): { head: Buffer; tail: Buffer } {
  const headers = headerMarshaller.format(eventHeaders('chunk'));
  const open = Buffer.from('{"padding":"');
  const close = Buffer.from('"}');
  const prelude = Buffer.concat([uint32(12 + headers.length + open.length + bytes + close.length + 4), uint32(headers.length)]);
  const head = Buffer.concat([prelude, uint32(crc32(prelude)), headers, open]);
  let crc = crc32(head);
  for (let left = bytes; left > 0; left -= OVERSIZED_PADDING.length) {
    crc = crc32(left >= OVERSIZED_PADDING.length ? OVERSIZED_PADDING : OVERSIZED_PADDING.subarray(0, left), crc);
  }
  return { head, tail: Buffer.concat([close, uint32(crc32(close, crc))]) };
}

const EVENT_STREAM: StreamFraming = { contentType: 'application/vnd.amazon.eventstream', oversized: oversizedFrame };

/** A valid chunk frame whose message CRC (its last 4 bytes) is off by one. */
function brokenCrcFrame(): Uint8Array {
  const bytes = Buffer.from(chunkFrame('{"type":"ping"}'));
  bytes.writeUInt32BE((bytes.readUInt32BE(bytes.length - 4) + 1) >>> 0, bytes.length - 4);
  return bytes;
}

const streamException = (type: string, message: string): Uint8Array => frame({
  ':exception-type': stringHeader(type),
  ':content-type': stringHeader('application/json'),
  ':message-type': stringHeader('exception'),
}, { message });

const header = (request: RecordedRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

function signingDate(amzDate: string | undefined): Date | undefined {
  const parts = AMZ_DATE.exec(amzDate ?? '');
  if (!parts) return undefined;
  const [year, month, day, hours, minutes, seconds] = parts.slice(1).map(Number) as [number, number, number, number, number, number];
  return new Date(Date.UTC(year, month - 1, day, hours, minutes, seconds));
}

/** Checks a SigV4 signature by signing the request again as received, with the signed headers only. */
async function checkSignature(request: RecordedRequest, authorization: RegExpExecArray, verify: boolean): Promise<ErrorReply | undefined> {
  const [, keyId = '', region = '', service, signedHeaders = '', signature] = authorization;
  request.cloud = { ...request.cloud, region, auth: 'sigv4' };
  const token = header(request, 'x-amz-security-token');
  const knownKey = keyId === FAKE_AWS_ACCESS_KEY_ID || keyId === FAKE_AWS_SESSION_ACCESS_KEY_ID;
  if (!knownKey || token !== (keyId === FAKE_AWS_SESSION_ACCESS_KEY_ID ? FAKE_AWS_SESSION_TOKEN : undefined)) return unrecognizedClient();
  if (service !== 'bedrock') return invalidSignature("Credential should be scoped to correct service: 'bedrock'.");
  const date = signingDate(header(request, 'x-amz-date'));
  if (!date) return awsError(403, 'IncompleteSignatureException', "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
  if (Math.abs(Date.now() - date.getTime()) > MAX_CLOCK_SKEW_MS) return invalidSignature(`Signature expired: ${header(request, 'x-amz-date')} is out of the 5 minute window.`);
  if (!verify) return undefined;

  const names = signedHeaders.split(';');
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = header(request, name);
    if (value !== undefined && !SIGNER_HEADERS.has(name)) headers[name] = value;
  }
  const query: Record<string, string[]> = {};
  for (const [name, value] of new URL(request.url, 'http://fake').searchParams) (query[name] ??= []).push(value);
  const signer = new SignatureV4({
    service: 'bedrock',
    region,
    credentials: { accessKeyId: keyId, secretAccessKey: FAKE_AWS_SECRET_ACCESS_KEY, sessionToken: names.includes('x-amz-security-token') ? token : undefined },
    // node:crypto, as the AWS SDK signs in Node: the fake is also the benchmark's upstream.
    sha256: Hash.bind(null, 'sha256'),
    uriEscapePath: true,
    applyChecksum: names.includes('x-amz-content-sha256'),
  });
  const signed = await signer.sign(new HttpRequest({ method: request.method, protocol: 'http:', hostname: 'fake', path: request.path, query, headers, body: request.body }), { signingDate: date });
  return SIGV4_AUTHORIZATION.exec(String(signed.headers.authorization))?.[5] === signature ? undefined : invalidSignature(SIGNATURE_MISMATCH);
}

async function checkRequest(request: RecordedRequest, { verifySignatures }: { verifySignatures: boolean }): Promise<ErrorReply | undefined> {
  const route = ROUTE.exec(request.path);
  request.cloud = { model: route ? decodeURIComponent(route[1] ?? '') : undefined };
  const authorization = header(request, 'authorization') ?? '';
  const sigV4 = SIGV4_AUTHORIZATION.exec(authorization);
  if (sigV4) return checkSignature(request, sigV4, verifySignatures);
  if (!/^Bearer\s/i.test(authorization)) return awsError(403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
  request.cloud.auth = 'bearer';
  return bearerToken(request.headers) === FAKE_BEDROCK_API_KEY ? undefined : unrecognizedClient();
}

/** The data of a server-sent event (`event: ...\ndata: <json>\n\n`). */
const sseData = (event: StreamEvent): string => {
  const text = Buffer.from(event).toString('utf8');
  return text.slice(text.indexOf('data: ') + 'data: '.length).trimEnd();
};

/** The Anthropic stream as Bedrock frames it: one chunk per event, invocation metrics on message_stop. */
function invokeStream(answer: StreamAnswer, withUsage: boolean): StreamAnswer {
  let inputTokenCount = 0;
  let outputTokenCount = 0;
  const events = answer.events.map((event) => {
    const payload = JSON.parse(sseData(event)) as JsonObject;
    if (payload.type === 'message_start' && isObject(payload.message) && isObject(payload.message.usage)) inputTokenCount = Number(payload.message.usage.input_tokens);
    if (payload.type === 'message_delta' && isObject(payload.usage)) outputTokenCount = Number(payload.usage.output_tokens);
    if (payload.type === 'message_stop' && withUsage) {
      payload['amazon-bedrock-invocationMetrics'] = { inputTokenCount, outputTokenCount, invocationLatency: LATENCY_MS, firstByteLatency: LATENCY_MS / 2 };
    }
    return chunkFrame(JSON.stringify(payload));
  });
  // The content type of the model's own chunks, as Bedrock reports it beside the event stream's.
  return { stream: true, events, cutAfter: answer.cutAfter, headers: { 'x-amzn-bedrock-content-type': 'application/json' } };
}

/** InvokeModel and InvokeModelWithResponseStream: the fake Anthropic behind Bedrock's body rules. */
function invoke(modelId: string, stream: boolean): Operation {
  return (body, context) => {
    if (body.anthropic_version === undefined) return errorAnswer(validation('Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again.'));
    if (body.anthropic_version !== BEDROCK_ANTHROPIC_VERSION) return errorAnswer(validation('Invalid API version'));
    for (const field of ['model', 'stream']) {
      if (field in body) return errorAnswer(validation(`Malformed input request: #: extraneous key [${field}] is not permitted, please reformat your input and try again.`));
    }
    const answer = anthropicMessages({ ...body, model: modelId, stream }, context);
    if (answer.stream) return invokeStream(answer, context.withUsage);
    if (answer.status === 200) return answer;
    const refusal = JSON.parse(answer.body) as { error?: { message?: string } };
    return errorAnswer(validation(`Malformed input request: ${refusal.error?.message ?? ''}`));
  };
}

function blockTokens(block: unknown): number {
  if (!isObject(block)) return 0;
  if (typeof block.text === 'string') return wordsIn(block.text);
  if (isObject(block.toolUse)) return wordsInJson(block.toolUse.input);
  if (isObject(block.toolResult)) return asArray(block.toolResult.content).reduce<number>((sum, part) => sum + (isObject(part) && part.json !== undefined ? wordsInJson(part.json) : blockTokens(part)), 0);
  if (isObject(block.image) || isObject(block.document) || isObject(block.video)) return MEDIA_PART_TOKENS;
  return 0;
}

function converseInputTokens(body: JsonObject): number {
  let total = asArray(body.system).reduce<number>((sum, block) => sum + blockTokens(block), 0);
  for (const message of asArray(body.messages)) if (isObject(message)) for (const block of asArray(message.content)) total += blockTokens(block);
  return total;
}

/** The tool a Converse request gets called, if any (see the rules at the top). */
function converseTool(body: JsonObject): string | undefined {
  const config = isObject(body.toolConfig) ? body.toolConfig : {};
  const offered = asArray(config.tools).flatMap((tool) => (isObject(tool) && isObject(tool.toolSpec) && typeof tool.toolSpec.name === 'string' ? [tool.toolSpec.name] : []));
  const choice = isObject(config.toolChoice) ? config.toolChoice : {};
  const forced = isObject(choice.tool) && typeof choice.tool.name === 'string' ? choice.tool.name : undefined;
  const last = asArray(body.messages).at(-1);
  const endsWithToolResult = isObject(last) && asArray(last.content).some((block) => isObject(block) && isObject(block.toolResult));
  return toolToCall(offered, forced, false, endsWithToolResult);
}

const enabled = (value: unknown): boolean => isObject(value) && value.type === 'enabled';

function converse(stream: boolean): Operation {
  return (body: JsonObject, { settings, sequence, withUsage }: AnswerContext): Answer => {
    const config = isObject(body.inferenceConfig) ? body.inferenceConfig : {};
    const fields = isObject(body.additionalModelRequestFields) ? body.additionalModelRequestFields : {};
    const reasoning = enabled(fields.thinking) || enabled(fields.reasoningConfig);
    const tool = converseTool(body);
    const { pieces, capped } = textPieces(settings, config.maxTokens);
    const inputTokens = converseInputTokens(body);
    const outputTokens = (reasoning ? FAKE_THOUGHT_TOKENS : 0) + (tool ? FAKE_TOOL_CALL_TOKENS : pieces);
    const usage = {
      inputTokens,
      outputTokens,
      totalTokens: inputTokens + outputTokens + settings.cachedTokens + settings.cacheWriteTokens,
      ...(settings.cachedTokens > 0 ? { cacheReadInputTokens: settings.cachedTokens } : {}),
      ...(settings.cacheWriteTokens > 0 ? { cacheWriteInputTokens: settings.cacheWriteTokens } : {}),
    };
    const tail = { ...(withUsage ? { usage } : {}), metrics: { latencyMs: LATENCY_MS } };
    const stopReason = tool ? 'tool_use' : capped ? 'max_tokens' : 'end_turn';
    const signature = `sig-fake-${sequence}`;
    const toolUseId = `tooluse_fake${sequence}`;

    if (!stream) {
      const content: JsonObject[] = reasoning ? [{ reasoningContent: { reasoningText: { text: FAKE_THOUGHT, signature } } }] : [];
      content.push(tool ? { toolUse: { toolUseId, name: tool, input: FAKE_TOOL_ARGUMENTS } } : { text: settings.textPiece.repeat(pieces) });
      return jsonAnswer({ output: { message: { role: 'assistant', content } }, stopReason, ...tail });
    }

    const events = [eventFrame('messageStart', { role: 'assistant' })];
    let contentBlockIndex = 0;
    const deltas = (list: JsonObject[]) => {
      for (const delta of list) events.push(eventFrame('contentBlockDelta', { contentBlockIndex, delta }));
    };
    const stop = () => {
      events.push(eventFrame('contentBlockStop', { contentBlockIndex }));
      contentBlockIndex += 1;
    };
    if (reasoning) {
      deltas([{ reasoningContent: { text: FAKE_THOUGHT } }, { reasoningContent: { signature } }]);
      stop();
    }
    let cutAfter: number;
    if (tool) {
      events.push(eventFrame('contentBlockStart', { contentBlockIndex, start: { toolUse: { toolUseId, name: tool } } }));
      cutAfter = events.length + 1;
      deltas(FAKE_TOOL_ARGUMENT_PIECES.map((input) => ({ toolUse: { input } })));
    } else {
      cutAfter = events.length + Math.min(2, pieces);
      deltas(Array.from({ length: pieces }, () => ({ text: settings.textPiece })));
    }
    stop();
    events.push(eventFrame('messageStop', { stopReason }), eventFrame('metadata', tail));
    return { stream: true, events, cutAfter };
  };
}

const apiKey = (headers: RecordedRequest['headers']): string => {
  const authorization = String(headers.authorization ?? '');
  return SIGV4_AUTHORIZATION.exec(authorization)?.[1] ?? bearerToken(headers);
};

export const bedrockProvider: FakeProvider = {
  dialect: 'bedrock',
  operation(path) {
    if (!path.startsWith('/model/')) return undefined;
    const route = ROUTE.exec(path);
    if (!route) return undefined;
    const [, encodedId = '', action] = route;
    if (action === 'converse' || action === 'converse-stream') return converse(action === 'converse-stream');
    return invoke(decodeURIComponent(encodedId), action === 'invoke-with-response-stream');
  },
  apiKey,
  checkRequest,
  invalidJson: validation('Malformed input request, please reformat your input and try again.'),
  faults: {
    error400: (key) => validation(`The provided request is not valid (request with key ${key} to https://upstream.internal/model/invoke)`),
    error401: unrecognizedClient,
    error403: () => awsError(403, 'AccessDeniedException', "You don't have access to the model with the specified model ID."),
    error429: () => awsError(429, 'ThrottlingException', 'Too many requests, please wait before trying again.'),
    quotaExhausted: () => awsError(429, 'ThrottlingException', 'Too many tokens per day, please wait before trying again.'),
    error500: () => awsError(500, 'InternalServerException', 'The server encountered an internal error while processing the request.'),
    overloaded: () => awsError(503, 'ServiceUnavailableException', 'Bedrock is unable to process your request.'),
  },
  malformedEvent: brokenCrcFrame(),
  errorEvent: streamException('modelStreamErrorException', 'The model stream was interrupted. Please try again.'),
  framing: EVENT_STREAM,
};
