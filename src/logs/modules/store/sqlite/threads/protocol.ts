/** Messages between the read pool and its workers. */
export interface ReadJobMessage {
  id: number;
  sql: string;
  parameters: readonly unknown[];
}

export type ReadReplyMessage =
  | { id: number; rows: unknown[]; error?: undefined }
  | { id: number; rows?: undefined; error: { name: string; message: string; code?: string | undefined } };
