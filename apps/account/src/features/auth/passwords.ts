import { hash, verify } from '@node-rs/argon2';

/** Argon2id (the library default algorithm) with the configured memory cost. */
export function hashPassword(password: string, memoryKib: number): Promise<string> {
  return hash(password, { memoryCost: memoryKib, timeCost: 2, parallelism: 1 });
}

const dummyHashes = new Map<number, Promise<string>>();

/**
 * Verifies against the stored hash, or against a throwaway hash when the user does not exist, so
 * the answer takes as long either way and does not reveal which usernames exist.
 */
export async function verifyPassword(storedHash: string | undefined, password: string, memoryKib: number): Promise<boolean> {
  if (storedHash === undefined) {
    let dummy = dummyHashes.get(memoryKib);
    if (!dummy) {
      dummy = hashPassword('no such user: constant-time placeholder', memoryKib);
      dummyHashes.set(memoryKib, dummy);
    }
    await verify(await dummy, password).catch(() => false);
    return false;
  }
  try {
    return await verify(storedHash, password);
  } catch {
    return false;
  }
}
