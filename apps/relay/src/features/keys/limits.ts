import { AppError } from '@modelgate/errors';
import { describeError } from '@modelgate/http';
import type { Logger } from '@modelgate/logger';
import type { GroupLimits, OptionValues, PeriodSpan } from '@modelgate/schemas';
import { randomBytes } from 'node:crypto';
import { CurrentPeriods } from '../billing/budget-period';
import { Turn } from '../billing/turn-batch';
import type { AuthContext } from './authenticate';
import type { KeyRecord } from './key-cache';
import type { LimitKeys, LimitRedis } from './limit-scripts';
import type { BudgetUseRow } from './repository';

/** What a refusal was for (the relay's metrics count refusals by it). */
export type LimitKind = 'requests' | 'tokens' | 'concurrency' | 'budget';

/** Where the `x-ratelimit-*` headers go: the caller's response. */
export interface HeaderSink {
  setHeader(name: string, value: number): unknown;
}

export interface KeyLimitsOptions {
  /** RELAY_KEY_RATE_LIMIT_PER_MINUTE: the requests per minute of a key without its own `rpm_limit` (0 = none). */
  defaultRequestsPerMinute: number;
  /** GroupRateLimit and QuotaPerUnit, read on every call. */
  options: { readonly values: OptionValues };
  /** What the ledger counted towards a key's budget: seeds its Redis mirror. */
  readBudgetUse: (tokenId: number) => Promise<BudgetUseRow | null>;
  logger: Logger;
  onRefused: (kind: LimitKind) => void;
  /** The turn the scripts run at the end of, with the relay's other Redis work. */
  turn?: Turn;
}

/** A lease lapses this long after it was taken or last renewed: the calls of a relay that died stop counting. */
const LEASE_MS = 60_000;
const RENEW_EVERY_MS = 20_000;
/** An idle window goes once its 60 one-second buckets have passed, and one second more. */
const WINDOW_TTL_MS = 61_000;
/** A budget mirror outlives its period by this long: the calls admitted at its end settle into it. */
const BUDGET_GRACE_MS = 3_600_000;
/** Operations per script run: bounds how long one run holds Redis. */
const MAX_BATCH = 100;
/** Numbers TURN answers per admission. */
const RESULT_WIDTH = 11;
/** How long a grant admits calls before what they left unused goes back (and a new one is asked for). */
const GRANT_MS = 1_000;
/**
 * A grant's slice of each limit (and of the budget): this share of it. TURN grants slices only while
 * the limit keeps half its room after them, so at most ten such grants are out at once.
 */
const SLICE_SHARE = 20;

const REQUESTS = 1;
const TOKENS = 2;
const TOO_MANY_TOKENS = 3;
const CONCURRENCY = 4;
const BUDGET_SHORT = 5;
const BUDGET_MISSING = 6;

/** One counted subject: the key, or its owner within the key's group. */
interface Subject {
  /** Its name under the owner's prefix. */
  name: string;
  rpm: number;
  tpm: number;
  concurrency: number;
  /** Who the limit is for, in a refusal's message. */
  holder: string;
  /** What a grant asks of each limit (0 where there is none, or too little to share). */
  requestSlice: number;
  tokenSlice: number;
  slotSlice: number;
}

/** An operation as TURN takes it: its line, then the names of its subjects and budget. */
interface ScriptItem {
  userId: number;
  args: string[];
}

/** An admission's answer: its RESULT_WIDTH numbers in a script run's answer, from `at`. */
interface Answer {
  numbers: number[];
  at: number;
}

/** An admission sent to Redis, and what it may be granted. */
interface Admission {
  item: ScriptItem;
  groupSubject: Subject | null;
  subjects: Subject[];
  tokens: number;
  lease: string;
  budget: Budget | undefined;
  /** The lease of the grant it asks for, if it does. */
  grantLease: string | undefined;
  budgetSlice: number;
}

/** What one owner's calls ask of Redis in the current turn: one script run (or a few, past MAX_BATCH). */
interface OwnerTurn {
  ends: ScriptItem[];
  admissions: ScriptItem[];
  waiters: { resolve: (answer: Answer) => void; reject: (err: unknown) => void }[];
}

interface Budget {
  /** The mirror's name under the owner's prefix. */
  key: string;
  quota: number;
  amount: number;
  span: PeriodSpan;
}

