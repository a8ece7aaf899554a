import type { Localized } from '../i18n/language.js';

export interface ErrorEntry extends Localized {
  readonly status: number;
}

/**
 * Every error the services answer with, in one place. `docs/errors.md` documents each code (a test
 * checks it). Gateway codes render as the spec 2.1 envelope in the caller's language; LOGS_* codes
 * render as `{"error": en}` with exactly the messages of spec 7.2.
 */
export const ERRORS = {
  // Request shape (gateway)
  INVALID_JSON: { status: 400, id: 'Body JSON tidak valid', en: 'Invalid JSON body' },
  VALIDATION_FAILED: { status: 400, id: 'Data tidak valid: {detail}', en: 'Invalid input: {detail}' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, id: 'Content-Type tidak didukung', en: 'Unsupported Content-Type' },
  BODY_TOO_LARGE: { status: 413, id: 'Body permintaan terlalu besar', en: 'Request body too large' },
  MALFORMED_REQUEST: { status: 400, id: 'Permintaan HTTP tidak valid', en: 'Malformed HTTP request' },
  HEADERS_TOO_LARGE: { status: 431, id: 'Header permintaan terlalu besar', en: 'Request headers too large' },
  REQUEST_TIMEOUT: { status: 408, id: 'Permintaan tidak diterima utuh tepat waktu', en: 'Request not received in time' },
  ROUTE_NOT_FOUND: { status: 404, id: 'Sumber daya tidak ditemukan', en: 'Resource not found' },
  METHOD_NOT_ALLOWED: { status: 405, id: 'Metode tidak diizinkan', en: 'Method not allowed' },
  INTERNAL: { status: 500, id: 'Terjadi kesalahan pada server', en: 'Internal server error' },

  // Authentication (gateway)
  TOKEN_MISSING: { status: 401, id: 'Token otorisasi diperlukan', en: 'Authorization token required' },
  TOKEN_INVALID: { status: 401, id: 'Token tidak valid atau kedaluwarsa', en: 'Invalid or expired token' },
  INVALID_CREDENTIALS: { status: 401, id: 'Nomor pegawai atau kata sandi salah', en: 'Wrong employee number or password' },
  PASSWORD_EXPIRED: {
    status: 401,
    id: 'Kata sandi telah kedaluwarsa, silakan ganti kata sandi',
    en: 'Password has expired, please change it',
  },
  TOO_MANY_ATTEMPTS: {
    status: 429,
    id: 'Terlalu banyak percobaan, coba lagi dalam {seconds} detik',
    en: 'Too many attempts, try again in {seconds} seconds',
  },
  FORBIDDEN: { status: 403, id: 'Anda tidak memiliki akses', en: 'You do not have access' },
  CSRF_REJECTED: { status: 403, id: 'Permintaan lintas situs ditolak', en: 'Cross-site request rejected' },

  // Second factor and sessions (gateway)
  MFA_REQUIRED: { status: 401, id: 'Masukkan kode autentikasi dua faktor', en: 'Enter your two-factor authentication code' },
  MFA_ENROLMENT_REQUIRED: {
    status: 401,
    id: 'Akun ini wajib mendaftarkan autentikasi dua faktor sebelum login',
    en: 'This account must enrol a second factor before signing in',
  },
  MFA_CHALLENGE_INVALID: {
    status: 401,
    id: 'Sesi verifikasi tidak valid atau kedaluwarsa, silakan login kembali',
    en: 'The sign-in challenge is invalid or expired: sign in again',
  },
  MFA_CODE_INVALID: { status: 401, id: 'Kode autentikasi salah', en: 'Wrong authentication code' },
  MFA_CODE_WRONG: {
    status: 400,
    id: 'Kode autentikasi salah atau sudah digunakan',
    en: 'The authentication code is wrong or already used',
  },
  MFA_ALREADY_ENROLLED: {
    status: 409,
    id: 'Autentikasi dua faktor sudah aktif; hapus dahulu untuk mendaftar ulang',
    en: 'A second factor is already enrolled: remove it before enrolling again',
  },
  MFA_ENROLMENT_NOT_STARTED: {
    status: 400,
    id: 'Belum ada pendaftaran autentikasi dua faktor yang menunggu konfirmasi',
    en: 'No second-factor enrolment is waiting for confirmation',
  },
  MFA_NOT_ENROLLED: { status: 404, id: 'Autentikasi dua faktor belum aktif', en: 'No second factor is enrolled' },
  SESSION_NOT_FOUND: { status: 404, id: 'Sesi tidak ditemukan', en: 'Session not found' },

  // Passwords (gateway)
  PASSWORD_TOO_SHORT: { status: 400, id: 'Kata sandi minimal 8 karakter', en: 'Password must be at least 8 characters' },
  PASSWORD_TOO_LONG: { status: 400, id: 'Kata sandi maksimal 128 karakter', en: 'Password must be at most 128 characters' },
  PASSWORD_NEEDS_LOWERCASE: {
    status: 400,
    id: 'Kata sandi harus memiliki minimal 1 huruf kecil',
    en: 'Password must contain at least 1 lowercase letter',
  },
  PASSWORD_NEEDS_UPPERCASE: {
    status: 400,
    id: 'Kata sandi harus memiliki minimal 1 huruf besar',
    en: 'Password must contain at least 1 uppercase letter',
  },
  PASSWORD_NEEDS_DIGIT: { status: 400, id: 'Kata sandi harus memiliki minimal 1 angka', en: 'Password must contain at least 1 digit' },
  PASSWORD_NEEDS_SPECIAL: {
    status: 400,
    id: 'Kata sandi harus memiliki minimal 1 karakter khusus',
    en: 'Password must contain at least 1 special character',
  },
  PASSWORD_REUSED: {
    status: 400,
    id: 'Kata sandi baru tidak boleh sama dengan kata sandi lama',
    en: 'The new password must differ from the current one',
  },
  PASSWORD_CONFIRMATION_MISMATCH: { status: 400, id: 'Konfirmasi kata sandi tidak cocok', en: 'Password confirmation does not match' },
  OLD_PASSWORD_WRONG: { status: 400, id: 'Kata sandi lama salah', en: 'Current password is wrong' },

  // Users and access rights (gateway)
  USER_NOT_FOUND: { status: 404, id: 'Pengguna tidak ditemukan', en: 'User not found' },
  NO_PEGAWAI_TAKEN: { status: 400, id: 'Nomor pegawai sudah terdaftar', en: 'Employee number is already registered' },
  EMAIL_TAKEN: { status: 400, id: 'Email sudah terdaftar', en: 'E-mail is already registered' },
  HAK_AKSES_UNKNOWN: { status: 400, id: 'Hak akses tidak ditemukan', en: 'Unknown access right' },
  FILTER_INVALID: { status: 400, id: 'Filter tidak valid: {detail}', en: 'Invalid filter: {detail}' },
  SORT_INVALID: { status: 400, id: 'Urutan tidak valid: {detail}', en: 'Invalid sort: {detail}' },
  CANNOT_DELETE_SELF: { status: 400, id: 'Anda tidak dapat menghapus akun Anda sendiri', en: 'You cannot delete your own account' },
  LAST_ADMIN: {
    status: 400,
    id: 'Administrator terakhir tidak dapat dihapus atau diturunkan',
    en: 'The last administrator cannot be removed or demoted',
  },

  // SSO login (gateway, area B). Every refusal is 401 and names its reason.
  SSO_NOT_CONFIGURED: { status: 503, id: 'Login SSO belum dikonfigurasi', en: 'SSO login is not configured' },
  SSO_PROVIDER_UNAVAILABLE: { status: 503, id: 'Penyedia identitas tidak dapat dihubungi', en: 'The identity provider cannot be reached' },
  SSO_TOKEN_MALFORMED: { status: 401, id: 'ID token SSO tidak berbentuk JWT yang valid', en: 'The SSO ID token is not a well-formed JWT' },
  SSO_ALGORITHM_REFUSED: {
    status: 401,
    id: 'Algoritma tanda tangan ID token tidak diizinkan',
    en: 'The ID token signing algorithm is not allowed',
  },
  SSO_SIGNATURE_INVALID: {
    status: 401,
    id: 'Tanda tangan ID token tidak valid untuk kunci penyedia identitas',
    en: 'The ID token signature does not match the identity provider keys',
  },
  SSO_ISSUER_MISMATCH: { status: 401, id: 'Penerbit ID token tidak dipercaya', en: 'The ID token issuer is not trusted' },
  SSO_AUDIENCE_MISMATCH: {
    status: 401,
    id: 'ID token tidak ditujukan untuk aplikasi ini',
    en: 'The ID token was not issued for this application',
  },
  SSO_TOKEN_EXPIRED: { status: 401, id: 'ID token telah kedaluwarsa', en: 'The ID token has expired' },
  SSO_TOKEN_TOO_OLD: {
    status: 401,
    id: 'ID token terlalu lama atau waktu terbitnya tidak valid, silakan login ulang',
    en: 'The ID token is too old or its issue time is invalid, please sign in again',
  },
  SSO_CLAIMS_INVALID: {
    status: 401,
    id: 'Klaim ID token tidak lengkap atau tidak valid',
    en: 'The ID token claims are missing or invalid',
  },
  SSO_AT_HASH_MISMATCH: {
    status: 401,
    id: 'Access token tidak cocok dengan ID token (at_hash)',
    en: 'The access token does not match the ID token (at_hash)',
  },
  SSO_NONCE_MISMATCH: {
    status: 401,
    id: 'Nonce ID token tidak cocok dengan nonce sesi ini',
    en: 'The ID token nonce does not match this session nonce',
  },
  SSO_AUTH_CONTEXT_REFUSED: {
    status: 401,
    id: 'Cara login di penyedia identitas tidak memenuhi syarat (acr/amr)',
    en: 'The sign-in at the identity provider does not meet the required authentication context (acr/amr)',
  },
  SSO_TOKEN_REPLAYED: { status: 401, id: 'ID token sudah pernah digunakan', en: 'The ID token has already been used' },
  SSO_PROFILE_MISMATCH: { status: 401, id: 'Profil tidak sesuai dengan ID token', en: 'The profile does not match the ID token' },
  SSO_EMAIL_MISSING: { status: 401, id: 'ID token tidak memuat email', en: 'The ID token carries no e-mail' },
  SSO_EMAIL_UNVERIFIED: {
    status: 401,
    id: 'Email belum diverifikasi oleh penyedia identitas',
    en: 'The e-mail is not verified by the identity provider',
  },
  SSO_ACCOUNT_CONFLICT: {
    status: 401,
    id: 'Akun tidak dapat ditautkan: data akun bertentangan dengan identitas SSO',
    en: 'The account cannot be linked: existing account data conflicts with the SSO identity',
  },
  // Proxied services (gateway, spec 4.4 and 7.1); messages name the service, never an address
  // The gateway's database cannot be written or reached for now (disk full, read-only, server down): retry after Retry-After.
  STORAGE_UNAVAILABLE: {
    status: 503,
    id: 'Penyimpanan data sedang tidak tersedia, coba lagi nanti',
    en: 'Data storage is unavailable for now: retry later',
  },
  SERVICE_NOT_CONFIGURED: { status: 503, id: 'Layanan {service} belum dikonfigurasi', en: 'The {service} service is not configured' },
  UPSTREAM_UNREACHABLE: { status: 502, id: 'Layanan {service} tidak dapat dihubungi', en: 'The {service} service cannot be reached' },
  UPSTREAM_TIMEOUT: { status: 504, id: 'Layanan {service} tidak menjawab tepat waktu', en: 'The {service} service did not answer in time' },
  PATH_INVALID: { status: 400, id: 'Path permintaan tidak valid', en: 'Invalid request path' },
  METRICS_TOKEN_INVALID: { status: 401, id: 'Token metrik tidak valid', en: 'Invalid metrics token' },

  // Log-monitoring backend (spec 7.2: exact messages, no translation)
  LOGS_INVALID_BODY: { status: 400, id: 'invalid json body', en: 'invalid json body' },
  LOGS_MISSING_TOKEN: { status: 401, id: 'missing bearer token', en: 'missing bearer token' },
  LOGS_INVALID_TOKEN: { status: 401, id: 'invalid token', en: 'invalid token' },
  LOGS_INVALID_CREDENTIALS: { status: 401, id: 'invalid credentials', en: 'invalid credentials' },
  LOGS_PERMISSION_DENIED: { status: 403, id: 'permission denied', en: 'permission denied' },
  LOGS_NOT_FOUND: { status: 404, id: 'not found', en: 'not found' },
  LOGS_RATE_LIMITED: { status: 429, id: 'rate limit exceeded', en: 'rate limit exceeded' },
  LOGS_INTERNAL: { status: 500, id: 'internal server error', en: 'internal server error' },
  // Beyond spec 7.2 (ingestion): limits and formats the spec does not cover.
  LOGS_BODY_TOO_LARGE: { status: 413, id: 'request body too large', en: 'request body too large' },
  LOGS_UNSUPPORTED_MEDIA_TYPE: { status: 415, id: 'unsupported content type', en: 'unsupported content type' },
  LOGS_MALFORMED_REQUEST: { status: 400, id: 'malformed http request', en: 'malformed http request' },
  LOGS_HEADERS_TOO_LARGE: { status: 431, id: 'request headers too large', en: 'request headers too large' },
  LOGS_REQUEST_TIMEOUT: { status: 408, id: 'request not received in time', en: 'request not received in time' },
  LOGS_QUERY_TIMEOUT: {
    status: 503,
    id: 'query took too long: narrow the time range or the query',
    en: 'query took too long: narrow the time range or the query',
  },
  // The store cannot take writes for now (a full disk, read-only data, the database down): retry after Retry-After.
  LOGS_STORAGE_FULL: { status: 503, id: 'storage full: retry later', en: 'storage full: retry later' },
  LOGS_STORAGE_READ_ONLY: { status: 503, id: 'storage read-only: retry later', en: 'storage read-only: retry later' },
  LOGS_DATABASE_UNAVAILABLE: { status: 503, id: 'database unavailable: retry later', en: 'database unavailable: retry later' },
  LOGS_CLIENT_GONE: { status: 499, id: 'client closed the request', en: 'client closed the request' },
  LOGS_MIGRATING: { status: 503, id: 'migrations are running: retry later', en: 'migrations are running: retry later' },

  // Log-monitoring backend, Kubernetes views (beyond spec 7.2; same shape)
  LOGS_K8S_NOT_CONFIGURED: { status: 503, id: 'kubernetes not configured', en: 'kubernetes not configured' },
  LOGS_K8S_UNREACHABLE: { status: 502, id: 'kubernetes api unreachable', en: 'kubernetes api unreachable' },
  LOGS_K8S_API_ERROR: { status: 502, id: 'kubernetes api error', en: 'kubernetes api error' },
  LOGS_K8S_INVALID_SELECTOR: { status: 400, id: 'invalid label selector', en: 'invalid label selector' },
  LOGS_K8S_CONTINUE_EXPIRED: { status: 410, id: 'continue token expired', en: 'continue token expired' },
  // Alerts (docs/alerts.md)
  LOGS_ALERT_INVALID_TRANSITION: { status: 409, id: 'invalid status transition', en: 'invalid status transition' },
  // Second factor (docs/logs-api.md "Second factor"): the body's `mfa` says what to send next.
  LOGS_MFA_REQUIRED: { status: 401, id: 'second factor required', en: 'second factor required' },
  LOGS_MFA_ENROLMENT_REQUIRED: { status: 401, id: 'second factor enrolment required', en: 'second factor enrolment required' },
  LOGS_MFA_ALREADY_ENROLLED: { status: 409, id: 'second factor already enrolled', en: 'second factor already enrolled' },
  LOGS_MFA_NOT_ENROLLED: { status: 409, id: 'no second factor enrolled', en: 'no second factor enrolled' },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERRORS;
