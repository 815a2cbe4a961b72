import type { ResponsesBody } from './request';
import type { ToolDefinition } from '../../core/chat';
import { isJsonObject } from '../../core/json';

/*
 * Custom (free-form) tools (docs/api.md 2.10) on a translated channel. Other providers call tools
 * with JSON arguments only, so a custom tool is offered as a function of one string argument,
 * `input`; a call of it goes back to the client as a `custom_tool_call` whose input is that string,
 * and a `custom_tool_call` the client sends back becomes that function's call again.
 */

/** The one argument of a custom tool's function. */
const INPUT = 'input';

type ResponsesTool = NonNullable<ResponsesBody['tools']>[number];

/** The names of the request's custom tools: a call of one of these is a custom tool call. */
export function customToolNames(body: ResponsesBody): ReadonlySet<string> {
  return new Set((body.tools ?? []).flatMap((tool) => (tool.type === 'custom' && tool.name ? [tool.name] : [])));
}

/** What `input` must hold: the tool's grammar when it has one, else free text. */
function inputDescriptionOf(format: unknown): string {
  if (isJsonObject(format) && format.type === 'grammar' && typeof format.definition === 'string') {
    const syntax = typeof format.syntax === 'string' ? `${format.syntax} ` : '';
    return `The raw input. It must match this ${syntax}grammar:\n${format.definition}`;
  }
  return 'The raw input, as free-form text.';
}

/** Custom tools' own descriptions may say not to wrap the input in JSON: here it is wrapped. */
const CALLING_NOTE = 'Call this tool with one argument, `input`: the raw input as a string.';

/** A custom tool as the function it is offered as. */
export function customToolFunction(name: string, tool: ResponsesTool): ToolDefinition {
  return {
    name,
    description: tool.description ? `${tool.description}\n\n${CALLING_NOTE}` : CALLING_NOTE,
    parameters: {
      type: 'object',
      properties: { [INPUT]: { type: 'string', description: inputDescriptionOf(tool.format) } },
      required: [INPUT],
      additionalProperties: false,
    },
  };
}

/** A custom tool call's input as the arguments of its function's call. */
export function argumentsOfInput(input: string): string {
  return JSON.stringify({ [INPUT]: input });
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * Where the decoder is in the arguments object: before it, before a key (or its end), in a key,
 * before a colon, before a value, in the input string, skipping another value, after a value; done
 * once the input string ended or the text turned out not to hold one.
 */
type DecoderState = 'start' | 'key_or_end' | 'key' | 'colon' | 'value' | 'input' | 'skip' | 'after_value' | 'done';

/**
 * The input of a custom tool call, decoded from its function's JSON arguments as they stream in
 * pieces: each piece gives the text of the `input` string it completes, so that the client gets
 * the input as it is generated. A high surrogate is held until its pair (a client may reject a
 * lone one). Arguments that hold no `input` string (the model ignored the schema) are the input
 * as they are, given whole at the end: nothing the model generated is lost.
 */
export class CustomInputDecoder {
  private state: DecoderState = 'start';
  private text = '';
  private inputFound = false;
  /** The key being read, as raw JSON string text. */
  private key = '';
  private keyEscaped = false;
  /** In the input string: undefined, '' after a backslash, or `u` and the hex digits read so far. */
  private escape: string | undefined;
  /** Skipping a value: its nesting depth, and whether in a string (and after a backslash there). */
  private depth = 0;
  private inString = false;
  private stringEscaped = false;
  private held = '';
  private decoded = '';

  /** The input text this piece of the arguments completes ('' for none yet). */
  push(piece: string): string {
    this.text += piece;
    this.decoded = this.held;
    this.held = '';
    for (let i = 0; i < piece.length && this.state !== 'done'; ) {
      if (this.read(piece.charAt(i))) i++;
    }
    const last = this.decoded.charCodeAt(this.decoded.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.held = this.decoded.slice(-1);
      this.decoded = this.decoded.slice(0, -1);
    }
    return this.decoded;
  }

  /** After the last piece: what is left to send of the input. */
  finish(): string {
    const rest = this.inputFound ? this.held : this.text;
    this.held = '';
    this.state = 'done';
    return rest;
  }

  /** Reads one character; false when it is to be read again in the state it led to. */
  private read(char: string): boolean {
    switch (this.state) {
      case 'input':
        this.readInput(char);
        return true;
      case 'skip':
        return this.skip(char);
      case 'key':
        this.readKey(char);
        return true;
      case 'done':
        return true;
    }
    if (WHITESPACE.has(char)) return true;
    switch (this.state) {
      case 'start':
        this.state = char === '{' ? 'key_or_end' : 'done';
        break;
      case 'key_or_end':
        this.key = '';
        this.state = char === '"' ? 'key' : 'done';
        break;
      case 'colon':
        this.state = char === ':' ? 'value' : 'done';
        break;
      case 'value':
        if (char === '"' && this.key === INPUT && !this.inputFound) {
          this.inputFound = true;
          this.state = 'input';
          return true;
        }
        this.depth = 0;
        this.state = 'skip';
        return false;
      case 'after_value':
        this.state = char === ',' ? 'key_or_end' : 'done';
        break;
    }
    return true;
  }

  private readKey(char: string): void {
    if (this.keyEscaped || char !== '"') {
      this.keyEscaped = !this.keyEscaped && char === '\\';
      this.key += char;
      return;
    }
    try {
      this.key = JSON.parse(`"${this.key}"`) as string;
      this.state = 'colon';
    } catch {
      this.state = 'done';
    }
  }

  private readInput(char: string): void {
    if (this.escape === undefined) {
      if (char === '\\') this.escape = '';
      else if (char === '"') this.state = 'done';
      else this.decoded += char;
    } else if (this.escape === '') {
      if (char === 'u') this.escape = 'u';
      else {
        this.decoded += ESCAPES[char] ?? char;
        this.escape = undefined;
      }
    } else {
      this.escape += char;
      if (this.escape.length === 5) {
        const code = Number.parseInt(this.escape.slice(1), 16);
        if (!Number.isNaN(code)) this.decoded += String.fromCharCode(code);
        this.escape = undefined;
      }
    }
  }

  /** Skips a value other than the input; false for the `,` or `}` that ends it, read again after it. */
  private skip(char: string): boolean {
    if (this.inString) {
      if (this.stringEscaped) this.stringEscaped = false;
      else if (char === '\\') this.stringEscaped = true;
      else if (char === '"') {
        this.inString = false;
        if (this.depth === 0) this.state = 'after_value';
      }
      return true;
    }
    switch (char) {
      case '"':
        this.inString = true;
        return true;
      case '{':
      case '[':
        this.depth++;
        return true;
      case '}':
      case ']':
        if (this.depth === 0) break;
        this.depth--;
        if (this.depth === 0) this.state = 'after_value';
        return true;
      case ',':
        if (this.depth === 0) break;
        return true;
      default:
        return true;
    }
    this.state = 'after_value';
    return false;
  }
}

/** The input of a custom tool call whose function's arguments came whole. */
export function inputOfArguments(args: string): string {
  const decoder = new CustomInputDecoder();
  return decoder.push(args) + decoder.finish();
}
