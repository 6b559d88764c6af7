import { setTimeout as sleep } from 'node:timers/promises';
import { isUuid } from '../../common/ids';
import type { Logger } from '../../common/logger';
import { problems } from '../../common/problems';
import type { ChannelSubscriber } from '../../db/pg-channel-listener';
import type { DatabasePool } from '../../db/pool';
import { isLiveSession, recentlyEndedSessions } from '../../services/identity/user-sessions';

export interface SessionRevocationsOptions {
  db: DatabasePool;
  /** The longest lifetime of an access token in seconds (plain or impersonation): how long an ended session's tokens may still be shown. */
  tokenLifetimeSeconds: number;
  logger: Logger;
  now?: () => number;
}

/**
 * Gateways' clocks and the database's differ a little: an ended session is kept this much longer
 * than a token of it can live, so a token signed by a gateway whose clock runs ahead is still refused.
 */
const CLOCK_MARGIN_SECONDS = 60;

/**
 * The sessions that ended, as this gateway knows them, so an access token of an ended session is
 * refused (401) on its next request, whichever gateway ended it (docs/decisions/identity.md, Instant
 * revocation and sessions). PostgreSQL announces every ended session on the channel
 * session_revocations (migration 0039); the ids heard are kept until no token of them can still be
 * valid, so the check of a request is one Map lookup.
 *
 * Fail-safe: while this gateway does not hear the announcements (before the first LISTEN, after the
 * connection was lost, and until the sessions ended meanwhile have been read back), every request's
 * session is checked in the database instead. A request that cannot be checked fails (503), never
 * passes unchecked.
 */
export class SessionRevocations implements ChannelSubscriber {
  /** Ended session id → when it may be forgotten (ms). Insertion order is forgetting order: every entry lives equally long. */
  private readonly ended = new Map<string, number>();
  private following = false;
  private generation = 0;
  private readonly now: () => number;
  private readonly keepMs: number;
  readonly stats = { announcements: 0, databaseChecks: 0 };

  constructor(private readonly options: SessionRevocationsOptions) {
    this.now = options.now ?? Date.now;
    this.keepMs = (options.tokenLifetimeSeconds + CLOCK_MARGIN_SECONDS) * 1000;
  }

  /** Whether every ended session is known here without asking the database (announcements heard and caught up). */
  get isFollowing(): boolean {
    return this.following;
  }

  /** Refuses (401) an access token whose session has ended. */
  async assertLive(tenantId: string, sessionId: string): Promise<void> {
    const forgetAt = this.ended.get(sessionId);
    if (forgetAt !== undefined && forgetAt > this.now()) throw sessionEnded();
    if (this.following) return;
    this.stats.databaseChecks += 1;
    let live: boolean;
    try {
      live = await isLiveSession(this.options.db, tenantId, sessionId);
    } catch (error) {
      throw problems.unavailable('The session cannot be checked right now; try again later', error);
    }
    if (!live) throw sessionEnded();
  }

  listening(): void {
    this.following = false;
    this.generation += 1;
    void this.catchUp(this.generation);
  }

  lost(): void {
    this.following = false;
    this.generation += 1;
  }

  /** The id of a session that ended. */
  notified(sessionId: string): void {
    if (!isUuid(sessionId)) return;
    this.stats.announcements += 1;
    this.remember(sessionId);
  }

  /**
   * Reads the sessions that ended while nothing was heard (all of them, at start-up). LISTEN took
   * effect before the read, so whatever ends after it is announced: nothing falls between the two.
   * Retried until it succeeds or the connection changes again; requests are checked in the
   * database meanwhile.
   */
  private async catchUp(generation: number): Promise<void> {
    const seconds = this.keepMs / 1000;
    for (let delayMs = 250; generation === this.generation; delayMs = Math.min(delayMs * 2, 5000)) {
      try {
        const ids = await recentlyEndedSessions(this.options.db, seconds);
        if (generation !== this.generation) return;
        for (const id of ids) this.remember(id);
        this.following = true;
        return;
      } catch (error) {
        this.options.logger.warn({ err: error, retryInMs: delayMs }, 'ended sessions not read; sessions are checked per request meanwhile');
        await sleep(delayMs, undefined, { ref: false });
      }
    }
  }

  private remember(sessionId: string): void {
    const now = this.now();
    this.ended.delete(sessionId);
    this.ended.set(sessionId, now + this.keepMs);
    for (const [id, forgetAt] of this.ended) {
      if (forgetAt > now) break;
      this.ended.delete(id);
    }
  }
}

const sessionEnded = () => problems.unauthorized('The session has ended; sign in again');
