import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * AWS Signature Version 4 as a service checks it (written from AWS's "Create a signed AWS API
 * request" and "Elements of an AWS API request signature" pages, not from a signer, so that the
 * signer under test is checked against an independent reading): the `Authorization` header's
 * credential scope `<date>/<region>/<service>/aws4_request`, `x-amz-date` within five minutes,
 * `x-amz-security-token` for temporary credentials, the signed headers (`host` among them), the
 * canonical request (method, the path URI-encoded again as non-S3 services do, the sorted
 * query, the signed headers' trimmed values, the body's SHA-256 or `x-amz-content-sha256`) and
 * the HMAC chain from `AWS4<secret>`. Failures are the errors AWS answers, with its texts.
 */

export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Temporary credentials (STS): requests must carry it as `x-amz-security-token`. */
  readonly sessionToken?: string;
}

export interface SignedRequest {
  readonly method: string;
  /** The path with its query, as it arrived (`req.url`). */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** A refusal as AWS answers it: the HTTP status, the `x-amzn-errortype` and the body's message. */
export interface AwsError {
  readonly status: number;
  readonly type: string;
  readonly message: string;
}

const refuse = (type: string, message: string, status = 403): AwsError => ({ status, type, message });
const INVALID_TOKEN = refuse('UnrecognizedClientException', 'The security token included in the request is invalid.');
const MISMATCH = refuse(
  'InvalidSignatureException',
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
);

const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();

/** RFC 3986 percent-encoding: everything but `A-Z a-z 0-9 - . _ ~`. */
const uriEncode = (text: string): string => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The canonical URI of a non-S3 service: the path as sent, normalised, each segment encoded again. */
function canonicalUri(rawPath: string): string {
  const segments: string[] = [];
  for (const segment of rawPath.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(uriEncode(segment));
  }
  return `/${segments.join('/')}${segments.length > 0 && rawPath.endsWith('/') ? '/' : ''}`;
}

function canonicalQuery(rawQuery: string): string {
  if (!rawQuery) return '';
  const pairs = rawQuery
    .split('&')
    .filter((p) => p !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
      const [key, value] = eq === -1 ? [decode(pair), ''] : [decode(pair.slice(0, eq)), decode(pair.slice(eq + 1))];
      return [uriEncode(key), uriEncode(value)] as const;
    });
  pairs.sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

const headerValue = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
};

/** `20240102T030405Z` as a time (undefined when it is not one). */
function amzTime(value: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) : undefined;
}

const FIVE_MINUTES = 5 * 60 * 1000;

/**
 * Checks a request's SigV4 signature for `service` in `region` against `credentials`: undefined
 * when it holds, else the error AWS answers.
 */
export function verifySigV4(
  request: SignedRequest,
  expected: { readonly region: string; readonly service: string; readonly credentials: AwsCredentials; readonly now?: number },
): AwsError | undefined {
  const authorization = headerValue(request.headers, 'authorization');
  if (!authorization) return refuse('MissingAuthenticationTokenException', 'Missing Authentication Token');
  const match = /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$/.exec(authorization.trim());
  if (!match) {
    return refuse('IncompleteSignatureException', `Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters. Authorization=${authorization.split(' ')[0]}`);
  }
  const [, credential = '', signedHeaderList = '', signature = ''] = match;
  const scope = credential.split('/');
  if (scope.length !== 5 || scope[4] !== 'aws4_request') return refuse('IncompleteSignatureException', `Credential should be scoped to a valid region.`);
  const [accessKeyId, day, region, service] = scope as [string, string, string, string];
  const { credentials } = expected;
  if (accessKeyId !== credentials.accessKeyId) return INVALID_TOKEN;
  // A temporary key needs its token; a permanent key must not come with one.
  if ((headerValue(request.headers, 'x-amz-security-token') ?? undefined) !== credentials.sessionToken) return INVALID_TOKEN;

  const amzDate = headerValue(request.headers, 'x-amz-date');
  if (!amzDate) return refuse('IncompleteSignatureException', "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
  const time = amzTime(amzDate);
  if (time === undefined) return refuse('IncompleteSignatureException', `Date must be in ISO-8601 'basic format'. Got '${amzDate}'.`);
  if (day !== amzDate.slice(0, 8)) {
    return refuse('InvalidSignatureException', `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${day}' != '${amzDate.slice(0, 8)}', from '${amzDate}'.`);
  }
  if (region !== expected.region) return refuse('InvalidSignatureException', 'Credential should be scoped to a valid region.');
  if (service !== expected.service) return refuse('InvalidSignatureException', `Credential should be scoped to correct service: '${expected.service}'.`);
  const now = expected.now ?? Date.now();
  if (time < now - FIVE_MINUTES) return refuse('InvalidSignatureException', `Signature expired: ${amzDate} is now earlier than the time five minutes ago.`);
  if (time > now + FIVE_MINUTES) return refuse('InvalidSignatureException', `Signature not yet current: ${amzDate} is still later than the time in five minutes.`);

  const signedHeaders = signedHeaderList.split(';');
  if (!signedHeaders.includes('host')) return refuse('InvalidSignatureException', "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.");
  const bodyHash = sha256Hex(request.body);
  const declaredHash = headerValue(request.headers, 'x-amz-content-sha256');
  if (declaredHash !== undefined && declaredHash !== bodyHash) return refuse('InvalidSignatureException', "The provided 'x-amz-content-sha256' header does not match what was computed.", 400);

  const query = request.url.indexOf('?');
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalUri(query === -1 ? request.url : request.url.slice(0, query)),
    canonicalQuery(query === -1 ? '' : request.url.slice(query + 1)),
    ...signedHeaders.map((name) => `${name}:${(headerValue(request.headers, name) ?? '').trim().replace(/\s+/g, ' ')}`),
    '',
    signedHeaderList,
    bodyHash,
  ].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, `${day}/${region}/${service}/aws4_request`, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), region), service), 'aws4_request');
  const computed = createHmac('sha256', key).update(stringToSign, 'utf8').digest();
  return timingSafeEqual(computed, Buffer.from(signature, 'hex')) ? undefined : MISMATCH;
}
