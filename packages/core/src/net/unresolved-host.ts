import { isPlatformError, PlatformError } from '../errors.js';

/**
 * Resolver errors that mean "this name has no address" (dns.lookup's getaddrinfo codes), with
 * what the message adds. EAI_AGAIN is a DNS server that did not answer: the name may exist.
 */
const DNS_FAILURES: Readonly<Record<string, string>> = {
  ENOTFOUND: '',
  EAI_NONAME: '',
  ENODATA: '',
  EAI_NODATA: '',
  EAI_FAIL: ' (the DNS lookup failed)',
  EAI_AGAIN: ' (the DNS lookup failed for now; it may work later)',
};

const REASON = 'unresolved_host';

/** The resolver error's code when it says the name has no address (ENOTFOUND, EAI_AGAIN, ...). */
export function dnsFailureCode(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code in DNS_FAILURES ? code : undefined;
}

/**
 * The failure of a URL whose host name does not resolve: `unavailable` (nothing can be reached
 * there; 503 at the server), message `host name 'x.invalid' does not resolve`, details `{ host,
 * reason: 'unresolved_host', dns: <code> }`. The guarded fetch rejects with it before any
 * connection, so every caller of a caller-supplied URL can say so instead of "not running".
 */
export function unresolvedHostError(host: string, code: string, cause?: unknown): PlatformError {
  return new PlatformError('unavailable', `host name '${host}' does not resolve${DNS_FAILURES[code] ?? ''}`, {
    details: { host, reason: REASON, dns: code },
    retryable: code === 'EAI_AGAIN',
    ...(cause === undefined ? {} : { cause }),
  });
}

/** True for the error of `unresolvedHostError` (also one made by another copy of this package). */
export function isUnresolvedHost(error: unknown): error is PlatformError {
  return isPlatformError(error) && error.details?.reason === REASON;
}

/**
 * The same failure naming what could not be reached first, `<subject>: host name 'x' does not
 * resolve`, with the same code, details and retryability (for messages that name the server).
 */
export function unreachableAs(subject: string, error: PlatformError): PlatformError {
  return new PlatformError(error.code, `${subject}: ${error.message}`, {
    ...(error.details ? { details: { ...error.details } } : {}),
    retryable: error.retryable,
    cause: error,
  });
}
