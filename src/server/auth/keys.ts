// The service's signing key (Ed25519, alg EdDSA), created once and kept in the database so tokens
// survive a restart with a persistent data dir or database. Only the public half is published.
import type { CryptoKey, JWK } from 'jose';
import { exportJWK, generateKeyPair, importJWK } from 'jose';
import type { Clock } from '../clock.js';
import type { Db } from '../db/handle.js';
import { newId } from '../ids.js';

export const SIGNING_ALG = 'EdDSA';

export interface SigningKeys {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwks: { keys: JWK[] };
}

interface KeyRow {
  kid: string;
  private_jwk: JWK;
  public_jwk: JWK;
}

export async function loadSigningKeys(db: Db, clock: Clock): Promise<SigningKeys> {
  let [row] = await db.query<KeyRow>(
    'SELECT kid, private_jwk, public_jwk FROM gds.signing_keys ORDER BY created_at DESC LIMIT 1',
  );
  if (!row) {
    const pair = await generateKeyPair(SIGNING_ALG, { crv: 'Ed25519', extractable: true });
    const kid = newId('key');
    row = { kid, private_jwk: await exportJWK(pair.privateKey), public_jwk: await exportJWK(pair.publicKey) };
    await db.query(
      'INSERT INTO gds.signing_keys (kid, alg, private_jwk, public_jwk, created_at) VALUES ($1, $2, $3, $4, $5)',
      [kid, SIGNING_ALG, JSON.stringify(row.private_jwk), JSON.stringify(row.public_jwk), new Date(clock())],
    );
  }
  const publicJwk: JWK = { ...row.public_jwk, kid: row.kid, alg: SIGNING_ALG, use: 'sig' };
  return {
    kid: row.kid,
    privateKey: (await importJWK(row.private_jwk, SIGNING_ALG)) as CryptoKey,
    publicKey: (await importJWK(row.public_jwk, SIGNING_ALG)) as CryptoKey,
    jwks: { keys: [publicJwk] },
  };
}
