import 'reflect-metadata'; // @peculiar/x509's CommonJS build needs it loaded first
import { X509Certificate as NodeX509, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';

/**
 * Certificates made in process (Node's crypto makes keys but cannot sign X.509; `@peculiar/x509`
 * does, on Node's WebCrypto): a CA, and leaf certificates it signs for the HTTPS edge and for NATS
 * servers and clients. ECDSA P-256 with SHA-256: fast to make and to handshake, accepted by Node,
 * nats-server and curl.
 */
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

/** A certificate and its private key, as PEM. */
export interface PemPair {
  cert: string;
  key: string;
}

const serial = () => Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1');

async function keyPem(k: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', k));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`;
}

/** A self-signed CA (may sign leaf certificates only: path length 0). */
export async function makeCa(name: string, days = 3 * 365): Promise<PemPair> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${name}`,
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + days * DAY),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: await keyPem(keys.privateKey) };
}

/** Subject alternative names: IP addresses and DNS names, as given. */
export const sanEntries = (names: string[]) =>
  [...new Set(names.filter(Boolean))].map((n) => ({ type: isIP(n.replace(/^\[|\]$/g, '')) ? ('ip' as const) : ('dns' as const), value: n.replace(/^\[|\]$/g, '') }));

/** A leaf certificate signed by `ca`, for servers and clients (both extended key usages), with SANs. */
export async function makeLeaf(ca: PemPair, o: { name: string; sans: string[]; days?: number }): Promise<PemPair> {
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await webcrypto.subtle.importKey('pkcs8', pemBody(ca.key), ALG, false, ['sign']);
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${o.name}`,
    issuer: caCert.subject,
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + (o.days ?? 2 * 365) * DAY),
    signingKey: caKey,
    publicKey: keys.publicKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyAgreement, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      new x509.SubjectAlternativeNameExtension(sanEntries(o.sans)),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: await keyPem(keys.privateKey) };
}

function pemBody(pem: string): ArrayBuffer {
  const b = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}

/** SHA-256 fingerprint of a PEM certificate, as ES prints it (hex, no separators, lower case). */
export const fingerprint = (certPem: string): string => new NodeX509(certPem).fingerprint256.replace(/:/g, '').toLowerCase();

/** The SANs (DNS and IP) of a PEM certificate. */
export function sansOf(certPem: string): string[] {
  const alt = new NodeX509(certPem).subjectAltName ?? '';
  return alt.split(', ').map((s) => s.replace(/^(DNS|IP Address):/, '')).filter(Boolean);
}
