import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * External sign-in identities (migration 0006). Lookups before a tenant is known go through its
 * SECURITY DEFINER functions; everything else runs under withTenant, where row-level security shows
 * the links of the tenant's members only.
 */

const providerUser = z.object({
  id: z.string(),
  email: z.string(),
  emailVerified: z.boolean(),
  status: z.enum(['active', 'locked', 'pending_deletion']),
  deletedAt: z.string().nullable(),
  mfaEnabled: z.boolean(),
  lastTenantId: z.string().nullable(),
});
/** The account a provider sign-in lands in, with what the sign-in decides on. */
export type ProviderUser = z.infer<typeof providerUser>;

const providerUserColumns = sql.fragment`
  id, email, email_verified AS "emailVerified", status, deleted_at AS "deletedAt",
  mfa_enabled AS "mfaEnabled", last_tenant_id AS "lastTenantId"
`;

/** The account linked to a provider subject (auth_identity_user). */
export function selectIdentityUser(db: CommonQueryMethods, providerId: string, externalId: string): Promise<ProviderUser | null> {
  return db.maybeOne(sql.type(providerUser)`
    SELECT ${providerUserColumns} FROM auth_identity_user(${providerId}, ${externalId})
  `);
}

/** The account holding an address, for a subject's first sign-in (auth_user_for_provider_email). */
export function selectUserForProviderEmail(db: CommonQueryMethods, email: string): Promise<ProviderUser | null> {
  return db.maybeOne(sql.type(providerUser)`
    SELECT ${providerUserColumns} FROM auth_user_for_provider_email(${email})
  `);
}

const providerLink = z.object({
  id: z.string(),
  providerId: z.string(),
  providerType: z.string(),
  externalId: z.string(),
  email: z.string().nullable(),
  displayName: z.string().nullable(),
  linkedAt: z.string(),
});
/** A provider link (docs/reference/identity.md#rule-35). */
export type ProviderLink = z.infer<typeof providerLink>;

const linkColumns = sql.fragment`
  id, provider_id AS "providerId", provider_type AS "providerType", external_id AS "externalId",
  email, display_name AS "displayName", linked_at AS "linkedAt"
`;

export interface NewProviderLink {
  id: string;
  userId: string;
  providerId: string;
  externalId: string;
  email: string | null;
  displayName: string | null;
}

/**
 * Runs in a tenant the account belongs to (the insert policy checks the membership). A subject
 * linked to any other account fails on user_identities_provider_subject, a second link of the same
 * provider on user_identities_user_provider (both mapped in api/http/constraint-problems.ts).
 */
export function insertProviderLink(tx: DatabaseTransactionConnection, link: NewProviderLink): Promise<ProviderLink> {
  return tx.one(sql.type(providerLink)`
    INSERT INTO user_identities (id, user_id, provider_id, external_id, email, display_name)
    VALUES (${link.id}, ${link.userId}, ${link.providerId}, ${link.externalId}, ${link.email}, ${link.displayName})
    RETURNING ${linkColumns}
  `);
}

export function selectProviderLinks(tx: DatabaseTransactionConnection, userId: string): Promise<readonly ProviderLink[]> {
  return tx.any(sql.type(providerLink)`
    SELECT ${linkColumns} FROM user_identities WHERE user_id = ${userId} ORDER BY linked_at, id
  `);
}

const signInMethods = z.object({ hasPassword: z.boolean() });

/**
 * Whether the account (a member of the transaction's tenant) has a password, with its row locked
 * until the transaction ends: two unlinks at once then run one after the other, so they cannot
 * both see "another way to sign in remains" and leave none. Null when the account is not a member.
 */
export function lockSignInMethods(tx: DatabaseTransactionConnection, userId: string): Promise<{ hasPassword: boolean } | null> {
  return tx.maybeOne(sql.type(signInMethods)`
    SELECT password_hash IS NOT NULL AS "hasPassword" FROM users WHERE id = ${userId} FOR UPDATE
  `);
}

export async function deleteProviderLink(tx: DatabaseTransactionConnection, userId: string, providerId: string): Promise<void> {
  await tx.query(sql.unsafe`DELETE FROM user_identities WHERE user_id = ${userId} AND provider_id = ${providerId}`);
}
