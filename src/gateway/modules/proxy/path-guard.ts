/**
 * The part of a request path below a service's base path, refused when it could leave that base
 * path once some server decodes it: dot segments, backslashes, empty segments or NUL, raw or
 * percent-encoded (also double-encoded, `%252e`), and malformed escapes. We refuse rather than
 * normalise: a client that sends such a path is broken or probing, and refusing leaves no doubt
 * about what reaches the upstream (the path goes there byte for byte as sent).
 */
export function pathBelowBase(rawPath: string, basePath: string): string | undefined {
  if (!rawPath.startsWith(basePath)) return undefined;
  const rest = rawPath.slice(basePath.length);
  if (rest !== '' && rest[0] !== '/') return undefined;
  return isSafePath(rest) ? rest : undefined;
}

const UNSAFE = /\\|\/\/|\0|(^|\/)\.{1,2}(\/|$)/;
/** Fast path: most paths have no escapes and no dots next to a slash. */
const PLAIN = /^[A-Za-z0-9\-_~/!$&'()*+,;=:@]*$/;

export function isSafePath(path: string): boolean {
  if (PLAIN.test(path)) return !path.includes('//');
  let current = path;
  // Four rounds cover any realistic multiple encoding; more is refused.
  for (let round = 0; round < 4; round += 1) {
    if (UNSAFE.test(current)) return false;
    if (!current.includes('%')) return true;
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      return false;
    }
    if (decoded === current) return true;
    current = decoded;
  }
  return false;
}
