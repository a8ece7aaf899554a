import type {
  AggregateRequest,
  AggregateRow,
  AppendOptions,
  AppendResult,
  NumericValuesRequest,
  DistinctRequest,
  FieldInfo,
  FieldStats,
  FieldStatsRequest,
  GroupCount,
  GroupCountsRequest,
  HistogramBucket,
  HistogramRequest,
  LogEntry,
  LogStore,
  SearchRequest,
  SearchResult,
  TopMessage,
  TopMessagesRequest,
} from './log-store.js';
import { withBudget } from './read-budget.js';

/**
 * Every read of the store (search, histogram, fields, distinct, the dashboards' top messages and
 * group counts) gets the same time budget, whoever calls it (search routes, dashboards, alert rules): past it the caller gets QueryTimeoutError
 * (503 LOGS_QUERY_TIMEOUT). Writes are not bounded here: a batch is committed whole or not at all.
 */
export class BudgetedLogStore implements LogStore {
  constructor(
    private readonly inner: LogStore,
    private readonly timeoutMs: number,
  ) {}

  append(tenantId: string, entries: readonly LogEntry[], options?: AppendOptions): Promise<AppendResult> {
    return this.inner.append(tenantId, entries, options);
  }

  search(request: SearchRequest): Promise<SearchResult> {
    return withBudget(this.timeoutMs, () => this.inner.search(request));
  }

  histogram(request: HistogramRequest): Promise<HistogramBucket[]> {
    return withBudget(this.timeoutMs, () => this.inner.histogram(request));
  }

  fields(tenantId: string): Promise<FieldInfo[]> {
    return withBudget(this.timeoutMs, () => this.inner.fields(tenantId));
  }

  distinct(request: DistinctRequest): Promise<{ value: string; count: number }[]> {
    return withBudget(this.timeoutMs, () => this.inner.distinct(request));
  }

  fieldStats(request: FieldStatsRequest): Promise<FieldStats> {
    return withBudget(this.timeoutMs, () => this.inner.fieldStats(request));
  }

  topMessages(request: TopMessagesRequest): Promise<TopMessage[]> {
    return withBudget(this.timeoutMs, () => this.inner.topMessages(request));
  }

  groupCounts(request: GroupCountsRequest): Promise<GroupCount[]> {
    return withBudget(this.timeoutMs, () => this.inner.groupCounts(request));
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  aggregate(request: AggregateRequest): Promise<AggregateRow[]> {
    return withBudget(this.timeoutMs, () => this.inner.aggregate(request));
  }

  numericValues(request: NumericValuesRequest): Promise<{ keys: (number | string | null)[]; value: number }[]> {
    return withBudget(this.timeoutMs, () => this.inner.numericValues(request));
  }

  removeOlderThan(tenantId: string, before: number): Promise<number> {
    return this.inner.removeOlderThan(tenantId, before);
  }

  forgetDocumentIds(now: number): Promise<number> {
    return this.inner.forgetDocumentIds(now);
  }
}
