import type { CountTokensBody, MessagesBody } from './request';
import type { ChatRequest, ContentPart, ReasoningRequest, ResponseFormat, ToolChoice, ToolDefinition } from '../../core/chat';
import { isJsonObject } from '../../core/json';
import { extrasOf, invalidAt, textPartOf, turnsOf } from './content-to-internal';

type Body = CountTokensBody & Partial<MessagesBody>;

/**
 * The longest end-user id OpenAI accepts (OpenRouter: 128). Claude Code's `metadata.user_id`
 * (account and session ids, about 150 characters) would fail the request there: a longer one is
 * not sent, which changes nothing the client sees or pays.
 */
const MAX_USER_LENGTH = 64;

/** The system prompt: a string, or text blocks (their `cache_control` kept); an empty one is none. */
function systemOf(system: Body['system']): ContentPart[] {
  if (system === undefined || system === null || system === '') return [];
  if (typeof system === 'string') return [{ type: 'text', text: system }];
  return system.map((block, i) => {
    if (block.type !== 'text') throw invalidAt(`system.${i}.type`, 'system blocks must be text blocks');
    return textPartOf(block, `system.${i}`);
  });
}

/**
 * Custom tools. Anthropic's server tools (a `type` such as `web_search_20250305` or
 * `bash_20250124`) run at Anthropic only and are dropped. Undefined when none is left.
 */
function toolsOf(tools: Body['tools']): ToolDefinition[] | undefined {
  const custom: ToolDefinition[] = [];
  for (const tool of tools ?? []) {
    if (tool.type && tool.type !== 'custom') continue;
    custom.push({
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      ...(tool.input_schema ? { parameters: tool.input_schema } : {}),
      ...extrasOf(tool),
    });
  }
  return custom.length > 0 ? custom : undefined;
}

/** Anthropic's tool_choice in internal terms; a forced tool that is not among `tools` (a dropped server tool) is no choice. */
function toolChoiceOf(choice: Body['tool_choice'], tools: ToolDefinition[]): ToolChoice | undefined {
  switch (choice?.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return tools.some((tool) => tool.name === choice.name) ? { name: choice.name } : undefined;
    default:
      return undefined;
  }
}

/** The tool fields: with no custom tool left, a choice or parallelism setting means nothing upstream. */
function toolFieldsOf(body: Body): Pick<ChatRequest, 'tools' | 'toolChoice' | 'parallelToolCalls'> {
  const tools = toolsOf(body.tools);
  if (!tools) return {};
  const choice = body.tool_choice;
  const toolChoice = toolChoiceOf(choice, tools);
  return {
    tools,
    ...(toolChoice ? { toolChoice } : {}),
    ...(choice && 'disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use === true ? { parallelToolCalls: false } : {}),
  };
}

/** `output_config.effort` in internal terms: Anthropic's levels above `high` are the highest others know. */
const EFFORTS = new Map<unknown, ReasoningRequest['effort']>([
  ['low', 'low'],
  ['medium', 'medium'],
  ['high', 'high'],
  ['xhigh', 'high'],
  ['max', 'high'],
]);

/** `output_config`: an effort level and a JSON output format. */
function outputConfigOf(body: Body): Record<string, unknown> {
  const config = body.output_config;
  if (config === undefined || config === null) return {};
  if (!isJsonObject(config)) throw invalidAt('output_config', 'must be an object');
  return config;
}

/**
 * Thinking: `enabled` with its budget; `adaptive` (the model decides) with the effort asked for,
 * if any; `disabled` and other modes none (each provider's default).
 */
function reasoningOf(body: Body, effort: unknown): ReasoningRequest | undefined {
  const thinking = body.thinking;
  if (thinking?.type === 'enabled' && typeof thinking.budget_tokens === 'number') return { budgetTokens: thinking.budget_tokens };
  const level = thinking?.type === 'disabled' ? undefined : EFFORTS.get(effort);
  return level ? { effort: level } : undefined;
}

/**
 * A JSON schema the answer must follow. Dropped, it would change what the client gets (free text
 * where it expects JSON), so a format that cannot be read is a 400.
 */
function responseFormatOf(format: unknown): ResponseFormat | undefined {
  if (format === undefined || format === null) return undefined;
  if (!isJsonObject(format) || format.type !== 'json_schema' || !isJsonObject(format.schema)) {
    throw invalidAt('output_config.format', 'must be {"type": "json_schema", "schema": {...}}');
  }
  return { type: 'json_schema', schema: format.schema };
}

/**
 * An Anthropic Messages request (docs/api.md 2.9) in the internal form, for a channel of another
 * dialect (2.6). A count_tokens body has no `max_tokens` or `stream`. Throws AppError
 * `invalid_request` (param = the block's path) for a block it cannot read. Dropped as having no
 * equivalent: `top_k`, top-level `cache_control`, `service_tier`, `container`, `mcp_servers` and
 * the like.
 */
export function chatRequestFromAnthropic(body: Body): ChatRequest {
  const output = outputConfigOf(body);
  const stop = body.stop_sequences ?? undefined;
  const user = body.metadata?.user_id;
  const reasoning = reasoningOf(body, output.effort);
  const responseFormat = responseFormatOf(output.format);
  return {
    model: body.model,
    system: systemOf(body.system),
    messages: body.messages.flatMap((message, index) => turnsOf(message, index)),
    ...(body.max_tokens === undefined ? {} : { maxTokens: body.max_tokens }),
    ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
    ...(typeof body.top_p === 'number' ? { topP: body.top_p } : {}),
    ...(stop && stop.length > 0 ? { stop } : {}),
    ...toolFieldsOf(body),
    ...(responseFormat ? { responseFormat } : {}),
    ...(reasoning ? { reasoning } : {}),
    stream: body.stream === true,
    ...(user && user.length <= MAX_USER_LENGTH ? { user } : {}),
  };
}
