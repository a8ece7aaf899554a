/** The console's words in English and Indonesian; the choice is kept in localStorage. */
const texts = {
  en: {
    title: 'Gerbang console',
    user: 'Username',
    pass: 'Password',
    signIn: 'Sign in',
    signOut: 'Sign out',
    search: 'Search',
    query: 'Query',
    range: 'Time range',
    from: 'From',
    to: 'To',
    custom: 'Custom',
    none: 'No entries',
    total: 'entries',
    page: 'Page',
    of: 'of',
    previous: 'Previous',
    next: 'Next',
    live: 'Live',
    fields: 'Fields',
    explore: 'Explore',
    alerts: 'Alerts',
    rules: 'Rules',
    audit: 'Audit',
    admin: 'Administration',
    users: 'Users',
    roles: 'Roles',
    tenants: 'Tenants',
    notAllowed: 'You do not have the permission for this page.',
    exportCsv: 'Export CSV',
    exportXlsx: 'Export Excel',
    histogram: 'Entries over time (drag to zoom)',
    language: 'Bahasa Indonesia',
    details: 'Entry details',
  },
  id: {
    title: 'Konsol Gerbang',
    user: 'Nama pengguna',
    pass: 'Kata sandi',
    signIn: 'Masuk',
    signOut: 'Keluar',
    search: 'Cari',
    query: 'Kueri',
    range: 'Rentang waktu',
    from: 'Dari',
    to: 'Sampai',
    custom: 'Khusus',
    none: 'Tidak ada entri',
    total: 'entri',
    page: 'Halaman',
    of: 'dari',
    previous: 'Sebelumnya',
    next: 'Berikutnya',
    live: 'Langsung',
    fields: 'Kolom',
    explore: 'Jelajah',
    alerts: 'Peringatan',
    rules: 'Aturan',
    audit: 'Audit',
    admin: 'Administrasi',
    users: 'Pengguna',
    roles: 'Peran',
    tenants: 'Tenan',
    notAllowed: 'Anda tidak memiliki izin untuk halaman ini.',
    exportCsv: 'Ekspor CSV',
    exportXlsx: 'Ekspor Excel',
    histogram: 'Entri menurut waktu (seret untuk memperbesar)',
    language: 'English',
    details: 'Rincian entri',
  },
};

export type Language = keyof typeof texts;
export type Texts = (typeof texts)['en'];

export function language(): Language {
  return (localStorage.getItem('gerbang.lang') ?? navigator.language).startsWith('id') ? 'id' : 'en';
}

export function words(): Texts {
  return texts[language()];
}

export function toggleLanguage(): void {
  localStorage.setItem('gerbang.lang', language() === 'id' ? 'en' : 'id');
}
