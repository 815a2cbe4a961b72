import type { NativeOperation } from '../core/provider';
import type { DeliveryContext } from '../features/relay/relay-call';

/** Whether the channel that answered served the operation in the client's own dialect (no translation). */
export function servedNatively(operation: NativeOperation, { provider, channel, upstreamModel }: DeliveryContext): boolean {
  return provider.native(operation, channel, upstreamModel) !== undefined;
}
