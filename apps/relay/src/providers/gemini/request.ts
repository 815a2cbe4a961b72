import type { ChatRequest, ReasoningRequest, ToolChoice, ToolDefinition } from '../../core/chat';
import type { UpstreamCall, UpstreamTarget } from '../../core/provider';
import { generateContentMethod, geminiCall } from './call';
import { contentsOf, systemInstructionOf } from './contents';

/**
 * Thinking budgets for an effort: low, medium and high as Google's own OpenAI-compatible endpoint
 * maps them; minimal is the smallest budget every Gemini 2.5 model accepts (Flash-Lite's floor,
 * and Pro cannot turn thinking off).
 */
const THINKING_BUDGET_BY_EFFORT: Record<NonNullable<ReasoningRequest['effort']>, number> = {
  minimal: 512,
  low: 1024,
  medium: 8192,
  high: 24576,
};

function thinkingConfigOf(reasoning: ReasoningRequest): Record<string, unknown> {
  const budget = reasoning.budgetTokens ?? (reasoning.effort && THINKING_BUDGET_BY_EFFORT[reasoning.effort]);
  return budget === undefined ? { includeThoughts: true } : { includeThoughts: true, thinkingBudget: budget };
}

function generationConfigOf(request: ChatRequest): Record<string, unknown> | undefined {
  const config: Record<string, unknown> = {
    maxOutputTokens: request.maxTokens,
    temperature: request.temperature,
    topP: request.topP,
    stopSequences: request.stop,
    candidateCount: request.n,
    seed: request.seed,
  };
  if (request.responseFormat) {
    config.responseMimeType = 'application/json';
    if (request.responseFormat.type === 'json_schema') config.responseJsonSchema = request.responseFormat.schema;
  }
  if (request.reasoning) config.thinkingConfig = thinkingConfigOf(request.reasoning);
  const defined = Object.entries(config).filter(([, value]) => value !== undefined);
  return defined.length === 0 ? undefined : Object.fromEntries(defined);
}

/** `parametersJsonSchema` takes the client's JSON Schema as is (`parameters` is an OpenAPI subset). */
function toolsOf(tools: ToolDefinition[]): unknown[] {
  const functionDeclarations = tools.map((tool) => ({
    name: tool.name,
    ...(tool.description !== undefined && { description: tool.description }),
    ...(tool.parameters !== undefined && { parametersJsonSchema: tool.parameters }),
  }));
  return [{ functionDeclarations }];
}

function functionCallingConfigOf(choice: ToolChoice): Record<string, unknown> {
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required') return { mode: 'ANY' };
  return { mode: 'ANY', allowedFunctionNames: [choice.name] };
}

/**
 * A chat request as a `generateContent` body, which Vertex AI's Gemini models take too. `user` and
 * `parallelToolCalls` have no Gemini counterpart and are dropped (docs/api.md 2.6).
 */
export function generateContentBody(request: ChatRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { contents: contentsOf(request.messages) };
  const systemInstruction = systemInstructionOf(request.system);
  if (systemInstruction) body.systemInstruction = systemInstruction;
  const tools = request.tools ?? [];
  if (tools.length > 0) {
    body.tools = toolsOf(tools);
    if (request.toolChoice) body.toolConfig = { functionCallingConfig: functionCallingConfigOf(request.toolChoice) };
  }
  const generationConfig = generationConfigOf(request);
  if (generationConfig) body.generationConfig = generationConfig;
  return body;
}

/** A chat request as `generateContent` (`streamGenerateContent?alt=sse` when streamed). */
export function chatRequest(channel: UpstreamTarget, upstreamModel: string, request: ChatRequest): UpstreamCall {
  return geminiCall(channel, upstreamModel, generateContentMethod(request.stream), generateContentBody(request));
}
