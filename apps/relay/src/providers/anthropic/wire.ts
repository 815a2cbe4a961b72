/**
 * The parts of Anthropic's Messages API wire format the relay writes (request bodies to Anthropic,
 * answers to its own Messages clients) and reads (answers, stream events, errors), as the official
 * SDK types them.
 */
import type { PartExtras } from '../../core/chat';

/** `{type: 'base64' | 'url' | 'text', ...}`: where an image or document comes from. */
export type MediaSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string }
  /** A plain-text document: `data` is the text itself, not base64. */
  | { type: 'text'; media_type: 'text/plain'; data: string };

/** A request content block; `extras` (`cache_control`) are spread into it. */
export type RequestBlock = PartExtras &
  (
    | { type: 'text'; text: string }
    | { type: 'image'; source: MediaSource }
    | { type: 'document'; source: MediaSource; title?: string }
    | { type: 'thinking'; thinking: string; signature: string }
    | { type: 'redacted_thinking'; data: string }
    | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
    | { type: 'tool_result'; tool_use_id: string; content?: string | RequestBlock[]; is_error?: true }
  );

export interface MessageParam {
  role: 'user' | 'assistant';
  content: RequestBlock[];
}

export type ToolChoiceParam =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: true }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: true }
  | { type: 'none' };

export interface MessagesRequestBody {
  model: string;
  max_tokens: number;
  system?: string | RequestBlock[];
  messages: MessageParam[];
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  metadata?: { user_id: string };
  stream?: true;
  tools?: (PartExtras & { name: string; description?: string; input_schema: Record<string, unknown> })[];
  tool_choice?: ToolChoiceParam;
  thinking?: { type: 'enabled'; budget_tokens: number };
}


/** A block of an answer (Message `content`, `content_block_start`) the relay writes for a client. */
export type AnswerBlock =
  | { type: 'text'; text: string }
  /** `signature` is '' for reasoning no Anthropic model signed. */
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** A Message's `usage` (and `message_delta`'s) as the relay writes it: every count present. */
export interface MessageUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

/** The Message object (`message_start` carries one with no content yet and a null stop reason). */
export type AnswerMessage = {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnswerBlock[];
  stop_reason: string | null;
  stop_sequence: null;
  usage: MessageUsage;
};
