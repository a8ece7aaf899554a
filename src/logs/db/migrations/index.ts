import { migrationSequence } from '../../../shared/db/migrator.js';
import * as m0001 from './0001_accounts.js';
import * as m0002 from './0002_log_store.js';
import * as m0003 from './0003_alerts.js';
import * as m0004 from './0004_apm_spans.js';
import * as m0005 from './0005_infra_metric_points.js';
import * as m0006 from './0006_dashboards.js';
import * as m0007 from './0007_ingest_role.js';
import * as m0008 from './0008_login_failures.js';
import * as m0009 from './0009_document_ids.js';
import * as m0010 from './0010_api_keys.js';
import * as m0011 from './0011_time_ordered_facets.js';
import * as m0012 from './0012_hourly_rollups.js';
import * as m0013 from './0013_retention_floors.js';
import * as m0014 from './0014_apm_span_adjusted_count.js';
import * as m0015 from './0015_postings.js';
import * as m0016 from './0016_postings_by_prefix.js';
import * as m0017 from './0017_no_word_index.js';
import * as m0018 from './0018_no_tsvector.js';
import * as m0019 from './0019_compact_rows.js';
import * as m0020 from './0020_phrase_pairs.js';
import * as m0021 from './0021_postgres_attribute_numbers.js';
import * as m0022 from './0022_postgres_blocks.js';
import * as m0023 from './0023_saved_searches.js';
import * as m0026 from './0026_mfa_totp.js';
import * as m0027 from './0027_session_details.js';
import * as m0028 from './0028_passkeys.js';
import * as m0029 from './0029_index_rollups.js';

/**
 * Every logs-service migration (docs/architecture.md, "Migrations"): one file each in this folder,
 * named `NNNN_words`, in the order they run. A new one takes the next number.
 */
export const logsMigrations = migrationSequence(
  {
    '0001_accounts': m0001,
    '0002_log_store': m0002,
    '0003_alerts': m0003,
    '0004_apm_spans': m0004,
    '0005_infra_metric_points': m0005,
    '0006_dashboards': m0006,
    '0007_ingest_role': m0007,
    '0008_login_failures': m0008,
    '0009_document_ids': m0009,
    '0010_api_keys': m0010,
    '0011_time_ordered_facets': m0011,
    '0012_hourly_rollups': m0012,
    '0013_retention_floors': m0013,
    '0014_apm_span_adjusted_count': m0014,
    '0015_postings': m0015,
    '0016_postings_by_prefix': m0016,
    '0017_no_word_index': m0017,
    '0018_no_tsvector': m0018,
    '0019_compact_rows': m0019,
    '0020_phrase_pairs': m0020,
    '0021_postgres_attribute_numbers': m0021,
    '0022_postgres_blocks': m0022,
    '0023_saved_searches': m0023,
    '0026_mfa_totp': m0026,
    '0027_session_details': m0027,
    '0028_passkeys': m0028,
    '0029_index_rollups': m0029,
  },
  // The names versions before this one recorded (numbered by ranges, run in name order): the order
  // above is the order the migrations were added in, so every such history is its first migrations
  // once renamed (docs/operations.md, "Upgrade and rollback").
  {
    '0100_log_store': '0002_log_store',
    '0200_alerts': '0003_alerts',
    '0300_apm_spans': '0004_apm_spans',
    '0301_infra_metric_points': '0005_infra_metric_points',
    '0400_dashboards': '0006_dashboards',
    '0500_ingest_role': '0007_ingest_role',
    '0600_login_failures': '0008_login_failures',
    '0110_document_ids': '0009_document_ids',
    '0700_api_keys': '0010_api_keys',
    '0120_time_ordered_facets': '0011_time_ordered_facets',
    '0130_hourly_rollups': '0012_hourly_rollups',
    '0140_retention_floors': '0013_retention_floors',
    '0310_apm_span_adjusted_count': '0014_apm_span_adjusted_count',
    '0150_postings': '0015_postings',
    '0160_postings_by_prefix': '0016_postings_by_prefix',
    '0170_no_word_index': '0017_no_word_index',
    '0180_no_tsvector': '0018_no_tsvector',
    '0190_compact_rows': '0019_compact_rows',
    '0200_phrase_pairs': '0020_phrase_pairs',
    '0210_postgres_attribute_numbers': '0021_postgres_attribute_numbers',
    '0220_postgres_blocks': '0022_postgres_blocks',
  },
);
