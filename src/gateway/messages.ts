import type { Localized } from '../shared/i18n/language.js';

/** Success messages of the gateway, Indonesian by default, English on request. */
export const MESSAGES = {
  LOGIN_OK: { id: 'Login berhasil', en: 'Login successful' },
  LOGOUT_OK: { id: 'Logout berhasil', en: 'Logout successful' },
  PROFILE_OK: { id: 'Profil berhasil diambil', en: 'Profile retrieved' },
  PASSWORD_CHANGED: { id: 'Kata sandi berhasil diubah', en: 'Password changed' },
  TOKEN_REFRESHED: { id: 'Token berhasil diperbarui', en: 'Token refreshed' },
  USERS_LISTED: { id: 'Data pengguna berhasil diambil', en: 'Users retrieved' },
  USER_FOUND: { id: 'Data pengguna berhasil diambil', en: 'User retrieved' },
  USER_CREATED: { id: 'Pengguna berhasil dibuat', en: 'User created' },
  USER_UPDATED: { id: 'Pengguna berhasil diperbarui', en: 'User updated' },
  USER_DELETED: { id: 'Pengguna berhasil dihapus', en: 'User deleted' },
  PASSWORD_RESET: { id: 'Kata sandi berhasil direset', en: 'Password reset' },
  SSO_UNLINKED: { id: 'Tautan akun SSO berhasil dilepas', en: 'SSO identities unlinked' },
  HAK_AKSES_UPDATED: { id: 'Hak akses berhasil diperbarui', en: 'Access right updated' },
  MFA_STATUS: { id: 'Status autentikasi dua faktor berhasil diambil', en: 'Second-factor status retrieved' },
  MFA_ENROLMENT_STARTED: {
    id: 'Pindai kode QR atau masukkan kunci di aplikasi autentikator, lalu konfirmasi dengan kode pertama',
    en: 'Scan the QR code or type the key into an authenticator app, then confirm with its first code',
  },
  MFA_ENROLLED: {
    id: 'Autentikasi dua faktor aktif. Simpan kode pemulihan ini: tidak akan ditampilkan lagi',
    en: 'Second factor enrolled. Keep these recovery codes: they are not shown again',
  },
  MFA_RECOVERY_CODES: {
    id: 'Kode pemulihan baru dibuat; kode lama tidak berlaku. Simpan kode ini: tidak akan ditampilkan lagi',
    en: 'New recovery codes made; the old ones no longer work. Keep these: they are not shown again',
  },
  MFA_REMOVED: { id: 'Autentikasi dua faktor berhasil dihapus', en: 'Second factor removed' },
  SESSIONS_LISTED: { id: 'Data sesi berhasil diambil', en: 'Sessions retrieved' },
  SESSION_ENDED: { id: 'Sesi berhasil diakhiri', en: 'Session ended' },
  SESSIONS_ENDED: { id: 'Sesi berhasil diakhiri', en: 'Sessions ended' },
  HAK_AKSES_LISTED: { id: 'Data hak akses berhasil diambil', en: 'Access rights retrieved' },
} as const satisfies Record<string, Localized>;