/** A grant's share of a limit. */
function sliceOf(limit: number): number {
  return Math.floor(limit / SLICE_SHARE);
}

/** Whether a grant's slices would each hold at least two calls like this one (else none is asked for). */
function grantable(subjects: readonly Subject[], tokens: number): boolean {
  for (const subject of subjects) {
    if (subject.rpm > 0 && subject.requestSlice < 2) return false;
    if (subject.tpm > 0 && subject.tokenSlice < 2 * Math.max(1, tokens)) return false;
    if (subject.concurrency > 0 && subject.slotSlice < 2) return false;
  }
  return true;
}

/**
 * Slices of a key's limits, and of its budget, that Redis counted for this relay when it admitted
 * one of the key's calls (limit-scripts.ts): the calls that fit in them are admitted here, with no
 * round trip, until the grant is given back (after GRANT_MS, or when a call does not fit).
 */
class Grant {
  /** Calls admitted into it, and the tokens they count (estimates, corrected as they end). */
  requests = 0;
  tokens = 0;
  /** What its calls hold of the budget slice: their reservations while in flight, then their charges. */
  budgetUsed = 0;
  /** The charges of its calls that ended. */
  charged = 0;
  readonly inFlight = new Set<LimitedCall>();

  constructor(
    /** The key record it was granted for (its limits: its subject is made once per record). */
    readonly key: KeyRecord,
    /** The key's group's subject as it was then (GroupRateLimit may change). */
    readonly groupSubject: Subject | null,
    readonly subjects: readonly Subject[],
    readonly lease: string,
    /** The window second its slices were counted in. */
    readonly second: number,
    readonly expiresAt: number,
    /** Its budget slice, in the mirror of the period starting at `start`. */
    readonly budget: { key: string; start: number; slice: number } | undefined,
    /** The tightest limits, and what they left after the call that took the grant (its headers). */
    readonly requestsLimit: number,
    readonly requestsLeft: number,
    readonly tokensLimit: number,
    readonly tokensLeft: number,
  ) {}

  /** Whether a call of `tokens` holding `amount` of the budget (undefined: none) fits what is left. */
  fits(tokens: number, amount: number | undefined): boolean {
    const slots = this.inFlight.size + 1;
    for (const subject of this.subjects) {
      if (subject.rpm > 0 && this.requests + 1 > subject.requestSlice) return false;
      if (subject.tpm > 0 && this.tokens + tokens > subject.tokenSlice) return false;
      if (subject.concurrency > 0 && slots > subject.slotSlice) return false;
    }
    return amount === undefined || (this.budget !== undefined && this.budgetUsed + amount <= this.budget.slice);
  }
}

/** "1 request", "5 requests". */
function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function unavailable(err: unknown): AppError {
  return new AppError('service_unavailable', 'rate limiting is temporarily unavailable', { cause: err });
}

function workOf(owners: Map<number, OwnerTurn>, userId: number): OwnerTurn {
  let work = owners.get(userId);
  if (work === undefined) {
    work = { ends: [], admissions: [], waiters: [] };
    owners.set(userId, work);
  }
  return work;
}

/** The arguments of several operations, for one script run. */
function operationsOf(items: ScriptItem[]): string[] {
  const args: string[] = [];
  for (const item of items) args.push(...item.args);
  return args;
}

/**
 * One admitted call's share of the limits: the counts it added, its lease and its budget hold,
 * corrected and freed by `end` (once; later calls do nothing).
 */
export class LimitedCall {
  private ended: boolean;

  constructor(
    private readonly limits: KeyLimits,
    readonly userId: number,
    /** Its lease ('' while it is in an open grant: it takes one when the grant is given back). */
    public lease: string,
    readonly subjects: readonly Subject[],
    /** Tokens counted at admission (the call's estimate). */
    readonly estimate: number,
    /** The window second the call was counted in. */
    readonly second: number,
    /** The budget mirror (its name under the owner's prefix) holding the call, if any. */
    readonly budget: string | undefined,
    /** What the budget holds for the call. */
    readonly held: number,
    /** Set when the budget could not hold the call: nothing was counted. */
    private readonly budgetRefusal: AppError | undefined,
    /** The call left less than half of a concurrency, tokens or budget limit: its end is sent at once. */
    readonly urgent: boolean,
    /** The open grant the call was admitted into, if any: its end then stays here. */
    public grant?: Grant,
  ) {
    this.ended = budgetRefusal !== undefined;
  }

