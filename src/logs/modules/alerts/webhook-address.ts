import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where a webhook may connect. By default nothing inside the host or its networks: the address
 * ranges below are refused, for IP literals when a rule is saved and for every resolved address
 * when a delivery connects (so a name that later resolves to 127.0.0.1 — DNS rebinding — gets
 * nowhere). IPv4-mapped IPv6 (`::ffff:169.254.169.254`) matches the IPv4 ranges (node's BlockList),
 * and the WHATWG URL parser has already turned `2852039166` or `0x7f.1` into dotted IPv4.
 */
const RANGES: readonly [kind: string, network: string, prefix: number, family: 'ipv4' | 'ipv6'][] = [
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['shared (CGNAT)', '100.64.0.0', 10, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['benchmarking', '198.18.0.0', 15, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  // `::` and `::1`, and the deprecated IPv4-compatible form `::a.b.c.d`.
  ['unspecified or loopback', '::', 96, 'ipv6'],
  ['NAT64 local-use', '64:ff9b:1::', 48, 'ipv6'],
  ['unique-local', 'fc00::', 7, 'ipv6'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['site-local', 'fec0::', 10, 'ipv6'],
  ['multicast', 'ff00::', 8, 'ipv6'],
];
const BLOCKED = RANGES.map(([kind, network, prefix, family]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { kind, list };
});

/** The address in a URL host (`[::1]` -> `::1`), or undefined for a name. */
export function literalAddress(hostname: string): string | undefined {
  const host = hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? host : undefined;
}

const familyOf = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/** `localhost` and its subdomains always mean the host itself (RFC 6761), whatever a resolver says. */
export function isLocalhostName(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return host === 'localhost' || host.endsWith('.localhost');
}

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail counts as two). */
function ipv6Groups(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const text = dotted
    ? `${address.slice(0, dotted.index)}${((+dotted[1]! << 8) | +dotted[2]!).toString(16)}:${((+dotted[3]! << 8) | +dotted[4]!).toString(16)}`
    : address;
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/**
 * IPv4 addresses an IPv6 address carries to a gateway that unwraps them: NAT64 (`64:ff9b::/96`,
 * RFC 6052), 6to4 (`2002::/16`, RFC 3056) and Teredo (`2001::/32`, RFC 4380: its server, and its
 * client with every bit inverted).
 */
function embeddedIPv4(address: string): { via: string; addresses: string[] } | undefined {
  const g = ipv6Groups(address);
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0)
    return { via: 'NAT64', addresses: [ipv4Of(g[6]!, g[7]!)] };
  if (g[0] === 0x2002) return { via: '6to4', addresses: [ipv4Of(g[1]!, g[2]!)] };
  if (g[0] === 0x2001 && g[1] === 0) return { via: 'Teredo', addresses: [ipv4Of(g[2]!, g[3]!), ipv4Of(g[6]! ^ 0xffff, g[7]! ^ 0xffff)] };
  return undefined;
}

/** The kind of internal range holding the address ('loopback', 'private', ...), or undefined for a public one. */
export function internalKind(address: string): string | undefined {
  const kind = BLOCKED.find(({ list }) => list.check(address, familyOf(address)))?.kind;
  if (kind !== undefined || familyOf(address) === 'ipv4') return kind;
  const embedded = embeddedIPv4(address);
  for (const inner of embedded?.addresses ?? []) {
    const innerKind = internalKind(inner);
    if (innerKind !== undefined) return `${innerKind} (in ${embedded!.via})`;
  }
  return undefined;
}

/**
 * LOGS_WEBHOOK_ALLOWED_HOSTS: host names (`hooks.slack.com`, `*.example.com`) restrict which hosts
 * rules may name; addresses and CIDRs (`127.0.0.1`, `10.20.0.0/16`, `fd00::/8`) are the only way to
 * open an internal address. A listed name never opens one: its resolved address is checked too.
 */
export class WebhookAllowList {
  readonly empty: boolean;
  private readonly names: string[] = [];
  private readonly addresses = new BlockList();

  constructor(entries: readonly string[]) {
    this.empty = entries.length === 0;
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      const [network, prefix, extra] = entry.split('/');
      const address = literalAddress(network!);
      if (address !== undefined) {
        const family = familyOf(address);
        const bits = prefix === undefined ? (family === 'ipv4' ? 32 : 128) : Number(prefix);
        if (
          extra !== undefined ||
          !Number.isInteger(bits) ||
          bits < 0 ||
          bits > (family === 'ipv4' ? 32 : 128) ||
          (prefix !== undefined && !/^\d+$/.test(prefix))
        ) {
          throw new Error(`"${raw}" is not an address or CIDR`);
        }
        this.addresses.addSubnet(address, bits, family);
      } else if (prefix !== undefined) {
        throw new Error(`"${raw}" is not an address or CIDR`);
      } else {
        this.names.push(entry);
      }
    }
  }

  /** May a rule name this URL host? Always, with an empty list. */
  allowsHost(hostname: string): boolean {
    if (this.empty) return true;
    const address = literalAddress(hostname);
    if (address !== undefined) return this.addresses.check(address, familyOf(address));
    const host = hostname.toLowerCase();
    return this.names.some((allowed) => (allowed.startsWith('*.') ? host.endsWith(allowed.slice(1)) : host === allowed));
  }

  /** Why a connection to this address is refused (its internal kind), or undefined. */
  addressProblem(address: string): string | undefined {
    const kind = internalKind(address);
    if (kind === undefined || this.addresses.check(address, familyOf(address))) return undefined;
    return kind;
  }

  /** A `lookup` for node:net that fails when any resolved address is refused (no mixed answers). */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 4);
      const refused = addresses.find((entry) => this.addressProblem(entry.address) !== undefined);
      if (refused || addresses.length === 0) {
        const blocked = Object.assign(
          new Error(`refused: ${hostname} resolves to a ${refused ? this.addressProblem(refused.address) : 'no'} address`),
          { code: 'EWEBHOOKBLOCKED' },
        );
        return callback(blocked, '', 4);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}
