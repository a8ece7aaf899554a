/** One operation of spec 4.4: the docs fallback when a service publishes no description. */
export interface ServiceOperation {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Relative to the service's base path, `:id` style. */
  readonly path: string;
  readonly summary: string;
  readonly query?: Readonly<Record<string, 'integer' | 'string'>>;
  readonly body?: { readonly type: 'json' | 'multipart'; readonly fields: Readonly<Record<string, 'string' | 'date' | 'binary'>> };
}

export interface ServiceDefinition {
  /** URL segment and metric label. */
  readonly key: string;
  readonly name: string;
  /** Spec 4.4 base path, without the trailing slash. */
  readonly basePath: string;
  /** Environment variable holding the upstream address; `<env>_TIMEOUT` etc. tune it. */
  readonly env: string;
  readonly operations: readonly ServiceOperation[];
}

const get = (path: string, summary: string, query?: Record<string, 'integer' | 'string'>): ServiceOperation => ({
  method: 'GET',
  path,
  summary,
  ...(query ? { query } : {}),
});
const op = (method: ServiceOperation['method'], path: string, summary: string, body?: ServiceOperation['body']): ServiceOperation => ({
  method,
  path,
  summary,
  ...(body ? { body } : {}),
});

/** The eight services of spec 4.4: used for routing, configuration and the docs fallback. */
export const SERVICES: readonly ServiceDefinition[] = [
  {
    key: 'master-data',
    name: 'Master Data',
    basePath: '/api/v1/master-data',
    env: 'SERVER_SERVICE_MASTER_DATA',
    operations: [
      get('/provinsi', 'list provinces'),
      get('/kabupaten-kota', 'list regencies and cities'),
      get('/kecamatan', 'list districts'),
      get('/kelurahan', 'list villages'),
      get('/satuan-kerja', 'list work units'),
      get('/jabatan', 'list positions'),
    ],
  },
  {
    key: 'kepegawaian',
    name: 'Kepegawaian',
    basePath: '/api/v1/kepegawaian',
    env: 'SERVER_SERVICE_KEPEGAWAIAN',
    operations: [
      get('/pegawai', 'list employees'),
      get('/pegawai/:id', 'employee detail'),
      op('POST', '/pegawai', 'add employee'),
      op('PUT', '/pegawai/:id', 'update employee'),
      op('DELETE', '/pegawai/:id', 'delete employee'),
      get('/riwayat-jabatan', 'position history'),
      get('/riwayat-pendidikan', 'education history'),
    ],
  },
  {
    key: 'keuangan',
    name: 'Keuangan',
    basePath: '/api/v1/keuangan',
    env: 'SERVER_SERVICE_KEUANGAN',
    operations: [
      get('/gaji', 'salary data'),
      get('/tunjangan', 'allowance data'),
      get('/potongan', 'deduction data'),
      get('/slip-gaji', 'pay slip', { bulan: 'integer', tahun: 'integer' }),
    ],
  },
  {
    key: 'perizinan',
    name: 'Perizinan',
    basePath: '/api/v1/perizinan',
    env: 'SERVER_SERVICE_PERIZINAN',
    operations: [
      get('/cuti', 'list leave'),
      op('POST', '/cuti', 'request leave', {
        type: 'json',
        fields: { tanggal_mulai: 'date', tanggal_selesai: 'date', jenis_cuti: 'string', keterangan: 'string' },
      }),
      op('PUT', '/cuti/:id', 'update leave'),
      get('/izin', 'list permits'),
      op('POST', '/izin', 'request permit'),
    ],
  },
  {
    key: 'pelaporan',
    name: 'Pelaporan',
    basePath: '/api/v1/pelaporan',
    env: 'SERVER_SERVICE_PELAPORAN',
    operations: [
      get('/laporan', 'list reports'),
      op('POST', '/laporan', 'create report'),
      get('/laporan/:id', 'report detail'),
      get('/statistik', 'statistics', { tahun: 'integer' }),
    ],
  },
  {
    key: 'tramtibum',
    name: 'Tramtibum',
    basePath: '/api/v1/tramtibum',
    env: 'SERVER_SERVICE_TRAMTIBUM',
    operations: [
      get('/kegiatan', 'list activities'),
      op('POST', '/kegiatan', 'create activity'),
      get('/kegiatan/:id', 'activity detail'),
      get('/penindakan', 'list enforcement actions'),
    ],
  },
  {
    key: 'file',
    name: 'File',
    basePath: '/api/v1/file',
    env: 'SERVER_SERVICE_FILE',
    operations: [
      op('POST', '/upload', 'upload', { type: 'multipart', fields: { file: 'binary', folder: 'string' } }),
      get('/:id', 'download file (binary)'),
      op('DELETE', '/:id', 'delete file'),
    ],
  },
  {
    key: 'notification',
    name: 'Notification',
    basePath: '/api/v1/notification',
    env: 'SERVER_SERVICE_NOTIFICATION',
    operations: [
      get('/', 'list notifications', { status: 'string' }),
      get('/unread-count', 'unread count'),
      get('/:id', 'notification detail'),
      op('PUT', '/:id/read', 'mark as read'),
      op('DELETE', '/:id', 'delete notification'),
    ],
  },
];

/** The service whose base path a request URL is under (the base path itself, or below it), if any. */
export function serviceOf(url: string): ServiceDefinition | undefined {
  if (!url.startsWith('/api/v1/')) return undefined;
  for (const service of SERVICES) {
    if (url.startsWith(service.basePath)) {
      const next = url.charCodeAt(service.basePath.length);
      if (Number.isNaN(next) || next === 47 /* / */ || next === 63 /* ? */) return service;
    }
  }
  return undefined;
}
