import { Type } from 'typebox';
import { SearchFields } from '../search/search.schemas.js';

export const PatternsBody = Type.Object({
  ...SearchFields,
  sample: Type.Optional(
    Type.Integer({
      minimum: 100,
      maximum: 20_000,
      description: 'At most this many entries are grouped (default 5,000), spread over the range in proportion to its volume',
    }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Patterns returned, most frequent first (default 50)' })),
});

export const Pattern = Type.Object({
  pattern: Type.String({ description: 'The message with its variable parts as <*>' }),
  count: Type.Integer({ description: 'Entries of the sample in this pattern' }),
  estimated_count: Type.Integer({ description: 'count scaled to the whole range (equal to count when not sampled)' }),
  share: Type.Number({ description: 'count / sample size (0–1)' }),
  query: Type.String({ description: "A search for the pattern's entries: its constant parts as phrases, within the request's query" }),
  example: Type.Object({ id: Type.String(), '@timestamp': Type.String(), message: Type.String() }),
});

export const PatternsResponse = Type.Object({
  patterns: Type.Array(Pattern),
  total: Type.Integer({ description: 'Entries matching the search in the range' }),
  sampled: Type.Boolean({ description: 'true when fewer entries than total were grouped' }),
  sample_size: Type.Integer({ description: 'Entries grouped' }),
  clusters: Type.Integer({ description: 'Patterns found in the sample (limit cuts the list, not this)' }),
  method: Type.Literal('drain'),
});
