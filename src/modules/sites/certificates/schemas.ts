import { Type, type Static } from 'typebox';

/** What uploading a site's own certificate takes: declared once (validator, type, document). */

const Pem = (description: string, maxLength = 65_536) => Type.String({ minLength: 1, maxLength, description });

export const CustomCertificate = Type.Object(
  {
    certificate_pem: Pem('The leaf certificate (PEM); intermediates after it count as the chain.', 262_144),
    private_key_pem: Pem('Its unencrypted private key (PEM, PKCS#8 or traditional).', 16_384),
    chain_pem: Type.Optional(Type.String({ maxLength: 262_144, description: 'Intermediates, issuer first (PEM).' })),
  },
  { additionalProperties: false },
);
export type CustomCertificate = Static<typeof CustomCertificate>;
