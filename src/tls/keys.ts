import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

const generate = promisify(generateKeyPair);

export type KeyType = 'ecdsa-p256' | 'rsa-2048';

/** A new private key as PKCS#8 PEM: ECDSA P-256 by default (small and fast), RSA 2048 on request. */
export async function generateKey(type: KeyType = 'ecdsa-p256'): Promise<string> {
  const pair =
    type === 'rsa-2048' ? await generate('rsa', { modulusLength: 2048 }) : await generate('ec', { namedCurve: 'prime256v1' });
  return pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
}

/** The Web Crypto algorithm that signs with a key of this kind (for @peculiar/x509). */
export function signingAlgorithm(key: KeyObject): (EcKeyImportParams & EcdsaParams) | RsaHashedImportParams {
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve === 'secp384r1' ? 'P-384' : 'P-256';
    return { name: 'ECDSA', namedCurve: curve, hash: curve === 'P-384' ? 'SHA-384' : 'SHA-256' };
  }
  return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
}

/** A PEM private key as Web Crypto keys: the private one to sign with, the public one to certify. */
export async function cryptoKeys(privatePem: string): Promise<{ privateKey: CryptoKey; publicKey: CryptoKey }> {
  const key = createPrivateKey(privatePem);
  const alg = signingAlgorithm(key);
  const subtle = globalThis.crypto.subtle;
  const pkcs8 = key.export({ type: 'pkcs8', format: 'der' });
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  return {
    privateKey: await subtle.importKey('pkcs8', pkcs8, alg, true, ['sign']),
    publicKey: await subtle.importKey('spki', spki, alg, true, ['verify']),
  };
}
