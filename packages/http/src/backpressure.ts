import type { ServerResponse } from 'node:http';

/**
 * Resolves when a response that refused a write can take more, or is gone: a writer that waits
 * here goes at its reader's pace instead of buffering without bound.
 */
export function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
