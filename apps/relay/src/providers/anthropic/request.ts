import { AppError } from '@modelgate/errors';
import type { ChatRequest, ReasoningRequest, ToolChoice, ToolDefinition } from '../../core/chat';
import { messagesOf, systemOf } from './content';
import type { MessageParam, MessagesRequestBody, ToolChoiceParam } from './wire';

/** Anthropic requires `max_tokens`: this is it when the client set none (docs/api.md 2.6). */
export const DEFAULT_MAX_TOKENS = 4096;

/** Anthropic's smallest `thinking.budget_tokens`. */
const MIN_THINKING_BUDGET = 1024;

/** Thinking budgets for OpenAI's reasoning efforts (LiteLLM's, raised to Anthropic's minimum). */
const EFFORT_BUDGETS: Record<NonNullable<ReasoningRequest['effort']>, number> = {
  minimal: MIN_THINKING_BUDGET,
  low: MIN_THINKING_BUDGET,
  medium: 2048,
  high: 4096,
};

/** OpenAI's temperature goes to 2, Anthropic's to 1. */
const MAX_TEMPERATURE = 1;

/**
 * Anthropic refuses a `metadata.user_id` that looks like an email address or a phone number
 * (it wants an opaque id): such an id is not sent rather than failing the request.
 */
const PERSONAL_USER_ID = /@|^\+?[\d\s().-]{7,}$/;

/**
 * The thinking budget the client asked for, if any: its own budget (0 turns thinking off, as
 * Gemini's `thinkingBudget` does), else the one of its effort; a negative budget is Gemini's
 * "dynamic" and gets its effort's budget, medium by default.
 */
function thinkingBudgetOf(reasoning: ReasoningRequest | undefined): number | undefined {
  if (!reasoning) return undefined;
  const { budgetTokens, effort } = reasoning;
  if (budgetTokens === 0) return undefined;
  if (budgetTokens !== undefined && budgetTokens > 0) return Math.max(MIN_THINKING_BUDGET, budgetTokens);
  if (effort) return EFFORT_BUDGETS[effort];
  return budgetTokens === undefined ? undefined : EFFORT_BUDGETS.medium;
}

/**
 * With thinking on, Anthropic requires the assistant turn whose tool calls are being answered to
 * start with its signed thinking block. A client that could not keep it (OpenAI chat carries no
 * signature) would get a 400 on every tool round trip, so such a request goes without thinking.
 */
function answersToolTurnWithoutThinking(messages: MessageParam[]): boolean {
  const last = messages.at(-1);
  const assistant = messages.at(-2);
  if (last?.role !== 'user' || last.content[0]?.type !== 'tool_result' || assistant?.role !== 'assistant') return false;
  const first = assistant.content[0]?.type;
  return first !== 'thinking' && first !== 'redacted_thinking';
}

function toolOf(tool: ToolDefinition): NonNullable<MessagesRequestBody['tools']>[number] {
  return {
    ...tool.extras,
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    // Anthropic requires an object schema; OpenAI lets a tool omit its parameters.
    input_schema: { type: 'object', properties: {}, ...tool.parameters },
  };
}

/** Anthropic's tool_choice; `parallelToolCalls: false` alone still needs one to carry it. */
function toolChoiceOf(choice: ToolChoice | undefined, parallelToolCalls: boolean | undefined): ToolChoiceParam | undefined {
  const parallel = parallelToolCalls === false ? { disable_parallel_tool_use: true as const } : {};
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...parallel };
  if (typeof choice === 'object') return { type: 'tool', name: choice.name, ...parallel };
  if (choice === 'auto' || parallelToolCalls === false) return { type: 'auto', ...parallel };
  return undefined;
}

/**
 * Sampling settings Anthropic accepts: none with thinking on, and only one of temperature and
 * top_p (current models refuse both; temperature, the one clients mean, is kept).
 */
function samplingOf(request: ChatRequest, thinking: boolean): Pick<MessagesRequestBody, 'temperature' | 'top_p'> {
  if (thinking) return {};
  if (request.temperature !== undefined) return { temperature: Math.min(Math.max(request.temperature, 0), MAX_TEMPERATURE) };
  return request.topP === undefined ? {} : { top_p: request.topP };
}

/**
 * The Messages API body for an internal chat request (docs/api.md 2.6). Response formats and seeds
 * have no Anthropic equivalent and are dropped; more than one choice cannot be had (400).
 */
export function messagesRequestOf(upstreamModel: string, request: ChatRequest): MessagesRequestBody {
  if (request.n !== undefined && request.n > 1) {
    throw new AppError('invalid_request', 'n: Anthropic returns one choice; n must be 1', { param: 'n' });
  }
  const messages = messagesOf(request.messages);
  const budget = answersToolTurnWithoutThinking(messages) ? undefined : thinkingBudgetOf(request.reasoning);
  const output = request.maxTokens ?? DEFAULT_MAX_TOKENS;
  const body: MessagesRequestBody = {
    model: upstreamModel,
    // budget_tokens must stay below max_tokens: thinking then comes on top of the output asked for.
    max_tokens: budget !== undefined && output <= budget ? budget + output : output,
    messages,
    ...samplingOf(request, budget !== undefined),
  };
  const system = systemOf(request.system);
  if (system !== undefined) body.system = system;
  if (request.stop?.length) body.stop_sequences = request.stop;
  if (request.user && !PERSONAL_USER_ID.test(request.user)) body.metadata = { user_id: request.user };
  if (request.tools?.length) {
    body.tools = request.tools.map(toolOf);
    const toolChoice = toolChoiceOf(request.toolChoice, request.parallelToolCalls);
    if (toolChoice) body.tool_choice = toolChoice;
  }
  if (budget !== undefined) body.thinking = { type: 'enabled', budget_tokens: budget };
  if (request.stream) body.stream = true;
  return body;
}
