import { randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

// Argon2id with the library defaults (m=19456 KiB, t=2, p=1; OWASP's minimum). The `Algorithm`
// const enum is not imported: it breaks `verbatimModuleSyntax` and the default is argon2id.

/** Hashes a password with argon2id; returns the PHC string (`$argon2id$v=19$...`). */
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/** True when `password` matches the PHC `passwordHash`; false for a mismatch or an unreadable hash. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;

/**
 * Spends the same time as a real check for a login naming an unknown user, so response times do
 * not reveal which usernames exist. Always resolves false.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummy ??= hash(randomBytes(16).toString('hex'));
  await verifyPassword(await dummy, password);
  return false;
}