  /** 403 `budget_exceeded` when the key's budget could not hold the call (checked in its turn, docs/api.md 1.3). */
  checkBudget(): void {
    if (!this.budgetRefusal) return;
    this.limits.refused('budget');
    throw this.budgetRefusal;
  }

  /**
   * The call is over: `tokens` used (0 when nothing was delivered) corrects the tokens counted,
   * `charge` joins the budget's spend; the lease and the hold are freed. Runs in the background.
   */
  end(tokens: number, charge: number): void {
    if (this.ended) return;
    this.ended = true;
    this.limits.end(this, tokens, charge);
  }
}

/**
 * Limits per key (`rpm_limit`, else RELAY_KEY_RATE_LIMIT_PER_MINUTE; `tpm_limit`,
 * `max_concurrency`), per user of the key's group (GroupRateLimit), and the key's budget per
 * period, enforced through Redis for every relay (docs/api.md 3.9.3, 3.9.4). A key none of them
 * applies to costs no Redis round trip. The ends and admissions of one owner's calls in one
 * event-loop turn run as one script.
 */
export class KeyLimits {
  private readonly periods = new CurrentPeriods();
  /** Each key's subject (null: the key has no limit of its own), made once per loaded key. */
  private readonly keySubjects = new WeakMap<KeyRecord, Subject | null>();
  /** Each group's subject, made again when GroupRateLimit changes. */
  private readonly groupSubjects = new Map<string, { limits: GroupLimits; subject: Subject | null }>();
  /** Calls holding leases, renewed until they end. */
  private readonly leased = new Set<LimitedCall>();
  private readonly leasePrefix = randomBytes(6).toString('base64url');
  private sequence = 0;
  private readonly renewTimer: NodeJS.Timeout;
  private renewing: Promise<void> | undefined;
  private readonly turn: Turn;
  private owners = new Map<number, OwnerTurn>();
  private flushScheduled = false;
  /**
   * The ends of calls far from every limit, sent with the next turn's work instead of their own: by
   * then the owner's next calls usually have admissions to send, and one script run serves both.
   */
  private waiting: ScriptItem[] = [];
  private carried: ScriptItem[] = [];
  /** Script runs not yet answered (shutdown waits for them). */
  private readonly running = new Set<Promise<unknown>>();
  /** The open grant of each key (by id), and the keys whose admission is asking for one. */
  private readonly grants = new Map<number, Grant>();
  private readonly asking = new Set<number>();
  private readonly grantTimer: NodeJS.Timeout;

  constructor(
    private readonly redis: LimitRedis,
    private readonly names: LimitKeys,
    private readonly settings: KeyLimitsOptions,
  ) {
    this.turn = settings.turn ?? new Turn();
    this.renewTimer = setInterval(() => {
      this.renewing ??= this.renew().finally(() => (this.renewing = undefined));
    }, RENEW_EVERY_MS);
    this.renewTimer.unref();
    // Idle grants go back too: what their calls left unused is counted nowhere else.
    this.grantTimer = setInterval(() => {
      const now = Date.now();
      for (const grant of this.grants.values()) if (now >= grant.expiresAt) this.giveBack(grant);
    }, GRANT_MS);
    this.grantTimer.unref();
  }

