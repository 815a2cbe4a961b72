import { tmpdir } from 'node:os';
import { requestTooLarge } from '@modelgate/errors';
import { declaresBodyOver, type DirectRequest, type DirectResponse, type DirectRoute, literalPath } from '@modelgate/http';
import type { Dialect } from '@modelgate/schemas';
import { authContextOf, authenticate } from '../features/keys/authenticate';
import type { KeyFailureLimit } from '../features/keys/failure-limit';
import type { KeyCache } from '../features/keys/key-cache';
import { jsonBytes, rawBody } from '../features/relay/body';
import type { RelayCall } from '../features/relay/relay-call';
import type { RelayService } from '../features/relay/service';
import { MultipartUpload } from '../features/upload/multipart-upload';

export interface RelayRouteDeps {
  keys: KeyCache;
  keyFailures: KeyFailureLimit;
  relay: RelayService;
  maxBodyMb: number;
}

/**
 * A relay surface at a fixed path, served directly (see withFastPath in @modelgate/http): the key (read where the
 * dialect's SDK sends it) first, then the JSON body, then `serve` (docs/api.md 1.3 order).
 */
export function relayRoute(
  path: string,
  dialect: Dialect,
  { keys, keyFailures, maxBodyMb }: Pick<RelayRouteDeps, 'keys' | 'keyFailures' | 'maxBodyMb'>,
  serve: (req: DirectRequest, res: DirectResponse, raw: Buffer) => Promise<void>,
): DirectRoute {
  return {
    method: 'POST',
    label: path,
    match: literalPath(path),
    handlers: [authenticate(keys, keyFailures, dialect), rawBody(maxBodyMb), (req, res) => serve(req, res, jsonBytes(req))],
  };
}

/** An OpenAI-dialect relay surface: its call through the relay pipeline. */
export function openAIRelayRoute(path: string, deps: RelayRouteDeps, callOf: (raw: Buffer, requestId: string) => RelayCall): DirectRoute {
  return relayRoute(path, 'openai', deps, (req, res, raw) => deps.relay.relay(req, res, authContextOf(res), callOf(raw, req.requestId)));
}

/**
 * An OpenAI-dialect surface taking a multipart upload (docs/api.md 2.13): the key first, then the
 * upload, read as it arrives (see MultipartUpload) until what `callOf` needs is known; the call
 * then streams the rest to the upstream. The upload's spool is removed when the call is settled.
 */
export function multipartRelayRoute(path: string, deps: RelayRouteDeps, callOf: (upload: MultipartUpload) => Promise<RelayCall>): DirectRoute {
  const { keys, keyFailures, maxBodyMb, relay } = deps;
  return {
    method: 'POST',
    label: path,
    match: literalPath(path),
    handlers: [
      authenticate(keys, keyFailures, 'openai'),
      async (req, res) => {
        if (declaresBodyOver(req, maxBodyMb * 1024 * 1024)) throw requestTooLarge(maxBodyMb);
        const upload = new MultipartUpload(req, { maxBodyMb, spoolDir: tmpdir() });
        try {
          await upload.ready;
          await relay.relay(req, res, authContextOf(res), await callOf(upload));
        } finally {
          // After settlement, which may read the whole file's duration from the spool.
          await upload.dispose();
        }
      },
    ],
  };
}
