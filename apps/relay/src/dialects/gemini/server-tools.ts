import type { OfferedTool } from '../../features/billing/pricing';
import type { ServerToolCalls } from '../../core/chat';
import { isJsonObject } from '../../core/json';

/** Gemini tool fields the client runs itself: function declarations and computer use. */
const CLIENT_TOOL_FIELDS: ReadonlySet<string> = new Set(['functionDeclarations', 'computerUse']);

/** `google_search` -> `googleSearch`: Gemini accepts both spellings of a field. */
function camelCase(field: string): string {
  return field.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/**
 * The server tools a generateContent request offers (docs/api.md 2.14): every field of a `tools`
 * entry but the client's own, priced by its camelCase name (`googleSearch`, `urlContext` ...).
 */
export function geminiServerTools(tools: unknown): OfferedTool[] {
  const offered: OfferedTool[] = [];
  if (!Array.isArray(tools)) return offered;
  tools.forEach((tool, index) => {
    if (!isJsonObject(tool)) return;
    for (const field of Object.keys(tool)) {
      const name = camelCase(field);
      if (!CLIENT_TOOL_FIELDS.has(name)) offered.push({ tool: name, param: `tools[${index}].${field}` });
    }
  });
  return offered;
}

/** The tools Google bills per grounded prompt, by the grounding chunks they leave. */
const SEARCH_TOOLS = ['googleSearch', 'googleSearchRetrieval'] as const;

function hasItems(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

/**
 * Grounded prompts of one answer (docs/api.md 2.14): Google bills grounding with Google Search (and
 * with Google Maps) once per prompt whose answer carries grounding metadata, whatever the number of
 * queries. Fed the `candidates` of the whole answer or of each streamed chunk.
 */
export class GroundingCounter {
  private readonly searchTool: string | undefined;
  private readonly mapsTool: string | undefined;
  private searched = false;
  private mapped = false;

  constructor(offered: readonly OfferedTool[]) {
    this.searchTool = SEARCH_TOOLS.find((tool) => offered.some((offer) => offer.tool === tool));
    this.mapsTool = offered.some((offer) => offer.tool === 'googleMaps') ? 'googleMaps' : undefined;
  }

  /** Whether the request offers a tool this counts (otherwise feeding it is skipped). */
  get counts(): boolean {
    return this.searchTool !== undefined || this.mapsTool !== undefined;
  }

  add(candidates: unknown): void {
    if (!Array.isArray(candidates)) return;
    for (const candidate of candidates) {
      const metadata = isJsonObject(candidate) ? candidate.groundingMetadata : undefined;
      if (!isJsonObject(metadata)) continue;
      const chunks = Array.isArray(metadata.groundingChunks) ? metadata.groundingChunks : [];
      if (hasItems(metadata.webSearchQueries) || hasItems(metadata.retrievalQueries) || chunks.some((chunk) => isJsonObject(chunk) && chunk.web !== undefined)) {
        this.searched = true;
      }
      if (chunks.some((chunk) => isJsonObject(chunk) && chunk.maps !== undefined)) this.mapped = true;
    }
  }

  counted(): ServerToolCalls | undefined {
    const calls: ServerToolCalls = {};
    if (this.searched && this.searchTool) calls[this.searchTool] = 1;
    if (this.mapped && this.mapsTool) calls[this.mapsTool] = 1;
    return Object.keys(calls).length > 0 ? calls : undefined;
  }
}
