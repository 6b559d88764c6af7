import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * Wallets (migration 0012). Every statement runs inside withTenant and names the tenant as well
 * (tenant scoping twice: the predicate, then row-level security), so another tenant's wallet reads
 * as absent and is never locked. Balances are the running totals
 * of the wallet's ledger postings and change only next to them (services/money/movements.ts).
 */

const verifiedRow = z.object({ verified: z.boolean() });

export const balances = z.object({ available: z.number(), pending: z.number(), frozen: z.number() });
export type Balances = z.infer<typeof balances>;

const walletRow = z.object({
  id: z.string(),
  tenantId: z.string(),
  userId: z.string(),
  currency: z.string(),
  label: z.string(),
  available: z.number(),
  pending: z.number(),
  frozen: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
/** lockWalletsForCaller's rows: a wallet and whether the caller's e-mail address is verified. */
const walletWithCallerRow = walletRow.extend({ callerVerified: z.boolean() });
export type WalletRow = z.infer<typeof walletRow>;

const walletColumns = sql.fragment`
  id, tenant_id AS "tenantId", user_id AS "userId", currency, label, available, pending, frozen,
  created_at AS "createdAt", updated_at AS "updatedAt"
`;

export interface NewWallet {
  id: string;
  tenantId: string;
  userId: string;
  currency: string;
  label: string;
}

/** A new wallet with zero balances; a second wallet of one user, currency and label is a unique violation. */
export function insertWallet(tx: DatabaseTransactionConnection, wallet: NewWallet): Promise<WalletRow> {
  return tx.one(sql.type(walletRow)`
    INSERT INTO wallets (id, tenant_id, user_id, currency, label)
    VALUES (${wallet.id}, ${wallet.tenantId}, ${wallet.userId}, ${wallet.currency}, ${wallet.label})
    RETURNING ${walletColumns}
  `);
}

/** One wallet of the tenant, without a lock (reads); null for an unknown id or another tenant's. */
export function selectWallet(tx: DatabaseTransactionConnection, tenantId: string, id: string): Promise<WalletRow | null> {
  return tx.maybeOne(sql.type(walletRow)`SELECT ${walletColumns} FROM wallets WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

export interface WalletFilter {
  userId?: string;
  currency?: string;
  /** Keyset position: the last id of the previous page (ULIDs sort by creation). */
  afterId?: string;
  limit: number;
}

/** A page of the tenant's wallets in id (creation) order. */
export function selectWallets(tx: DatabaseTransactionConnection, filter: WalletFilter): Promise<readonly WalletRow[]> {
  const conditions = [
    filter.userId ? sql.fragment`user_id = ${filter.userId}` : sql.fragment`TRUE`,
    filter.currency ? sql.fragment`currency = ${filter.currency}` : sql.fragment`TRUE`,
    filter.afterId ? sql.fragment`id > ${filter.afterId}` : sql.fragment`TRUE`,
  ];
  return tx.any(sql.type(walletRow)`
    SELECT ${walletColumns} FROM wallets
    WHERE ${sql.join(conditions, sql.fragment` AND `)}
    ORDER BY id
    LIMIT ${filter.limit}
  `);
}

/**
 * Locks wallets for the rest of the transaction, in ascending id order (docs/reference/money.md#rule-9:
 * two transfers between the same wallets lock them in the same order and cannot deadlock). The rows
 * come back in that order; an id that does not exist (or is another tenant's) is simply missing.
 * ULIDs are upper-case base32, so byte order (COLLATE "C") is their creation order and JavaScript's.
 */
export function lockWallets(tx: DatabaseTransactionConnection, tenantId: string, ids: readonly string[]): Promise<readonly WalletRow[]> {
  return tx.any(sql.type(walletRow)`SELECT ${walletColumns} ${lockedInIdOrder(tenantId, ids)}`);
}

const lockedInIdOrder = (tenantId: string, ids: readonly string[]) => sql.fragment`
  FROM wallets
  WHERE tenant_id = ${tenantId} AND id = ANY(${sql.array([...ids], 'text')})
  ORDER BY id COLLATE "C"
  FOR UPDATE
`;

/**
 * lockWallets, reading in the same round trip whether the caller's e-mail address is verified (the
 * operations that move money need both). callerVerified is null when no wallet was found.
 */
export async function lockWalletsForCaller(
  tx: DatabaseTransactionConnection, tenantId: string, ids: readonly string[], callerId: string | null,
): Promise<{ wallets: WalletRow[]; callerVerified: boolean | null }> {
  const rows = await tx.any(sql.type(walletWithCallerRow)`
    SELECT ${walletColumns}, coalesce((SELECT email_verified FROM users WHERE id = ${callerId}), false) AS "callerVerified"
    ${lockedInIdOrder(tenantId, ids)}
  `);
  return { wallets: rows.map(({ callerVerified: _, ...wallet }) => wallet), callerVerified: rows[0]?.callerVerified ?? null };
}

/** Signed changes of a wallet's three balances (a missing bucket is unchanged). */
export type BalanceDelta = Partial<Balances>;

/** Whether the user is a member of the tenant (wallets belong to members only). */
export function isTenantMember(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<boolean> {
  return tx.exists(sql.unsafe`SELECT 1 FROM memberships WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND deleted_at IS NULL`);
}

/** Whether the user's e-mail address is verified (docs/reference/money.md#rule-13: moving money). */
export async function isEmailVerified(tx: DatabaseTransactionConnection, userId: string): Promise<boolean> {
  const row = await tx.maybeOne(sql.type(verifiedRow)`
    SELECT email_verified AS verified FROM users WHERE id = ${userId}
  `);
  return row?.verified ?? false;
}
