/**
 * The Standard Schema v1 and Standard JSON Schema interfaces, copied as their authors intend
 * (https://standardschema.dev) so that zod, valibot and arktype validators work without a dependency.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>
}

export declare namespace StandardSchemaV1 {
  export interface Props<Input = unknown, Output = Input> {
    readonly version: 1
    readonly vendor: string
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>
    readonly types?: Types<Input, Output> | undefined
    readonly jsonSchema?: JsonSchemaConverter | undefined
  }
  export type Result<Output> = SuccessResult<Output> | FailureResult
  export interface SuccessResult<Output> {
    readonly value: Output
    readonly issues?: undefined
  }
  export interface FailureResult {
    readonly issues: ReadonlyArray<Issue>
  }
  export interface Issue {
    readonly message: string
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined
  }
  export interface PathSegment {
    readonly key: PropertyKey
  }
  export interface Types<Input = unknown, Output = Input> {
    readonly input: Input
    readonly output: Output
  }
  /** The Standard JSON Schema extension (zod 4 implements it). */
  export interface JsonSchemaConverter {
    readonly input?: (options: { readonly target: string }) => Record<string, unknown>
    readonly output?: (options: { readonly target: string }) => Record<string, unknown>
  }
  export type InferInput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['input']
  export type InferOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output']
}