  /**
   * Counts the call against every limit that applies and holds `reserved` on the key's budget (when
   * it has one and the call is priced), all or nothing; sets the `x-ratelimit-*` headers of the
   * tightest requests and tokens limits. Throws 429 `rate_limit_exceeded` with `Retry-After` over a
   * limit. Undefined when nothing applies (no Redis work); the call itself when the key's open grant
   * admits it (no Redis work either).
   */
  admit(res: HeaderSink, auth: AuthContext, tokens: number, reserved: number | undefined): LimitedCall | Promise<LimitedCall> | undefined {
    const { key } = auth;
    const options = this.settings.options.values;
    const keySubject = this.keySubjectOf(key);
    const groupSubject = this.groupSubjectOf(auth.group, options.GroupRateLimit.get(auth.group));
    const budgeted = key.budgetUsd !== null && reserved !== undefined;
    if (!keySubject && !groupSubject && !budgeted) return undefined;
    const span = budgeted ? this.periods.span(key.budgetPeriod) : undefined;

    const grant = this.grants.get(key.id);
    if (grant !== undefined) {
      const current = grant.key === key && grant.groupSubject === groupSubject && grant.budget?.start === span?.start;
      if (current && Date.now() < grant.expiresAt && grant.fits(tokens, budgeted ? reserved : undefined)) {
        return this.admitIntoGrant(res, grant, tokens, budgeted ? reserved : undefined);
      }
      this.giveBack(grant);
    }

    const subjects: Subject[] = [];
    if (keySubject) subjects.push(keySubject);
    if (groupSubject) subjects.push(groupSubject);
    let budget: Budget | undefined;
    if (span) {
      budget = {
        key: this.names.budget(key.id, key.budgetPeriod, span.start),
        quota: Math.round(key.budgetUsd! * options.QuotaPerUnit),
        amount: reserved!,
        span,
      };
    }
    // A budgeted key's grant holds a slice of the budget: only a call that holds on it asks.
    const budgetSlice = budget ? sliceOf(budget.quota) : 0;
    let grantLease: string | undefined;
    if (
      !this.asking.has(key.id) &&
      grantable(subjects, tokens) &&
      (budget ? budgetSlice >= 2 * Math.max(1, budget.amount) : key.budgetUsd === null)
    ) {
      grantLease = this.nextLease();
      this.asking.add(key.id);
    }
    const lease = this.nextLease();
    let line = `a ${subjects.length} ${tokens} ${lease} ${budget?.amount ?? 0} ${budget?.quota ?? -1} ${budget ? budget.span.end + BUDGET_GRACE_MS : 0} ${grantLease ?? '-'} ${budgetSlice}`;
    for (const subject of subjects) {
      line += ` ${subject.rpm} ${subject.tpm} ${subject.concurrency} ${subject.requestSlice} ${subject.tokenSlice} ${subject.slotSlice}`;
    }
    const item: ScriptItem = { userId: key.userId, args: [line] };
    for (const subject of subjects) item.args.push(subject.name);
    if (budget) item.args.push(budget.key);
    const admission: Admission = { item, groupSubject, subjects, tokens, lease, budget, grantLease, budgetSlice };
    return this.admitItem(res, auth, admission);
  }

  private nextLease(): string {
    this.sequence += 1;
    return `${this.leasePrefix}${this.sequence.toString(36)}`;
  }

  /** Admits a call into the key's open grant (it fits): counted here, headers from the grant. */
  private admitIntoGrant(res: HeaderSink, grant: Grant, tokens: number, amount: number | undefined): LimitedCall {
    grant.requests += 1;
    grant.tokens += tokens;
    if (amount !== undefined) grant.budgetUsed += amount;
    if (grant.requestsLimit > 0) {
      res.setHeader('x-ratelimit-limit-requests', grant.requestsLimit);
      res.setHeader('x-ratelimit-remaining-requests', Math.max(0, grant.requestsLeft - grant.requests));
    }
    if (grant.tokensLimit > 0) {
      res.setHeader('x-ratelimit-limit-tokens', grant.tokensLimit);
      res.setHeader('x-ratelimit-remaining-tokens', Math.max(0, grant.tokensLeft - grant.tokens));
    }
    const budget = amount === undefined ? undefined : grant.budget!.key;
    const call = new LimitedCall(this, grant.key.userId, '', grant.subjects, tokens, grant.second, budget, amount ?? 0, undefined, false, grant);
    grant.inFlight.add(call);
    return call;
  }

  /**
   * Gives the grant back: what its calls left unused leaves the windows, its slots and budget slice
   * go, and its calls still in flight take leases of their own (their ends then go to Redis).
   */
  private giveBack(grant: Grant): void {
    if (this.grants.get(grant.key.id) === grant) this.grants.delete(grant.key.id);
    const { subjects, budget } = grant;
    let line = `r ${subjects.length} ${grant.lease} ${grant.second} ${budget ? 1 : 0} ${grant.charged} ${budget?.slice ?? 0} ${grant.inFlight.size}`;
    for (const subject of subjects) {
      line += ` ${subject.rpm > 0 ? grant.requests - subject.requestSlice : 0} ${subject.tpm > 0 ? grant.tokens - subject.tokenSlice : 0} ${subject.concurrency > 0 ? 1 : 0}`;
    }
    const holdsLease = subjects.some((subject) => subject.concurrency > 0);
    for (const call of grant.inFlight) {
      call.lease = this.nextLease();
      call.grant = undefined;
      line += ` ${call.lease} ${call.held}`;
      if (holdsLease || call.budget) this.leased.add(call);
    }
    grant.inFlight.clear();
    const item: ScriptItem = { userId: grant.key.userId, args: [line] };
    for (const subject of subjects) item.args.push(subject.name);
    if (budget) item.args.push(budget.key);
    this.ownerTurn(grant.key.userId).ends.push(item);
  }

