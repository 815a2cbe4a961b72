/**
 * Gemini's wire shapes (ai.google.dev/api/generate-content) as the relay writes them. What comes
 * back is read as unknown and checked field by field: an upstream answer is never trusted.
 */

interface GeminiBlob {
  mimeType: string;
  data: string;
}

interface GeminiFileData {
  mimeType: string;
  fileUri: string;
}

export interface GeminiPart {
  text?: string;
  inlineData?: GeminiBlob;
  fileData?: GeminiFileData;
  functionCall?: { name: string; args: Record<string, unknown> };
  functionResponse?: { name: string; response: Record<string, unknown> };
  /** Opaque, from an earlier answer: Gemini wants it back on the part it came with. */
  thoughtSignature?: string;
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

