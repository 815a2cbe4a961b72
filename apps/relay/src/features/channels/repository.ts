import { CHANNEL_STATUS } from '@modelgate/schemas';
import type { Prisma, PrismaClient } from '@modelgate/db';

export interface ChannelRow {
  id: number;
  type: number;
  name: string;
  keyEnc: string;
  baseUrl: string;
  models: string;
  groups: string;
  priority: number;
  weight: number;
  modelMapping: string;
  status: number;
  autoBan: boolean;
  settings: Prisma.JsonValue;
}

const CHANNEL_ROW = {
  id: true,
  type: true,
  name: true,
  keyEnc: true,
  baseUrl: true,
  models: true,
  groups: true,
  priority: true,
  weight: true,
  modelMapping: true,
  status: true,
  autoBan: true,
  settings: true,
} as const;

/**
 * The account service owns the channels table; the relay reads it and writes only what it
 * observes: automatic disabling (status 3 with reason and time). Used quota goes with the ledger.
 */
export class ChannelRepository {
  constructor(private readonly prisma: PrismaClient) {}

  findAll(): Promise<ChannelRow[]> {
    return this.prisma.channel.findMany({ select: CHANNEL_ROW, orderBy: { id: 'asc' } });
  }

  /** One channel whatever its status (the channel test), or null. */
  findById(id: number): Promise<ChannelRow | null> {
    return this.prisma.channel.findUnique({ select: CHANNEL_ROW, where: { id } });
  }

  /** Disables an enabled channel; false when it was no longer enabled (someone else acted first). */
  async disableAutomatically(id: number, reason: string): Promise<boolean> {
    const { count } = await this.prisma.channel.updateMany({
      where: { id, status: CHANNEL_STATUS.enabled },
      data: { status: CHANNEL_STATUS.autoDisabled, statusReason: reason.slice(0, 500), statusChangedAt: new Date() },
    });
    return count > 0;
  }
}
