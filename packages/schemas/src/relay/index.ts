/**
 * The relay surfaces' request schemas (docs/api.md 2): what the relay validates each call with, and
 * what describes the surfaces elsewhere (the OpenAPI document).
 */
export * from './completions';
export * from './chat-completions';
export * from './embeddings';
export * from './generate-content';
export * from './messages';
export * from './responses';
export * from './media';
export * from './operations';
