import type { ClientRequest } from '../core/provider';

export interface ClientBodyOptions {
  /** Streams: add `stream_options.include_usage` so the charge is exact (OpenAI chat and completions). */
  addStreamUsage?: boolean;
  /** The dialect names the model in the URL, not the body (Gemini): the bytes never change. */
  modelInPath?: boolean;
  /** A Messages client's protocol headers (docs/api.md 2.9). */
  anthropicVersion?: string;
  anthropicBeta?: string;
}

/**
 * A client's request as a channel of its own dialect receives it (docs/api.md 2.6): the client's
 * bytes when nothing must change, otherwise one re-serialisation per upstream model with the
 * mapped model and, where asked, `stream_options.include_usage`.
 */
export class ClientBody implements ClientRequest {
  private readonly bodies = new Map<string, string>();
  readonly anthropicVersion: string | undefined;
  readonly anthropicBeta: string | undefined;
  private readonly addStreamUsage: boolean;
  private readonly modelInPath: boolean;

  constructor(
    private readonly raw: Buffer,
    readonly json: Readonly<Record<string, unknown>>,
    readonly stream: boolean,
    options: ClientBodyOptions = {},
  ) {
    this.addStreamUsage = stream && options.addStreamUsage === true;
    this.modelInPath = options.modelInPath === true;
    this.anthropicVersion = options.anthropicVersion;
    this.anthropicBeta = options.anthropicBeta;
  }

  bodyFor(upstreamModel: string): Buffer | string {
    if (this.modelInPath || (upstreamModel === this.json.model && !this.addStreamUsage)) return this.raw;
    let body = this.bodies.get(upstreamModel);
    if (body === undefined) {
      const copy: Record<string, unknown> = { ...this.json, model: upstreamModel };
      if (this.addStreamUsage) copy.stream_options = { ...(this.json.stream_options as object | undefined), include_usage: true };
      body = JSON.stringify(copy);
      this.bodies.set(upstreamModel, body);
    }
    return body;
  }
}
