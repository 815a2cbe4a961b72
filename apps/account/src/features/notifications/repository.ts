import type { PrismaClient } from '@modelgate/db';

const settingsFields = {
  email: true,
  notifyType: true,
  quotaWarningThreshold: true,
  notificationEmail: true,
  webhookUrl: true,
  webhookSecretEnc: true,
} as const;

export async function findNotificationSettings(prisma: PrismaClient, userId: number) {
  return prisma.user.findFirst({ where: { id: userId, deletedAt: null }, select: settingsFields });
}

export interface NotificationSettingsRow {
  notifyType: string;
  quotaWarningThreshold: bigint;
  notificationEmail: string | null;
  webhookUrl: string | null;
  webhookSecretEnc: string | null;
}

export async function saveNotificationSettings(prisma: PrismaClient, userId: number, data: NotificationSettingsRow) {
  return prisma.user.update({ where: { id: userId }, data, select: settingsFields });
}
