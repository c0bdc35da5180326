// Static CLI tokens (`cli_…`, spec §5.9: long-lived, workspace-scoped, revocable): the seed makes one per
// seeded user for the ready file, and a signed-in person creates named ones for scripts and CI. Only the
// token's hash and a masked hint are stored; the whole token is answered once.
import { createHmac } from 'node:crypto';
import { recordAudit } from '../audit.js';
import type { AppContext } from '../context.js';
import { HttpError, isUniqueViolation } from '../errors.js';
import { newId, newSecret, sha256 } from '../ids.js';
import { CLI_TOKEN_ID_PREFIX, CLI_TOKEN_PREFIX } from './caller.js';
import { maskToken } from './mask-token.js';

export interface CreatedCliToken {
  id: string;
  token: string;
  createdAt: string;
}

/** A new CLI token of the user (named, unless seeded); 409 `token_name_taken` when a live one has the name. */
export async function createCliToken(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  owner: { workspaceId: string; userId: string; name?: string },
  token = `${CLI_TOKEN_PREFIX}${newSecret()}`,
): Promise<CreatedCliToken> {
  const id = newId(CLI_TOKEN_ID_PREFIX);
  const createdAt = new Date(ctx.clock()).toISOString();
  await ctx.db.transaction(async (tx) => {
    const [taken] =
      owner.name === undefined
        ? []
        : await tx.query<{ id: string }>(
            `SELECT id FROM gds.cli_tokens WHERE workspace_id = $1 AND user_id = $2 AND lower(name) = lower($3)
                AND revoked_at IS NULL`,
            [owner.workspaceId, owner.userId, owner.name],
          );
    if (taken) throw nameTaken(owner.name ?? '', taken.id);
    await tx
      .query(
        `INSERT INTO gds.cli_tokens (id, workspace_id, user_id, token_hash, created_at, token_hint, name)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [id, owner.workspaceId, owner.userId, sha256(token), createdAt, maskToken(token), owner.name ?? null],
      )
      .catch((error: unknown) => {
        // Two creates of one name at once: the unique index keeps one.
        throw isUniqueViolation(error) ? nameTaken(owner.name ?? '') : error;
      });
    if (owner.name !== undefined) {
      await recordAudit(tx, ctx.clock, {
        workspaceId: owner.workspaceId,
        userId: owner.userId,
        action: 'CLI_TOKEN_CREATED',
        resource: 'cli_token',
        details: { tokenId: id, name: owner.name },
      });
    }
  });
  return { id, token, createdAt };
}

function nameTaken(name: string, tokenId?: string): HttpError {
  return new HttpError(
    409,
    'token_name_taken',
    `You already have a live CLI token named "${name}"${tokenId === undefined ? '' : ` (${tokenId})`}: revoke it first (gds tokens revoke ${name}), or pick another name.`,
    { name, ...(tokenId === undefined ? {} : { tokenId }) },
  );
}

/**
 * A seeded user's unnamed CLI token for the ready file: the same at every start over one database (derived
 * from the service's signing key), so restarts over a data dir neither pile tokens up nor end the one a script
 * was given; once it is revoked, the next start derives another.
 */
export async function seededCliToken(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  owner: { workspaceId: string; userId: string },
): Promise<string> {
  const [key] = await ctx.db.query<{ d: string }>(
    `SELECT private_jwk->>'d' AS d FROM gds.signing_keys ORDER BY created_at DESC LIMIT 1`,
  );
  if (key === undefined) throw new Error('no signing key to derive the seeded CLI tokens from');
  const revokedByHash = async () => {
    const rows = await ctx.db.query<{ token_hash: string; revoked: boolean }>(
      `SELECT token_hash, revoked_at IS NOT NULL AS revoked FROM gds.cli_tokens
        WHERE workspace_id = $1 AND user_id = $2 AND name IS NULL`,
      [owner.workspaceId, owner.userId],
    );
    return new Map(rows.map((r) => [r.token_hash, r.revoked]));
  };
  let revoked = await revokedByHash();
  for (let n = 0; ; n++) {
    const secret = createHmac('sha256', key.d)
      .update(`seeded-cli-token:${owner.workspaceId}:${owner.userId}:${n}`)
      .digest('base64url');
    const token = `${CLI_TOKEN_PREFIX}${secret}`;
    const state = revoked.get(sha256(token));
    if (state === false) return token;
    if (state === undefined) {
      try {
        return (await createCliToken(ctx, owner, token)).token;
      } catch (error) {
        // Another server starting over this database inserted the same derived token first: it is ours too.
        revoked = await revokedByHash();
        if (revoked.get(sha256(token)) === false) return token;
        throw error;
      }
    }
  }
}
