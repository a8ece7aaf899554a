import type { Migration } from 'kysely';

// Placeholder until the log store branch is merged: it replaces this file.
export const logStoreMigrations: Record<string, Migration> = {};