  private keySubjectOf(key: KeyRecord): Subject | null {
    let subject = this.keySubjects.get(key);
    if (subject === undefined) {
      const rpm = key.rpmLimit > 0 ? key.rpmLimit : this.settings.defaultRequestsPerMinute;
      subject = rpm > 0 || key.tpmLimit > 0 || key.maxConcurrency > 0
        ? this.subjectOf(this.names.key(key.id), rpm, key.tpmLimit, key.maxConcurrency, 'this API key')
        : null;
      this.keySubjects.set(key, subject);
    }
    return subject;
  }

  private groupSubjectOf(group: string, limits: GroupLimits | undefined): Subject | null {
    if (limits === undefined) return null;
    let made = this.groupSubjects.get(group);
    if (made === undefined || made.limits !== limits) {
      const { rpm, tpm, concurrency } = limits;
      made = {
        limits,
        subject: rpm > 0 || tpm > 0 || concurrency > 0 ? this.subjectOf(this.names.groupUser(group), rpm, tpm, concurrency, `each user of group "${group}"`) : null,
      };
      this.groupSubjects.set(group, made);
    }
    return made.subject;
  }

  private subjectOf(name: string, rpm: number, tpm: number, concurrency: number, holder: string): Subject {
    return { name, rpm, tpm, concurrency, holder, requestSlice: sliceOf(rpm), tokenSlice: sliceOf(tpm), slotSlice: sliceOf(concurrency) };
  }

  private async admitItem(res: HeaderSink, auth: AuthContext, admission: Admission): Promise<LimitedCall> {
    try {
      return await this.admitThroughRedis(res, auth, admission);
    } finally {
      if (admission.grantLease !== undefined) this.asking.delete(auth.key.id);
    }
  }

  private async admitThroughRedis(res: HeaderSink, auth: AuthContext, admission: Admission): Promise<LimitedCall> {
    const { item, subjects, tokens, lease, budget } = admission;
    for (let attempt = 0; attempt < 3; attempt++) {
      let answer: Answer;
      try {
        answer = await this.queueAdmission(item);
      } catch (err) {
        throw unavailable(err);
      }
      const { numbers, at } = answer;
      const field = (index: number) => numbers[at + index] ?? 0;
      const code = field(0);
      const requestsLimit = field(3);
      const tokensLimit = field(5);
      const second = field(7);
      const available = field(8);
      if (code === BUDGET_MISSING && budget) {
        await this.seedBudget(auth.key, budget);
        continue;
      }
      if (requestsLimit > 0) {
        res.setHeader('x-ratelimit-limit-requests', requestsLimit);
        res.setHeader('x-ratelimit-remaining-requests', Math.max(0, field(4)));
      }
      if (tokensLimit > 0) {
        res.setHeader('x-ratelimit-limit-tokens', tokensLimit);
        res.setHeader('x-ratelimit-remaining-tokens', Math.max(0, field(6)));
      }
      if (code === 0 && field(10) === 1) this.keepGrant(auth.key, admission, second, requestsLimit, field(4), tokensLimit, field(6));
      if (code === 0 || code === BUDGET_SHORT) {
        const refusal = code === BUDGET_SHORT && budget ? this.budgetRefusal(auth.key, budget, available) : undefined;
        const call = new LimitedCall(this, auth.key.userId, lease, subjects, tokens, second, budget?.key, budget?.amount ?? 0, refusal, field(9) === 1);
        if (!refusal && (budget || subjects.some((subject) => subject.concurrency > 0))) this.leased.add(call);
        return call;
      }
      const subject = subjects[field(1) - 1];
      if (!subject) throw unavailable(new Error(`unexpected admission result ${code}`));
      throw this.refusal(code, subject, tokens, field(2));
    }
    throw unavailable(new Error('the budget mirror could not be seeded'));
  }

