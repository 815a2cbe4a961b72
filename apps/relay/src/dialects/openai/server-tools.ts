import type { OfferedTool } from '../../features/billing/pricing';
import type { ServerToolCalls } from '../../core/chat';

/**
 * Responses tool types the client runs itself (function, custom and the local computer, shell and
 * patch tools). Every other type runs at OpenAI: a server tool, priced by its type without the
 * version date (`web_search_2025_08_26` is `web_search`), docs/api.md 2.14.
 */
const CLIENT_TOOL_TYPES: ReadonlySet<string> = new Set(['function', 'custom', 'computer_use_preview', 'computer', 'local_shell', 'shell', 'apply_patch']);
const VERSION_DATE = /_\d{4}_\d{2}_\d{2}$/;

/** The server tools among a Responses request's `tools`. */
export function responsesServerTools(tools: readonly { type: string }[] | null | undefined): OfferedTool[] {
  const offered: OfferedTool[] = [];
  tools?.forEach(({ type }, index) => {
    if (!CLIENT_TOOL_TYPES.has(type)) offered.push({ tool: type.replace(VERSION_DATE, ''), param: `tools.${index}.type` });
  });
  return offered;
}

/**
 * Chat completions' search models search the web once per request when it carries
 * `web_search_options`, at the price of OpenAI's preview search (docs/api.md 2.14).
 */
export const CHAT_WEB_SEARCH_TOOL = 'web_search_preview';

/** The search tool a chat completion request offers. */
export function chatServerTools(body: Record<string, unknown>): OfferedTool[] {
  const options = body.web_search_options;
  return options === undefined || options === null ? [] : [{ tool: CHAT_WEB_SEARCH_TOOL, param: 'web_search_options' }];
}

/** The output items of server tool calls, by the ToolPrice name of the tool that makes them. */
const CALL_ITEM_TOOLS: ReadonlyMap<string, string> = new Map([
  ['file_search_call', 'file_search'],
  ['code_interpreter_call', 'code_interpreter'],
  ['image_generation_call', 'image_generation'],
  ['mcp_call', 'mcp'],
]);

/**
 * Counts the server tool calls of a Responses answer from its output items (OpenAI bills each
 * `web_search_call` item as one call). A `web_search_call` is priced as the search tool the request
 * offered: `web_search`, or `web_search_preview` when that is the one.
 */
export class ResponsesToolCallCounter {
  private calls: ServerToolCalls | undefined;
  private readonly webSearchTool: string;

  constructor(offered: readonly OfferedTool[]) {
    this.webSearchTool = offered.some(({ tool }) => tool === 'web_search') ? 'web_search' : (offered.find(({ tool }) => tool.startsWith('web_search'))?.tool ?? 'web_search');
  }

  /** One output item (its `type`). */
  add(type: unknown): void {
    if (typeof type !== 'string') return;
    const tool = type === 'web_search_call' ? this.webSearchTool : CALL_ITEM_TOOLS.get(type);
    if (tool === undefined) return;
    this.calls ??= {};
    this.calls[tool] = (this.calls[tool] ?? 0) + 1;
  }

  /** The calls counted, or undefined when none was. */
  counted(): ServerToolCalls | undefined {
    return this.calls;
  }
}
