/** Where a request came from, as audit entries and login limits record it. */
export interface Client {
  ip: string;
  userAgent?: string | undefined;
  requestId?: string | undefined;
}
