import type { PrismaClient } from '@modelgate/db';

export class OptionRepository {
  constructor(private readonly prisma: PrismaClient) {}

  findAll(): Promise<{ key: string; value: string }[]> {
    return this.prisma.option.findMany({ select: { key: true, value: true } });
  }
}