  private keepGrant(key: KeyRecord, admission: Admission, second: number, requestsLimit: number, requestsLeft: number, tokensLimit: number, tokensLeft: number): void {
    const { groupSubject, subjects, budget, budgetSlice } = admission;
    const grant = new Grant(
      key,
      groupSubject,
      subjects,
      admission.grantLease!,
      second,
      Date.now() + GRANT_MS,
      budget ? { key: budget.key, start: budget.span.start, slice: budgetSlice } : undefined,
      requestsLimit,
      requestsLeft,
      tokensLimit,
      tokensLeft,
    );
    // Another grant of the key's (made meanwhile for changed limits) is given back.
    const other = this.grants.get(key.id);
    if (other !== undefined) this.giveBack(other);
    this.grants.set(key.id, grant);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    this.turn.schedule(this.flush);
  }

  private ownerTurn(userId: number): OwnerTurn {
    this.scheduleFlush();
    return workOf(this.owners, userId);
  }

  private queueAdmission(item: ScriptItem): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const work = this.ownerTurn(item.userId);
      work.admissions.push(item);
      work.waiters.push({ resolve, reject });
    });
  }

  /** The turn's work, one script run per owner: its keys share the owner's hash tag (one cluster slot). */
  private readonly flush = (): void => {
    const { owners, carried } = this;
    this.owners = new Map();
    this.carried = this.waiting;
    this.waiting = [];
    this.flushScheduled = false;
    if (this.carried.length > 0) this.scheduleFlush();
    for (const item of carried) workOf(owners, item.userId).ends.push(item);
    for (const [userId, work] of owners) this.runOwner(userId, work);
  };

  private runOwner(userId: number, { ends, admissions, waiters }: OwnerTurn): void {
    const owner = this.names.owner(userId);
    const operations = ends.length === 0 ? admissions : [...ends, ...admissions];
    for (let start = 0; start < operations.length; start += MAX_BATCH) {
      const slice = operations.slice(start, start + MAX_BATCH);
      // The admissions of this run, as indexes into `waiters` (the ends come first).
      const first = Math.max(0, start - ends.length);
      const last = start + slice.length - ends.length;
      const run = this.redis.mgLimitTurn(owner, LEASE_MS, WINDOW_TTL_MS, ...operationsOf(slice)).then(
        (numbers) => {
          for (let index = first; index < last; index++) waiters[index]!.resolve({ numbers, at: (index - first) * RESULT_WIDTH });
        },
        (err: unknown) => {
          for (let index = first; index < last; index++) waiters[index]!.reject(err);
          if (start < ends.length) {
            this.settings.logger.warn({ calls: Math.min(ends.length - start, slice.length), err: describeError(err) }, 'could not free calls from their limits');
          }
        },
      );
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
    }
  }

  private refusal(code: number, subject: Subject, tokens: number, wait: number): AppError {
    const { holder } = subject;
    let kind: LimitKind;
    let message: string;
    switch (code) {
      case REQUESTS:
        kind = 'requests';
        message = `${holder} may make ${counted(subject.rpm, 'request')} per minute`;
        break;
      case TOKENS:
        kind = 'tokens';
        message = `${holder} may use ${counted(subject.tpm, 'token')} per minute; this request is estimated at ${tokens}`;
        break;
      case TOO_MANY_TOKENS:
        kind = 'tokens';
        message = `this request is estimated at ${counted(tokens, 'token')}, more than the ${counted(subject.tpm, 'token')} per minute ${holder} may use`;
        break;
      case CONCURRENCY:
        kind = 'concurrency';
        message = `${holder} may have ${counted(subject.concurrency, 'concurrent request')} in flight`;
        break;
      default:
        return unavailable(new Error(`unexpected admission result ${code}`));
    }
    this.refused(kind);
    return new AppError('rate_limit_exceeded', message, { retryAfter: Math.max(1, wait) });
  }

  private budgetRefusal(key: KeyRecord, budget: Budget, available: number): AppError {
    const renews = new Date(budget.span.end).toISOString();
    const limit = `USD ${key.budgetUsd} a ${key.budgetPeriod}`;
    return new AppError(
      'budget_exceeded',
      available <= 0
        ? `this API key's budget (${limit}) is used up until ${renews}`
        : `this request's estimated cost (${budget.amount}) is more than what is left of this API key's budget (${limit}): ${available} until ${renews}`,
    );
  }

  refused(kind: LimitKind): void {
    this.settings.onRefused(kind);
  }

  /** Creates the key's budget mirror from what the ledger counted in the current period. */
  private async seedBudget(key: KeyRecord, budget: Budget): Promise<void> {
    let row: BudgetUseRow | null;
    try {
      row = await this.settings.readBudgetUse(key.id);
    } catch (err) {
      throw new AppError('service_unavailable', 'the API key budget is temporarily unavailable', { cause: err });
    }
    if (!row) throw new AppError('invalid_api_key', 'invalid API key');
    const spent = row.budgetPeriodStart?.getTime() === budget.span.start ? row.budgetUsedQuota : 0n;
    try {
      await this.redis.mgLimitSeedBudget(`${this.names.owner(key.userId)}:${budget.key}`, spent.toString(), budget.span.end + BUDGET_GRACE_MS);
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** See LimitedCall.end. Failures are logged: a lease left behind lapses, a hold with it. */
  end(call: LimitedCall, tokens: number, charge: number): void {
    const delta = tokens - call.estimate;
    const { grant } = call;
    if (grant !== undefined) {
      grant.inFlight.delete(call);
      grant.tokens += delta;
      if (call.budget) {
        grant.budgetUsed += charge - call.held;
        grant.charged += charge;
      }
      return;
    }
    this.leased.delete(call);
    let flags = '';
    const names: string[] = [];
    for (const subject of call.subjects) {
      const corrected = subject.tpm > 0 && delta !== 0;
      const leased = subject.concurrency > 0;
      if (!corrected && !leased) continue;
      flags += ` ${corrected ? 1 : 0} ${leased ? 1 : 0}`;
      names.push(subject.name);
    }
    if (names.length === 0 && !call.budget) return;
    const item: ScriptItem = { userId: call.userId, args: [`e ${names.length} ${call.lease} ${call.second} ${delta} ${call.budget ? 1 : 0} ${charge} ${call.held}${flags}`, ...names] };
    if (call.budget) item.args.push(call.budget);
    if (call.urgent) {
      this.ownerTurn(call.userId).ends.push(item);
      return;
    }
    this.waiting.push(item);
    this.scheduleFlush();
  }

  /** Extends the leases of the calls still in flight here. */
  private async renew(): Promise<void> {
    // Per owner: the concurrency lease sets and the budget hold sets of its calls, with the member of each.
    const byOwner = new Map<number, { leases: [string, string][]; holds: [string, string][] }>();
    for (const call of this.leased) {
      let owned = byOwner.get(call.userId);
      if (owned === undefined) {
        owned = { leases: [], holds: [] };
        byOwner.set(call.userId, owned);
      }
      const owner = this.names.owner(call.userId);
      for (const subject of call.subjects) {
        if (subject.concurrency > 0) owned.leases.push([this.names.leases(owner, subject.name), call.lease]);
      }
      if (call.budget) owned.holds.push([this.names.leases(owner, call.budget), `${call.lease}:${call.held}`]);
    }
    try {
      for (const { leases, holds } of byOwner.values()) {
        for (const [sets, concurrency] of [[leases, true], [holds, false]] as const) {
          for (let start = 0; start < sets.length; start += MAX_BATCH) {
            const chunk = sets.slice(start, start + MAX_BATCH);
            const keys = chunk.map(([set]) => set);
            await this.redis.mgLimitRenew(keys.length, ...keys, LEASE_MS, concurrency ? keys.length : 0, ...chunk.map(([, member]) => member));
          }
        }
      }
    } catch (err) {
      this.settings.logger.warn({ calls: this.leased.size, err: describeError(err) }, 'could not renew the leases of calls in flight');
    }
  }

  /** Shutdown: no more renewals; the calls' last updates are sent. */
  async stop(): Promise<void> {
    clearInterval(this.renewTimer);
    clearInterval(this.grantTimer);
    for (const grant of this.grants.values()) this.giveBack(grant);
    await this.renewing;
    while (this.flushScheduled) await new Promise((resolve) => setImmediate(resolve));
    await Promise.all(this.running);
  }
}
