import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { RedisClient } from '@modelgate/queue/connections';

export const SESSION_COOKIE = 'session';
export const SESSION_TTL_SECONDS = 7 * 24 * 3600;

/** One cookie's value from a Cookie header (our values are base64url and '.', never quoted or encoded). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface SessionData {
  /** Set once the user is fully logged in. */
  userId?: number;
  /** When this session id was issued (ms): sessions older than a password change are void. */
  issuedAt?: number;
  /** Password accepted, second factor still missing: never counts as logged in. */
  pending?: { userId: number; expiresAt: number };
}

export interface Session {
  id: string;
  data: SessionData;
}

/**
 * Server-side sessions in Redis (docs/api.md 1.2). The cookie carries a random id signed with
 * SESSION_SECRET; Redis holds only a hash of the id, so reading Redis does not yield usable cookies.
 */
export class SessionStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly options: { prefix: string; secret: string; secureCookie: boolean; now: () => number },
  ) {}

  private keyOf(id: string): string {
    return `${this.options.prefix}session:${createHash('sha256').update(id).digest('hex')}`;
  }

  private sign(id: string): string {
    return createHmac('sha256', this.options.secret).update(id).digest('base64url');
  }

  /** The session id from a well-signed cookie, or undefined. */
  idFromRequest(req: Request): string | undefined {
    const value = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (!value) return undefined;
    const dot = value.indexOf('.');
    if (dot <= 0) return undefined;
    const id = value.slice(0, dot);
    const given = Buffer.from(value.slice(dot + 1));
    const expected = Buffer.from(this.sign(id));
    return given.length === expected.length && timingSafeEqual(given, expected) ? id : undefined;
  }

  /** Loads the request's session and slides its expiry (7 days from now). */
  async load(req: Request): Promise<Session | undefined> {
    const id = this.idFromRequest(req);
    if (!id) return undefined;
    const raw = await this.redis.getex(this.keyOf(id), 'EX', SESSION_TTL_SECONDS);
    if (!raw) return undefined;
    return { id, data: JSON.parse(raw) as SessionData };
  }

  /**
   * Replaces the request's session (if any) with a new id holding `data`, and sets the cookie:
   * a fresh id at every privilege change defeats session fixation.
   */
  async rotate(req: Request, res: Response, data: SessionData): Promise<Session> {
    const previous = this.idFromRequest(req);
    const id = randomBytes(32).toString('base64url');
    const stored: SessionData = { ...data, issuedAt: this.options.now() };
    // Two commands, not a transaction: the sessions' keys are in different slots of a Cluster. The
    // new id is what defeats fixation; the old one is deleted as well, or expires.
    await Promise.all([
      this.redis.set(this.keyOf(id), JSON.stringify(stored), 'EX', SESSION_TTL_SECONDS),
      previous && this.redis.del(this.keyOf(previous)),
    ]);
    this.setCookie(res, id);
    return { id, data: stored };
  }

  async destroy(req: Request, res: Response): Promise<void> {
    const id = this.idFromRequest(req);
    if (id) await this.redis.del(this.keyOf(id));
    res.clearCookie(SESSION_COOKIE, this.cookieOptions());
  }

  /** Re-sends the cookie so the browser's expiry slides along with the server's. */
  setCookie(res: Response, id: string): void {
    res.cookie(SESSION_COOKIE, `${id}.${this.sign(id)}`, { ...this.cookieOptions(), maxAge: SESSION_TTL_SECONDS * 1000 });
  }

  private cookieOptions() {
    return { httpOnly: true, sameSite: 'lax' as const, path: '/', secure: this.options.secureCookie };
  }
}
