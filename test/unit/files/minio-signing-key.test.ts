import { dirname, join } from 'node:path';

// Every request minio signs (and every presigned URL of a file or thumbnail) derived its SigV4
// signing key anew: four HMACs, three of them keyed by a Buffer, which Node 24 checks for a KeyObject
// and a CryptoKey by catching two thrown errors (about 14 µs each, against 3 µs with a KeyObject).
// patches/minio+8.0.7.patch derives the key once per day, region, service and secret and keeps it as
// a KeyObject: a presigned GET fell from about 95 to 17 µs of CPU. This keeps the patch in place and
// its signatures those of SigV4.

// The module object itself (not an import's copy of it), so that minio's copy of createHmac is the spy.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
const crypto = require('node:crypto') as typeof import('node:crypto');
const createHmac = jest.spyOn(crypto, 'createHmac');
// minio's signing module is not among its package's exports: it is reached by its path beside the main entry.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- an internal module without types; the cast states the shape used
const { postPresignSignatureV4 } = require(join(dirname(require.resolve('minio')), 'signing.js')) as {
  postPresignSignatureV4(region: string, date: Date, secretKey: string, policyBase64: string): string;
};

const secret = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const policy = Buffer.from('{"expiration":"2026-11-28T12:00:00Z","conditions":[]}').toString('base64');

/** SigV4 as AWS defines it: the signing key derived from the day, region and service, then the signature. */
function sigV4(date: string, region: string, secretKey: string, stringToSign: string): string {
  const step = (key: string | Buffer, data: string) => crypto.createHmac('sha256', key).update(data).digest();
  const signingKey = step(step(step(step(`AWS4${secretKey}`, date), region), 's3'), 'aws4_request');
  return step(signingKey, stringToSign).toString('hex');
}

describe('minio signing key (patched)', () => {
  it('signs as SigV4 defines', () => {
    expect(postPresignSignatureV4('us-east-1', new Date('2026-11-28T08:00:00Z'), secret, policy)).toBe(sigV4('20261128', 'us-east-1', secret, policy));
    expect(postPresignSignatureV4('eu-west-1', new Date('2026-11-29T23:00:00Z'), 'other', policy)).toBe(sigV4('20261129', 'eu-west-1', 'other', policy));
  });

  it('derives the key once per day, region and secret', () => {
    postPresignSignatureV4('us-east-1', new Date('2026-11-30T08:00:00Z'), secret, policy);
    createHmac.mockClear();
    for (const hour of ['09', '15', '23']) postPresignSignatureV4('us-east-1', new Date(`2026-11-30T${hour}:00:00Z`), secret, policy);
    expect(createHmac).toHaveBeenCalledTimes(3);

    createHmac.mockClear();
    postPresignSignatureV4('us-east-1', new Date('2026-12-01T00:00:00Z'), secret, policy);
    expect(createHmac).toHaveBeenCalledTimes(5);
  });
});
