import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { drainedOrClosed } from '@modelgate/http';

/**
 * Keeps an upstream body to the client's pace: paused while the client's response cannot take more,
 * resumed once it drains, unless the relay is done with the body by then (`done`). Memory stays
 * bounded however slowly the client reads.
 */
export class ClientPace {
  private waiting = false;

  constructor(
    private readonly body: Readable,
    private readonly res: ServerResponse,
    private readonly done: () => boolean,
  ) {}

  /** The client's response is full: the body waits for it to drain. */
  wait(): void {
    if (this.waiting) return;
    this.waiting = true;
    this.body.pause();
    void drainedOrClosed(this.res).then(() => {
      this.waiting = false;
      if (!this.done()) this.body.resume();
    });
  }
}
