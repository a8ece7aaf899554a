declare module 'swagger2openapi' {
  /** Converts a Swagger 2.0 object to OpenAPI 3.0 (`result.openapi`). */
  export function convertObj(swagger: object, options: Record<string, unknown>): Promise<{ openapi: Record<string, unknown> }>;
}
