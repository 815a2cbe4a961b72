import type { OfferedTool } from '../../features/billing/pricing';
import { reportedTokenCount } from '../../features/relay/tokens';
import type { ServerToolCalls } from '../../core/chat';
import { isJsonObject } from '../../core/json';

/**
 * Typed Anthropic tools the client runs itself (`bash_20250124`, `text_editor_*`, `computer_*`,
 * `memory_*`), and `custom`. Any other typed tool runs at Anthropic (web search, web fetch, code
 * execution ...): a server tool, priced by its name without the version date (docs/api.md 2.14).
 */
const CLIENT_TOOL_TYPE = /^(custom|bash|text_editor|computer|memory)(_\d{8})?$/;
const VERSION_DATE = /_\d{8}$/;

/** The server tools among a Messages request's `tools`. */
export function anthropicServerTools(tools: readonly { type?: string | null }[] | null | undefined): OfferedTool[] {
  const offered: OfferedTool[] = [];
  tools?.forEach(({ type }, index) => {
    if (typeof type === 'string' && type !== '' && !CLIENT_TOOL_TYPE.test(type)) {
      offered.push({ tool: type.replace(VERSION_DATE, ''), param: `tools.${index}.type` });
    }
  });
  return offered;
}

/** `usage.server_tool_use` counters -> ToolPrice names. */
const REPORTED_CALLS: readonly (readonly [string, string])[] = [
  ['web_search_requests', 'web_search'],
  ['web_fetch_requests', 'web_fetch'],
  ['code_execution_requests', 'code_execution'],
];

/**
 * The server tool calls an Anthropic `usage` reports (`server_tool_use.web_search_requests` ...,
 * cumulative in a stream), or undefined when it reports none.
 */
export function serverToolCallsOf(usage: { server_tool_use?: unknown }): ServerToolCalls | undefined {
  const reported = usage.server_tool_use;
  if (!isJsonObject(reported)) return undefined;
  let calls: ServerToolCalls | undefined;
  for (const [field, tool] of REPORTED_CALLS) {
    const count = reportedTokenCount(reported[field]);
    if (count) (calls ??= {})[tool] = count;
  }
  return calls;
}
