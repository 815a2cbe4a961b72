import type { PrismaClient } from '@modelgate/db';

/** A warned user's name, addresses and current warning settings; null once the user is deleted. */
export async function findWarningRecipient(prisma: PrismaClient, userId: number) {
  return prisma.user.findFirst({
    where: { id: userId, deletedAt: null },
    select: {
      id: true,
      username: true,
      email: true,
      notifyType: true,
      quotaWarningThreshold: true,
      notificationEmail: true,
      webhookUrl: true,
      webhookSecretEnc: true,
    },
  });
}
